package cpu

import (
	"maps"
	goruntime "runtime"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/playout"
)

// Frame is what travels on every edge of a CPU plan: a picture in host
// memory.
type Frame = *frame.Frame

// Name is the CPU backend's name in plans and on the command line.
const Name = "cpu"

// Backend is the CPU backend for the shared show runtime: host frames, the
// banded compositor, and the constructors of the kinds only it runs.
func Backend() *show.Backend[Frame] {
	all := maps.Clone(kinds)             // added by the files that define them
	maps.Copy(all, browser.Host.Kinds()) // ipc_dmabuf_source, gpu_import
	return &show.Backend[Frame]{
		Name:      Name,
		NewCanvas: newCanvas,
		ToHost:    func(f Frame) (*frame.Frame, func(), error) { return f, func() {}, nil },
		Kinds:     all,
	}
}

// canvas draws a bus in host memory.
type canvas struct {
	pool   *frame.Pool
	comp   *Parallel
	layers []Layer
}

func newCanvas(f frame.Format, w, h int) (show.Canvas[Frame], error) {
	pool, err := frame.NewPool(f, w, h, 0)
	if err != nil {
		return nil, err
	}
	return &canvas{pool: pool, comp: NewParallel(bands(w, h))}, nil
}

func (c *canvas) Get() (Frame, error) { return c.pool.Get() }

func (c *canvas) Draw(dst Frame, layers []show.Layer[Frame]) error {
	c.layers = c.layers[:0]
	for _, l := range layers {
		c.layers = append(c.layers, Layer{Frame: l.Frame, Rect: l.Rect, Fit: l.Fit, Crop: l.Crop, Opacity: l.Opacity, Z: l.Z})
	}
	return c.comp.Render(dst, c.layers)
}

func (c *canvas) Transition(dst, from, to Frame, kind playout.Kind, progress float64) error {
	return Transition(kind, dst, from, to, progress)
}

// Wait has nothing to wait for: Draw returns once the picture is drawn.
func (c *canvas) Wait(Frame) error { return nil }

// DrawsInPlace implements show.DrawsInPlace: on a loop a tick is drawn
// and handed off in one handler, as there is no wait to gather.
func (c *canvas) DrawsInPlace() {}

func (c *canvas) Close() { c.comp.Close() }

// bands is how many goroutines draw a canvas: one for small canvases, up to
// four (no more than the cores) from 720p up, where one core falls behind a
// 30 fps tick with a few layers.
func bands(w, h int) int {
	if w*h < 1280*720 {
		return 1
	}
	return max(1, min(goruntime.NumCPU(), 4))
}
