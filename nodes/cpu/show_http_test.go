package cpu

import (
	"encoding/json"
	"github.com/onairhq/onair/nodes/show"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/plan"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestStatusMetricsAndControlOverHTTP runs a show with its status server and
// drives it as an operator would: read the status, cut, read the metrics.
func TestStatusMetricsAndControlOverHTTP(t *testing.T) {
	p := compile(t, writeShow(t, twoSources), nil)
	pj, _ := plan.Marshal(p)
	s := startShowWith(t, p, pj)
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr()
	waitShow(t, s, "bus.pgm on air", ticksAtLeast("bus.pgm", 1))

	c := &control.Client{Addr: srv.Addr()}
	if err := c.Switch("bus.pgm", "scene.two", "fade", 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := c.Switch("pgm", "scene.nope", "cut", 0); err == nil || !strings.Contains(err.Error(), "scene.one, scene.two") {
		t.Errorf("a cut to an unknown scene: %v", err)
	}
	if err := c.Switch("nobus", "scene.two", "cut", 0); err == nil || !strings.Contains(err.Error(), "no bus") {
		t.Errorf("a cut on an unknown bus: %v", err)
	}
	// The fade lasts 6 ticks; then scene.two is on air.
	waitShow(t, s, "the fade to finish", func(sum show.Summary) bool { return busOf(sum, "bus.pgm").OnAir == "scene.two" })

	code, body := get(t, base+"/status")
	if code != 200 {
		t.Fatalf("/status %d: %s", code, body)
	}
	var st show.StatusReport
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/status is not JSON: %v", err)
	}
	if st.Show != "two" || len(st.Summary.Buses) != 1 || st.Summary.Buses[0].OnAir != "scene.two" || st.Summary.Buses[0].Ticks == 0 {
		t.Errorf("/status: %+v", st.Summary.Buses)
	}
	if len(st.Runtime.Loops) != 3 || len(st.Runtime.Edges) == 0 || st.Process.Threads == 0 {
		t.Errorf("/status runtime: %d loops, %d edges, %d threads", len(st.Runtime.Loops), len(st.Runtime.Edges), st.Process.Threads)
	}
	if _, ok := st.Timing["bus.pgm"]; !ok {
		t.Errorf("/status has no playout_timing for bus.pgm")
	}
	code, body = get(t, base+"/metrics")
	for _, want := range []string{`onair_bus_frames_total{bus="bus.pgm"}`, `onair_tick_seconds_bucket{bus="bus.pgm",le=`, `onair_source_up{source="source.one"} 1`, `onair_loop_wakeups_total{loop="pacing_0"}`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if code, body = get(t, base+"/plan"); code != 200 || !strings.Contains(body, `"format_version"`) {
		t.Errorf("/plan %d", code)
	}
	if code, _ = get(t, base+"/preview/pgm"); code != 404 {
		t.Errorf("/preview of a show without preview outputs: %d", code)
	}
}

// TestEdgesReportTheLastTimestamp: every edge that carried frames reports
// the last one's timestamp in the runtime status.
func TestEdgesReportTheLastTimestamp(t *testing.T) {
	s := startShow(t, compile(t, writeShow(t, twoSources), nil))
	waitShow(t, s, "ten ticks recorded", func(sum show.Summary) bool { return outputOf(sum, "output.pgm").Written >= 10 })
	st := s.Exec.Status()
	s.Stop()
	carried := 0
	for _, e := range st.Edges {
		if e.EnqueuedTotal > 0 {
			carried++
		}
		if e.EnqueuedTotal > 0 && e.LastTimestamp == 0 {
			t.Errorf("edge %s carried %d frames but reports no last timestamp", e.Name, e.EnqueuedTotal)
		}
	}
	if carried == 0 {
		t.Error("no edge carried a frame")
	}
}
