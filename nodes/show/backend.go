package show

import (
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/playout"
	"github.com/onairhq/onair/runtime"
)

// Frame is what the shared runtime needs of a backend's frames, wherever
// their pixels live: reference counts (a frame goes back to its pool when
// the last holder lets go) and the metadata every backend stamps the same
// way.
type Frame interface {
	comparable
	Retain()
	Release()
	Metadata() *frame.Meta
}

// Backend is what a backend supplies to run a plan: its name, the pixel
// work (a canvas per bus; a host picture of a frame for the outputs), and
// constructors for the node kinds only it runs (its sources, decoders,
// uploads). Everything else — buses, switching, the compositor's schedule,
// pacing, fan-out, outputs and their accounting, status and metrics — is
// this package's, the same for every backend.
type Backend[F Frame] struct {
	Name string
	// NewCanvas makes the drawing surface of one bus.
	NewCanvas func(f frame.Format, w, h int) (Canvas[F], error)
	// NewCanvasOn, when set, is used instead of NewCanvas and is given the
	// bus's node: for a backend that draws each bus where the plan places
	// it (the CUDA backend, on the GPU of Placement.GPU).
	NewCanvasOn func(n plan.Node, f frame.Format, w, h int) (Canvas[F], error)
	// ToHost gives an output the picture of f in host memory. release is
	// called once the output is done with it. On the CPU it is f itself.
	ToHost func(f F) (host *frame.Frame, release func(), err error)
	// Kinds are the constructors of the kinds only this backend runs.
	Kinds map[string]Constructor[F]
	// Close frees what the backend holds for the run (a GPU context); nil
	// when there is nothing.
	Close func()
	// Device, when set, reports the hardware the show runs on (a GPU's
	// utilization and memory) for /status; DeviceMetrics for /metrics.
	Device        func() any
	DeviceMetrics func(emit func(metrics.Sample))
}

// Constructor makes a node of a backend's own kind. st is the run's shared
// state: source counters, paths resolved against the show, video params.
type Constructor[F Frame] func(st *State, n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error)

// Canvas draws one bus's pictures. A compositor owns its canvas and calls
// it from one goroutine.
type Canvas[F Frame] interface {
	// Get returns a canvas-sized frame from the canvas's pool.
	Get() (F, error)
	// Draw renders the layers onto dst, bottom (lowest Z) first, over black.
	Draw(dst F, layers []Layer[F]) error
	// Transition blends two renders into dst: a fade, or a wipe from the
	// left, at progress in [0, 1].
	Transition(dst, from, to F, kind playout.Kind, progress float64) error
	// Wait returns once dst is drawn (on the GPU: its work has finished).
	// The time it takes is the tick's gpu_wait.
	Wait(dst F) error
	Close()
}

// DrawsInPlace is a canvas whose Draw and Transition do the work before
// they return (the CPU's), so that Wait has nothing to wait for. On an
// event loop such a canvas's ticks are drawn and handed off in one
// handler; any other canvas's are queued in one and waited for in another
// (compositor.startOnLoop).
type DrawsInPlace interface{ DrawsInPlace() }

// PollsDrawn is a canvas that queues its work and can say, without
// waiting, whether everything queued for dst is drawn (the GPU's: its
// stream queried). On an event loop each of its ticks is finished once its
// own picture is drawn, the loop looking again every drawnPollNs
// meanwhile, so that no bus's picture holds another bus's tick (nor
// anything else on the loop); a canvas that cannot poll is waited for
// (Wait) in turn. Drawn never blocks.
type PollsDrawn[F Frame] interface {
	Drawn(dst F) (bool, error)
}

// Layer is one picture of a scene on a canvas. A zero Frame draws nothing.
type Layer[F Frame] struct {
	Frame   F
	Rect    frame.Rect // where on the canvas
	Fit     frame.Fit
	Crop    frame.Rect // the part of the picture shown; zero: all of it
	Opacity float64
	Z       int
}
