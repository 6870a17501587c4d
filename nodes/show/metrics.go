package show

import (
	"github.com/prometheus/client_golang/prometheus"
)

// TimingBuckets are the upper bounds, in seconds, of the tick timing
// histograms: fixed, so that shows at any frame rate can be compared and
// aggregated, from 1 ms to 100 ms, with a bound at each common frame period
// (60, 50, 30, 25 and 24 fps: 16.7, 20, 33.4, 40 and 41.8 ms).
var TimingBuckets = []float64{0.001, 0.002, 0.004, 0.006, 0.008, 0.010, 0.0125, 0.0167, 0.020, 0.025, 0.030, 0.0334, 0.040, 0.0418, 0.050, 0.067, 0.100}

// metrics are the histograms a show observes as it runs; the rest of its
// metrics are read from its counters at scrape time (Collect).
type metrics struct {
	timing    *prometheus.HistogramVec
	observers map[string]*[4]prometheus.Observer // bus → draw, queue, gpu_wait, hand_off
}

func newMetrics(buses map[string]*BusState) *metrics {
	m := &metrics{
		timing: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "onair_playout_timing_seconds",
			Help:    "Parts of each tick a bus draws: draw (from the tick's deadline to the outputs taking it), queue (from waking to drawing), gpu_wait (waiting for the picture), hand_off (handing it to the outputs).",
			Buckets: TimingBuckets,
		}, []string{"bus", "part"}),
		observers: map[string]*[4]prometheus.Observer{},
	}
	for a := range buses {
		var o [4]prometheus.Observer
		for i, part := range []string{"draw", "queue", "gpu_wait", "hand_off"} {
			o[i] = m.timing.WithLabelValues(a, part)
		}
		m.observers[a] = &o
	}
	return m
}

// observe records one tick of bus, in nanoseconds.
func (m *metrics) observe(bus string, draw, queue, gpuWait, handOff int64) {
	o := m.observers[bus]
	if o == nil {
		return
	}
	o[0].Observe(float64(draw) / 1e9)
	o[1].Observe(float64(queue) / 1e9)
	o[2].Observe(float64(gpuWait) / 1e9)
	o[3].Observe(float64(handOff) / 1e9)
}

// Collectors implements control.Collectors: the show's histograms.
func (s *Show[F]) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.State.metrics.timing}
}
