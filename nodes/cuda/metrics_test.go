package cuda

import (
	"testing"

	"github.com/onairhq/onair/metrics"
)

// /metrics has each decode loop's counters by loop (wall times in seconds)
// and what the recordings hold.
func TestDecodeMetrics(t *testing.T) {
	s := GPUStatus{RecordedFiles: 4, RecordedBytes: 41 << 20, DecodeLoops: []DecodeLoopStatus{
		{Loop: "decode_0", Pictures: 1200, Rounds: 400, FeedNs: 2_500_000_000, MapNs: 1_000_000_000, WaitNs: 250_000_000, UnmapNs: 50_000_000, Sleeps: 390, WakeWrites: 380},
		{Loop: "decode_1", Pictures: 900, Rounds: 300},
	}}
	got := map[string]metrics.Sample{}
	s.collectDecode(func(x metrics.Sample) {
		key := x.Name
		for _, l := range x.Labels {
			key += "{" + l[0] + "=" + l[1] + "}"
		}
		if _, dup := got[key]; dup {
			t.Errorf("%s emitted twice", key)
		}
		if x.Help == "" {
			t.Errorf("%s has no help", key)
		}
		got[key] = x
	})
	want := map[string]struct {
		kind  metrics.Kind
		value float64
	}{
		"onair_recorded_files":                            {metrics.Gauge, 4},
		"onair_recorded_bytes":                            {metrics.Gauge, 41 << 20},
		"onair_decode_pictures_total{loop=decode_0}":      {metrics.Counter, 1200},
		"onair_decode_rounds_total{loop=decode_0}":        {metrics.Counter, 400},
		"onair_decode_feed_seconds_total{loop=decode_0}":  {metrics.Counter, 2.5},
		"onair_decode_map_seconds_total{loop=decode_0}":   {metrics.Counter, 1},
		"onair_decode_wait_seconds_total{loop=decode_0}":  {metrics.Counter, 0.25},
		"onair_decode_unmap_seconds_total{loop=decode_0}": {metrics.Counter, 0.05},
		"onair_decode_sleeps_total{loop=decode_0}":        {metrics.Counter, 390},
		"onair_decode_wake_writes_total{loop=decode_0}":   {metrics.Counter, 380},
		"onair_decode_pictures_total{loop=decode_1}":      {metrics.Counter, 900},
		"onair_decode_rounds_total{loop=decode_1}":        {metrics.Counter, 300},
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("no %s", k)
			continue
		}
		if g.Kind != w.kind || g.Value != w.value {
			t.Errorf("%s: kind %v value %v, want %v %v", k, g.Kind, g.Value, w.kind, w.value)
		}
	}
	if len(got) != 2+8*2 {
		t.Errorf("%d samples, want %d", len(got), 2+8*2)
	}
}
