package cpu

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"regexp"
	goruntime "runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/playout"
)

// auxShow is issue 23's AUX buses on the CPU backend: n AUX buses, each
// showing a test pattern of its own over the whole canvas with a null
// output, all drawn on the default loop beside a Program bus of four
// sources, as the seeds' show draws its 20 AUX buses.
func auxShow(n int) string {
	s := `show {
  name       = "aux"
  size       = "640x360"
  frame_rate = "30"
  format     = "nv12"
}
scene "quad" {
  dynamic "layer" {
    for_each = [0, 1, 2, 3]
    content {
      source = source.p[layer.value]
      rect   = [(layer.value % 2) * 320, floor(layer.value / 2) * 180, 320, 180]
    }
  }
}
bus "program" "pgm" {
  scene = scene.quad
}
output "null" "pgm" {
  bus = bus.pgm
}
`
	s += fmt.Sprintf("source \"test_pattern\" \"p\" {\n  count = %d\n  pattern = \"bars\"\n}\n", max(n, 4))
	s += fmt.Sprintf("bus \"aux\" \"mon\" {\n  count = %d\n  source = source.p[count.index]\n}\n", n)
	s += fmt.Sprintf("output \"null\" \"mon\" {\n  count = %d\n  bus = bus.mon[count.index]\n}\n", n)
	return s
}

// BenchmarkAUXTicks runs the AUX show with 20 AUX buses for b.N ticks a
// bus after start-up and reports each AUX tick's time from its deadline to
// its commit in frame periods: p99.9 over every AUX tick and the worst
// bus's own p99.9 (from onair_tick_seconds, linear within its buckets),
// the share of ticks at a quarter and at half a period or more (playout
// timing's own buckets: exact), the longest; and what the whole show
// allocates per tick drawn, with its GC cycles.
//
// It runs three ways. in-place: the CPU's canvas, which draws before Draw
// returns, so a tick is drawn and handed off in one handler. queued-wait
// and queued-poll: the CPU's canvas behind a queue of its own (queuedCanvas:
// each picture drawn by a goroutine of the canvas's, as a GPU stream draws
// it), so that the loop's buses queue their pictures and finish them in a
// second handler, as on the GPU; queued-wait can only be waited for (each
// bus waits for its own picture in turn, the loop held meanwhile: the tree
// before issue 23's change), queued-poll says whether a picture is drawn
// (show.PollsDrawn, as the GPU's canvas does), so each bus commits as its
// own picture is done.
//
//	go test -run '^$' -bench AUXTicks -benchtime 600x ./nodes/cpu/
func BenchmarkAUXTicks(b *testing.B) {
	b.Run("in-place", func(b *testing.B) { auxTicks(b, nil) })
	b.Run("queued-wait", func(b *testing.B) {
		auxTicks(b, func(c show.Canvas[Frame]) show.Canvas[Frame] { return waitOnly{newQueuedCanvas(c)} })
	})
	b.Run("queued-poll", func(b *testing.B) {
		auxTicks(b, func(c show.Canvas[Frame]) show.Canvas[Frame] { return newQueuedCanvas(c) })
	})
}

