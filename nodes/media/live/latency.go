package live

import (
	"slices"
	"sync"
	"time"
)

// LatencyBuckets are the upper bounds, in seconds, of the end-to-end
// latency histogram /metrics exports (onair_live_latency_seconds).
var LatencyBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.5, 1, 2, 5}

// latencyWindow is how many of the latest readings p50 and p99 are of.
const latencyWindow = 1024

// Latency is a live source's end-to-end latency: for each stamped frame
// (its sender's send time), the time it went on air less the time it was
// sent. Both clocks are wall clocks: across hosts they must be
// synchronised (NTP, PTP), which is the user's to do; a reading below
// zero is not a latency but their difference, and is counted as clock
// skew, never reported. Safe for concurrent use.
type Latency struct {
	mu      sync.Mutex
	count   int64
	skew    int64
	sum     time.Duration
	max     time.Duration
	current time.Duration
	buckets []int64 // per LatencyBuckets bound, readings at most it (not cumulative)
	recent  []time.Duration
	next    int
}

// Observe records one frame's latency: on air at air, sent at sent.
func (l *Latency) Observe(sent, air time.Time) {
	d := air.Sub(sent)
	l.mu.Lock()
	defer l.mu.Unlock()
	if d < 0 {
		l.skew++
		return
	}
	if l.buckets == nil {
		l.buckets = make([]int64, len(LatencyBuckets)+1)
	}
	l.count++
	l.sum += d
	l.current = d
	l.max = max(l.max, d)
	i, _ := slices.BinarySearch(LatencyBuckets, d.Seconds())
	l.buckets[i]++
	if len(l.recent) < latencyWindow {
		l.recent = append(l.recent, d)
	} else {
		l.recent[l.next] = d
		l.next = (l.next + 1) % latencyWindow
	}
}

// LatencySnapshot is the latency's figures at one moment, in ms.
type LatencySnapshot struct {
	Frames    int64   `json:"frames"`
	CurrentMs float64 `json:"current_ms"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
	ClockSkew int64   `json:"clock_skew,omitempty"` // readings below zero: the two hosts' clocks differ
	// Buckets (per bound of LatencyBuckets, the readings at most it,
	// cumulative) and SumSeconds are the histogram /metrics exports.
	Buckets    []int64 `json:"-"`
	SumSeconds float64 `json:"-"`
}

// Snapshot is the latency now; nil when no stamped frame went on air.
func (l *Latency) Snapshot() *LatencySnapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == 0 && l.skew == 0 {
		return nil
	}
	s := &LatencySnapshot{Frames: l.count, CurrentMs: ms(l.current), MaxMs: ms(l.max), ClockSkew: l.skew,
		Buckets: make([]int64, len(LatencyBuckets)), SumSeconds: l.sum.Seconds()}
	var n int64
	for i := range LatencyBuckets {
		if l.buckets != nil {
			n += l.buckets[i]
		}
		s.Buckets[i] = n
	}
	if len(l.recent) > 0 {
		r := slices.Clone(l.recent)
		slices.Sort(r)
		s.P50Ms, s.P99Ms = ms(r[(len(r)-1)*50/100]), ms(r[(len(r)-1)*99/100])
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
