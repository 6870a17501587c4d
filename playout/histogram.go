package playout

import "fmt"

// QuarterBuckets is the number of buckets of a Histogram: quarters of a
// frame period up to two periods, and one for everything longer.
const QuarterBuckets = 9

// Histogram counts durations in quarters of a frame period, the unit the
// seeds' playout.timing reported: bucket i holds durations in
// [i/4, (i+1)/4) periods, the last bucket two periods and more.
type Histogram struct {
	Buckets [QuarterBuckets]uint64
	Count   uint64
	SumNs   int64
	MaxNs   int64
}

// Observe adds a duration d for a bus whose frame period is period.
func (h *Histogram) Observe(d, period int64) {
	if d < 0 {
		d = 0
	}
	i := int(4 * d / period)
	if i >= QuarterBuckets {
		i = QuarterBuckets - 1
	}
	h.Buckets[i]++
	h.Count++
	h.SumNs += d
	h.MaxNs = max(h.MaxNs, d)
}

// Over returns how many observations took a whole period or longer.
func (h *Histogram) Over() uint64 {
	var n uint64
	for _, c := range h.Buckets[4:] {
		n += c
	}
	return n
}

// BucketLabel names bucket i as the status output shows it.
func BucketLabel(i int) string {
	if i == QuarterBuckets-1 {
		return ">=2"
	}
	return fmt.Sprintf("<%g", float64(i+1)/4)
}

// Timing is a bus's playout.timing: the whole tick, and one histogram per
// part of it; the parts of a tick add up to the whole (Wake + Queue +
// GPUWait + HandOff = Draw).
type Timing struct {
	Draw    Histogram // the whole tick: from its deadline to the hand-off done
	Wake    Histogram // from the deadline to the compositor waking to draw it
	Queue   Histogram // queueing the composite (on the CPU backend, the composite itself)
	GPUWait Histogram // waiting for the GPU to finish (0 on the CPU backend)
	HandOff Histogram // handing the frame to the outputs
}
