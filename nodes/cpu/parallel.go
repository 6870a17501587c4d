package cpu

import (
	"cmp"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
)

// Parallel renders a canvas with several compositors at once, each drawing
// a band of rows on a goroutine of its own: the output is the same, byte for
// byte, as one Compositor's. It pays off for large canvases (a 1080p canvas
// of four layers from 1080p sources costs about 13 to 25 ms of CPU on one
// core of the dev VM, nodes/cpu/BENCHMARKS.md). Workers are started
// once and kept, so a steady show renders without allocating. A Parallel is
// not safe for concurrent use; Close stops its workers.
type Parallel struct {
	main    *Compositor
	workers []chan bandJob
	done    chan error // a band's end: nil, or the panic that ended it
}

type bandJob struct {
	dst    *frame.Frame
	layers []Layer
	y0, y1 int
}

// NewParallel returns a compositor drawing in n bands (n ≥ 1; 1 is a plain
// Compositor on the caller's goroutine).
func NewParallel(n int) *Parallel {
	p := &Parallel{main: NewCompositor(), done: make(chan error, max(n-1, 1))}
	for i := 1; i < n; i++ {
		jobs := make(chan bandJob)
		p.workers = append(p.workers, jobs)
		c := NewCompositor()
		go func() {
			for j := range jobs {
				p.done <- c.band(j)
			}
		}()
	}
	return p
}

// band draws one band; a panic in it (a layer the checks let through) is
// its error, so the worker lives on and Render fails its tick.
func (c *Compositor) band(j bandJob) (err error) {
	defer panics.Catch("a band of the compositor", nil, func(e error) { err = e })
	c.renderBand(j.dst, j.layers, j.y0, j.y1)
	return nil
}

// Render paints dst black and draws the layers in z-order, as
// Compositor.Render does, with the bands drawn at once. A panic in a band
// is Render's error (a *panics.Error), once every band has ended: the
// compositor's node fails, and the workers live on.
func (p *Parallel) Render(dst *frame.Frame, layers []Layer) error {
	if err := checkLayers(dst, layers); err != nil {
		return err
	}
	n := len(p.workers) + 1
	step := ((dst.Height+n-1)/n + 1) &^ 1 // even, so chroma rows split cleanly
	sent := 0
	for i, w := range p.workers {
		y0 := (i + 1) * step
		if y0 >= dst.Height {
			break
		}
		w <- bandJob{dst, layers, y0, min(dst.Height, y0+step)}
		sent++
	}
	err := p.main.band(bandJob{dst, layers, 0, min(dst.Height, step)})
	for ; sent > 0; sent-- {
		err = cmp.Or(err, <-p.done)
	}
	return err
}

// Close stops the workers.
func (p *Parallel) Close() {
	for _, w := range p.workers {
		close(w)
	}
	p.workers = nil
}