func auxTicks(b *testing.B, wrap func(show.Canvas[Frame]) show.Canvas[Frame]) {
	const aux = 20
	p := compile(b, writeShow(b, auxShow(aux)), nil)
	be := *Backend()
	if wrap != nil {
		newCanvas := be.NewCanvas
		be.NewCanvas = func(f frame.Format, w, h int) (show.Canvas[Frame], error) {
			c, err := newCanvas(f, w, h)
			if err != nil {
				return nil, err
			}
			return wrap(c), nil
		}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dir, _ := showDirs.Load(p)
	s, err := show.Start(context.Background(), &be, p, nil, show.Options{BaseDir: dir.(string)}, log)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	isAux := regexp.MustCompile(`^bus\.mon\[`)
	ticks := func(sum show.Summary) (n uint64, quarter, half uint64, maxMs float64) {
		for _, bs := range sum.Buses {
			if !isAux.MatchString(bs.Address) {
				continue
			}
			for i, c := range bs.Timing.Draw {
				n += c
				if i >= 1 {
					quarter += c
				}
				if i >= 2 {
					half += c
				}
			}
			maxMs = max(maxMs, bs.Timing.MaxDrawMs)
		}
		return
	}
	time.Sleep(time.Second) // past the start
	h0 := tickHistograms(b, s)
	sum0 := s.State.Summary()
	n0, q0, h50, _ := ticks(sum0)
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	b.ResetTimer()
	want := n0 + uint64(b.N*aux)
	// Most of the wait in one sleep: a Summary allocates, and the
	// window's allocations are the show's.
	time.Sleep(time.Duration(b.N) * time.Second / 30)
	for {
		if n, _, _, _ := ticks(s.State.Summary()); n >= want {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.StopTimer()
	goruntime.ReadMemStats(&m1)
	sum1 := s.State.Summary()
	n1, q1, h51, maxMs := ticks(sum1)
	h1 := tickHistograms(b, s)
	var all uint64
	for _, bs := range sum1.Buses {
		all += bs.Ticks
	}
	for _, bs := range sum0.Buses {
		all -= bs.Ticks
	}
	period := 1.0 / 30
	var wake, queue, gpuWait, handOff uint64 // the parts at a quarter period or more, summed over the AUX buses
	for _, bs := range sum1.Buses {
		if isAux.MatchString(bs.Address) {
			wake += partOver(bs.Timing.Wake)
			queue += partOver(bs.Timing.Queue)
			gpuWait += partOver(bs.Timing.GPUWait)
			handOff += partOver(bs.Timing.HandOff)
		}
	}
	for _, bs := range sum0.Buses {
		if isAux.MatchString(bs.Address) {
			wake -= partOver(bs.Timing.Wake)
			queue -= partOver(bs.Timing.Queue)
			gpuWait -= partOver(bs.Timing.GPUWait)
			handOff -= partOver(bs.Timing.HandOff)
		}
	}
	pooled, worst := histogram{}, 0.0
	for bus, h := range h1 {
		worst = max(worst, h.quantile(h0[bus], 0.999))
		for le, c := range h {
			pooled[le] += c - h0[bus][le]
		}
	}
	n := float64(n1 - n0)
	b.ReportMetric(pooled.quantile(nil, 0.999)/period, "p99.9-periods")
	b.ReportMetric(worst/period, "worst-bus-p99.9-periods")
	b.ReportMetric(100*float64(q1-q0)/n, "%ticks>=0.25")
	b.ReportMetric(100*float64(h51-h50)/n, "%ticks>=0.5")
	b.ReportMetric(maxMs/1e3/period, "max-periods")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(all), "allocs/tick")
	b.ReportMetric(float64(m1.NumGC-m0.NumGC), "gcs")
	b.ReportMetric(100*float64(wake)/n, "%wake>=0.25")
	b.ReportMetric(100*float64(queue)/n, "%draw>=0.25")
	b.ReportMetric(100*float64(gpuWait)/n, "%wait>=0.25")
	b.ReportMetric(100*float64(handOff)/n, "%hand_off>=0.25")
	b.ReportMetric(0, "ns/op")
}

// queuedCanvas is a CPU canvas whose pictures are drawn by a goroutine
// of its own, in the order queued, as a GPU stream draws them: Draw
// queues and returns, Wait waits for everything queued, Drawn says
// without waiting whether it is done (show.PollsDrawn). A transition is
// drawn in place once the queue is drained (the AUX buses of the
// benchmark never switch).
type queuedCanvas struct {
	show.Canvas[Frame]
	jobs    chan func()
	queued  atomic.Int64
	drawn   atomic.Int64
	mu      sync.Mutex
	changed *sync.Cond
}

func newQueuedCanvas(c show.Canvas[Frame]) *queuedCanvas {
	q := &queuedCanvas{Canvas: c, jobs: make(chan func(), 8)}
	q.changed = sync.NewCond(&q.mu)
	go func() {
		for job := range q.jobs {
			job()
			q.mu.Lock()
			q.drawn.Add(1)
			q.changed.Broadcast()
			q.mu.Unlock()
		}
	}()
	return q
}

func (q *queuedCanvas) Draw(dst Frame, layers []show.Layer[Frame]) error {
	ls := slices.Clone(layers)
	q.queued.Add(1)
	q.jobs <- func() { _ = q.Canvas.Draw(dst, ls) }
	return nil
}

func (q *queuedCanvas) Transition(dst, from, to Frame, kind playout.Kind, progress float64) error {
	if err := q.Wait(dst); err != nil {
		return err
	}
	return q.Canvas.Transition(dst, from, to, kind, progress)
}

func (q *queuedCanvas) Wait(Frame) error {
	q.mu.Lock()
	for q.drawn.Load() < q.queued.Load() {
		q.changed.Wait()
	}
	q.mu.Unlock()
	return nil
}

func (q *queuedCanvas) Drawn(Frame) (bool, error) { return q.drawn.Load() >= q.queued.Load(), nil }

func (q *queuedCanvas) Close() {
	close(q.jobs)
	q.Canvas.Close()
}

// waitOnly is a queued canvas that can only be waited for.
type waitOnly struct{ show.Canvas[Frame] }

// partOver is how many of a part's observations took a quarter period or
// more.
func partOver(h [9]uint64) uint64 {
	var n uint64
	for _, c := range h[1:] {
		n += c
	}
	return n
}

// histogram is one bus's onair_tick_seconds: upper bound (seconds) →
// ticks at or under it.
type histogram map[float64]float64

// tickHistograms reads onair_tick_seconds of each AUX bus.
func tickHistograms(b *testing.B, s *show.Show[Frame]) map[string]histogram {
	ch := make(chan prometheus.Metric, 64)
	go func() {
		s.Collectors()[0].Collect(ch)
		close(ch)
	}()
	isAux := regexp.MustCompile(`^bus\.mon\[`)
	hs := map[string]histogram{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			b.Fatal(err)
		}
		bus := ""
		for _, l := range d.GetLabel() {
			if l.GetName() == "bus" && isAux.MatchString(l.GetValue()) {
				bus = l.GetValue()
			}
		}
		if bus == "" || d.GetHistogram() == nil {
			continue
		}
		h := histogram{}
		for _, bk := range d.GetHistogram().GetBucket() {
			h[bk.GetUpperBound()] += float64(bk.GetCumulativeCount())
		}
		h[math.Inf(1)] += float64(d.GetHistogram().GetSampleCount())
		hs[bus] = h
	}
	return hs
}

// quantile is the q quantile of the ticks observed since before, linear
// within a bucket (the last finite bound when it is past them).
func (h histogram) quantile(before histogram, q float64) float64 {
	bounds := make([]float64, 0, len(h))
	for le := range h {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	total := h[math.Inf(1)] - before[math.Inf(1)]
	rank := q * total
	lo, below := 0.0, 0.0
	for _, le := range bounds {
		c := h[le] - before[le]
		if c >= rank {
			if math.IsInf(le, 1) {
				return lo
			}
			if c == below {
				return le
			}
			return lo + (le-lo)*(rank-below)/(c-below)
		}
		lo, below = le, c
	}
	return lo
}
