package cpu

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/onairhq/onair/control"
)

// TestMetricsPassPromlint: a running show's /metrics, with every bus,
// output, source, loop and edge, has no problem promlint knows of (names,
// units, suffixes, help), and has what Prometheus users expect: build
// info, the process and Go runtime collectors, and the tick timing as
// histograms in seconds with fixed buckets.
func TestMetricsPassPromlint(t *testing.T) {
	p := compile(t, writeShow(t, withAux), nil)
	s := startShow(t, p)
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0", Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr()
	waitSnapshot(t, base, "bus.pgm") // the bus has drawn: its histograms have counts
	code, body := get(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatalf("promlint cannot read /metrics: %v", err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	for _, want := range []string{
		`onair_build_info{goversion="go`, `version="1.2.3"} 1`,
		"process_cpu_seconds_total ", "process_open_fds ", "go_goroutines ",
		`onair_tick_seconds_bucket{bus="bus.pgm",le="0.001"}`,
		`onair_tick_seconds_bucket{bus="bus.pgm",le="0.0334"}`,
		`onair_tick_part_seconds_bucket{bus="bus.mon",part="hand_off",le="0.1"}`,
		`onair_tick_part_seconds_count{bus="bus.pgm",part="queue"}`,
		`onair_tick_part_seconds_count{bus="bus.pgm",part="wake"}`,
		`onair_output_hand_off_waits_total{kind="record",output="output.pgm"}`,
		`onair_edge_frames_queued{edge=`, `onair_bus_missed_deadlines_total{bus="bus.pgm"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "onair_playout_timing_seconds") {
		t.Error("/metrics still has onair_playout_timing_seconds (split into onair_tick_seconds and onair_tick_part_seconds)")
	}
	if strings.Contains(body, "onair_edge_occupied") {
		t.Error("/metrics still has onair_edge_occupied (renamed onair_edge_frames_queued)")
	}
}
