package show

import (
	"github.com/prometheus/client_golang/prometheus"
)

// TimingBuckets are the upper bounds, in seconds, of the tick timing
// histograms: fixed, so that shows at any frame rate can be compared and
// aggregated, from 1 ms to 100 ms, with a bound at each common frame period
// (60, 50, 30, 25 and 24 fps: 16.7, 20, 33.4, 40 and 41.8 ms).
var TimingBuckets = []float64{0.001, 0.002, 0.004, 0.006, 0.008, 0.010, 0.0125, 0.0167, 0.020, 0.025, 0.030, 0.0334, 0.040, 0.0418, 0.050, 0.067, 0.100}

// TickParts are the parts of a tick, in order, as onair_tick_part_seconds
// labels them: each tick observes every part once, and the parts of a tick
// add up to its onair_tick_seconds.
var TickParts = [4]string{"wake", "queue", "gpu_wait", "hand_off"}

// timings are the histograms a show observes as it runs; the rest of its
// metrics are read from its counters at scrape time (Collect).
type timings struct {
	tick      *prometheus.HistogramVec // the whole tick, per bus
	parts     *prometheus.HistogramVec // its parts, per bus and part
	observers map[string]*[1 + len(TickParts)]prometheus.Observer
}

func newMetrics(buses map[string]*BusState) *timings {
	m := &timings{
		tick: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "onair_tick_seconds",
			Help:    "Each tick a bus draws, from its deadline to its commit (every output took it, or the hand-off's limit passed): the sum of its parts in onair_tick_part_seconds.",
			Buckets: TimingBuckets,
		}, []string{"bus"}),
		parts: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "onair_tick_part_seconds",
			Help:    "Parts of each tick a bus draws, which add up to onair_tick_seconds: wake (from the deadline to the compositor waking), queue (queueing the composite; on the CPU backend the composite itself), gpu_wait (waiting for the picture), hand_off (handing it to the outputs).",
			Buckets: TimingBuckets,
		}, []string{"bus", "part"}),
		observers: map[string]*[1 + len(TickParts)]prometheus.Observer{},
	}
	for a := range buses {
		var o [1 + len(TickParts)]prometheus.Observer
		o[0] = m.tick.WithLabelValues(a)
		for i, part := range TickParts {
			o[1+i] = m.parts.WithLabelValues(a, part)
		}
		m.observers[a] = &o
	}
	return m
}

// observe records one tick of bus from the moments that divide it, in
// monotonic nanoseconds: its deadline, the compositor waking to draw it,
// the draw queued, the picture ready, and the commit.
func (m *timings) observe(bus string, deadline, woke, drawn, ready, committed int64) {
	o := m.observers[bus]
	if o == nil {
		return
	}
	s := func(d int64) float64 { return float64(max(d, 0)) / 1e9 }
	o[0].Observe(s(committed - deadline))
	o[1].Observe(s(woke - deadline))
	o[2].Observe(s(drawn - woke))
	o[3].Observe(s(ready - drawn))
	o[4].Observe(s(committed - ready))
}

// Collectors implements control.Collectors: the show's histograms.
func (s *Show[F]) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.State.metrics.tick, s.State.metrics.parts}
}
