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

// A show on two GPUs of one model has each GPU's gauges as a series of its
// own (labelled by device); a show on one keeps the GPU's name alone.
func TestGPUMetricsByDevice(t *testing.T) {
	two := GPUStatus{GPUReading: GPUReading{Name: "H200", DecoderPercent: 90}, GPUs: []GPUReading{
		{Device: 0, Name: "H200", DecoderPercent: 90},
		{Device: 1, Name: "H200", DecoderPercent: 40},
	}}
	got := map[string]float64{}
	two.collectGPUs(func(x metrics.Sample) {
		key := x.Name
		for _, l := range x.Labels {
			key += "{" + l[0] + "=" + l[1] + "}"
		}
		if _, dup := got[key]; dup {
			t.Errorf("%s emitted twice", key)
		}
		got[key] = x.Value
	})
	if got["onair_gpu_decoder_utilization_ratio{gpu=H200}{device=0}"] != 0.9 || got["onair_gpu_decoder_utilization_ratio{gpu=H200}{device=1}"] != 0.4 {
		t.Errorf("decoder gauges by device: %v", got)
	}
	if len(got) != 1+7*2 {
		t.Errorf("%d samples, want %d", len(got), 1+7*2)
	}
	one := GPUStatus{GPUReading: GPUReading{Name: "H200", DecoderPercent: 90}}
	n := 0
	one.collectGPUs(func(x metrics.Sample) {
		n++
		for _, l := range x.Labels {
			if l[0] == "device" {
				t.Errorf("%s labelled by device on a show of one GPU", x.Name)
			}
		}
	})
	if n != 1+7 {
		t.Errorf("%d samples on one GPU, want 8", n)
	}
}

// /metrics has the copies between GPUs by pair (from, to): copies, bytes
// and GPU time in seconds, as counters.
func TestPeerCopyMetrics(t *testing.T) {
	got := map[string]metrics.Sample{}
	collectPeers([]PeerCopyStatus{{From: 0, To: 1, Copies: 900, Bytes: 900 * 3110400, GPUNs: 45_000_000}, {From: 1, To: 0, Copies: 30}}, func(x metrics.Sample) {
		key := x.Name
		for _, l := range x.Labels {
			key += "{" + l[0] + "=" + l[1] + "}"
		}
		if _, dup := got[key]; dup {
			t.Errorf("%s emitted twice", key)
		}
		if x.Help == "" || x.Kind != metrics.Counter {
			t.Errorf("%s: kind %v, help %q", key, x.Kind, x.Help)
		}
		got[key] = x
	})
	for k, v := range map[string]float64{
		"onair_gpu_peer_copies_total{from=0}{to=1}":       900,
		"onair_gpu_peer_bytes_total{from=0}{to=1}":        900 * 3110400,
		"onair_gpu_peer_copy_seconds_total{from=0}{to=1}": 0.045,
		"onair_gpu_peer_copies_total{from=1}{to=0}":       30,
	} {
		if got[k].Value != v {
			t.Errorf("%s = %v, want %v", k, got[k].Value, v)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d samples, want 6", len(got))
	}
}
