// Package metrics holds the metric samples a running show reports: the
// backends send them, control serves them as Prometheus text on GET
// /metrics. It is a ground package: it imports nothing of onair, so the
// backends report metrics without importing the HTTP server.
package metrics

// Kind says how Prometheus treats a sample.
type Kind int

const (
	Counter Kind = iota
	Gauge
	Histogram // Buckets and Sum, Count set; Value unused
)

// Sample is one metric value with its labels.
type Sample struct {
	Name   string // onair_* metric name
	Help   string
	Kind   Kind
	Labels [][2]string // label name, value; the same names for every sample of a metric
	Value  float64
	// Histograms: upper bounds (seconds) with cumulative counts, sum and count.
	Buckets map[float64]uint64
	Sum     float64
	Count   uint64
}
