package cuda_test

import (
	"testing"

	nodecuda "github.com/onairhq/onair/nodes/cuda"
)

// The device report sums its decode loops for onair bench: pictures of
// every loop, CPU of the loops that clocked it.
func TestDecodeCountersSumTheLoops(t *testing.T) {
	s := nodecuda.GPUStatus{DecodeLoops: []nodecuda.DecodeLoopStatus{
		{Loop: "decode_0", Pictures: 100, CPU: &nodecuda.DecodeCPU{Parse: 5000, Decode: 2000, Map: 700}},
		{Loop: "decode_1", Pictures: 50, CPU: &nodecuda.DecodeCPU{Parse: 1000, Copy: 300}},
		{Loop: "decode_2", Pictures: 25},
	}}
	got := s.DecodeCounters()
	want := map[string]int64{"pictures": 175, "parse_ns": 6000, "decode_ns": 2000, "map_ns": 700, "copy_ns": 300, "status_ns": 0, "unmap_ns": 0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (%v)", k, got[k], v, got)
		}
	}
	if (nodecuda.GPUStatus{}).DecodeCounters() != nil {
		t.Error("a report without decode loops counts something")
	}
}
