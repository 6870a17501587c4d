package runtime

// Histogram of nanosecond durations.
//
// Invariants:
//   - Bucket i holds values v with bits.Len64(v) == i: bucket 0 is 0 ns,
//     bucket i covers [2^(i-1), 2^i) ns. 64 buckets cover every int64.
//   - Record is lock-free (atomic adds) and may be called from any thread;
//     a Snapshot taken while records run may be off by the records in flight.

import (
	"math/bits"
	"sync/atomic"
)

// Histogram counts durations in power-of-two buckets.
type Histogram struct {
	buckets [65]atomic.Uint64
	count   atomic.Uint64
	sum     atomic.Int64
	max     atomic.Int64
}

// Record adds one duration in ns; negative values count as 0.
func (h *Histogram) Record(ns int64) {
	if ns < 0 {
		ns = 0
	}
	h.buckets[bits.Len64(uint64(ns))].Add(1)
	h.count.Add(1)
	h.sum.Add(ns)
	for {
		m := h.max.Load()
		if ns <= m || h.max.CompareAndSwap(m, ns) {
			return
		}
	}
}

// HistogramSnapshot is a histogram's state, ready for JSON. Quantiles are the
// upper bound of the bucket that holds them (at most 2x the true value).
type HistogramSnapshot struct {
	Count  uint64 `json:"count"`
	MeanNs int64  `json:"mean_ns"`
	P50Ns  int64  `json:"p50_ns"`
	P90Ns  int64  `json:"p90_ns"`
	P99Ns  int64  `json:"p99_ns"`
	MaxNs  int64  `json:"max_ns"`
	// Buckets[i] counts values in [2^(i-1), 2^i) ns; trailing zeros trimmed.
	Buckets []uint64 `json:"buckets,omitempty"`
}

// Snapshot reads the histogram.
func (h *Histogram) Snapshot() HistogramSnapshot {
	var s HistogramSnapshot
	var b [65]uint64
	last := -1
	for i := range b {
		b[i] = h.buckets[i].Load()
		s.Count += b[i]
		if b[i] != 0 {
			last = i
		}
	}
	s.Buckets = append([]uint64(nil), b[:last+1]...)
	if s.Count == 0 {
		return s
	}
	s.MeanNs = h.sum.Load() / int64(s.Count)
	s.MaxNs = h.max.Load()
	q := func(p float64) int64 {
		want := uint64(p*float64(s.Count) + 0.5)
		if want == 0 {
			want = 1
		}
		var seen uint64
		for i, c := range b {
			seen += c
			if seen >= want {
				if i == 0 {
					return 0
				}
				up := int64(1)<<uint(i) - 1
				if i >= 63 {
					up = 1<<63 - 1
				}
				if up > s.MaxNs {
					up = s.MaxNs
				}
				return up
			}
		}
		return s.MaxNs
	}
	s.P50Ns, s.P90Ns, s.P99Ns = q(0.50), q(0.90), q(0.99)
	return s
}
