package cpubackend

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/cpu"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/runtime"
)

// testPattern draws frames on a thread of its own (as the registry places
// it), blocking on its output edge, or, placed on a loop, whenever the
// edge has room (its Consumed signal wakes it); either way it never runs
// ahead of the pacer by more than the edge holds.
type testPattern struct {
	b       *Backend
	st      *SourceState
	tp      *cpu.TestPattern
	pool    *frame.Pool
	pending Frame
}

func newTestPattern(b *Backend, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	f, w, h, rate, err := b.videoParams(&n)
	if err != nil {
		return nil, err
	}
	pat, err := cpu.ParsePattern(paramString(&n, "pattern", "bars"))
	if err != nil {
		return nil, fmt.Errorf("node %s: %v", n.ID, err)
	}
	tp, err := cpu.NewTestPattern(cpu.TestPatternConfig{
		ID: n.Address, StampID: b.stamps[n.Address], Pattern: pat, Format: f, Width: w, Height: h,
		Rate: rate, Colour: parseColour(paramString(&n, "colour", "")),
	})
	if err != nil {
		return nil, err
	}
	pool, err := frame.NewPool(f, w, h, 0)
	if err != nil {
		return nil, err
	}
	if len(ctx.Outputs) != 1 {
		return nil, fmt.Errorf("node %s: a test pattern has one output, the plan gives it %d", n.ID, len(ctx.Outputs))
	}
	return &testPattern{b: b, st: b.sources[n.Address], tp: tp, pool: pool}, nil
}

func (t *testPattern) Start(ctx *runtime.NodeContext[Frame]) error {
	// Continue the numbering after a restart, so timestamps never go back.
	t.tp.SetNext(int64(t.st.Produced.Load()))
	if ctx.Loop() == nil {
		// On a thread of its own: draw, then wait for room on the edge.
		ctx.Go(func() error {
			for !ctx.Stopping() {
				f, err := t.pool.Get()
				if err != nil {
					return err
				}
				if err := t.tp.Next(f); err != nil {
					f.Release()
					return err
				}
				t.st.Produced.Add(1)
				if ok, _ := ctx.Put(0, f); !ok {
					f.Release()
				}
			}
			return nil
		})
		return nil
	}
	_, err := ctx.Watch(ctx.Outputs[0].Consumed(), func(r *runtime.Registration) {
		t.fill(ctx)
		r.Rearm()
	})
	if err != nil {
		return err
	}
	t.fill(ctx)
	return nil
}

func (t *testPattern) fill(ctx *runtime.NodeContext[Frame]) {
	for !ctx.Stopping() {
		if t.pending == nil {
			f, err := t.pool.Get()
			if err != nil {
				ctx.Fail(err)
				return
			}
			if err := t.tp.Next(f); err != nil {
				f.Release()
				ctx.Fail(err)
				return
			}
			t.st.Produced.Add(1)
			t.pending = f
		}
		ok, err := ctx.Put(0, t.pending)
		if errors.Is(err, runtime.ErrWouldBlock) {
			return // full: the Consumed watch calls again
		}
		if err != nil || !ok {
			t.pending.Release()
			t.pending = nil
			if err != nil {
				return
			}
			continue
		}
		t.pending = nil
	}
}

func (t *testPattern) Stop() {
	if t.pending != nil {
		t.pending.Release()
		t.pending = nil
	}
}

// rawFile reads a raw NV12/P010 file (or a Y4M file) on a thread of its own and blocks on
// its output edge, which the pacer empties one frame per period. A file that
// is missing or breaks is reported (node status, the source's last error)
// and the source sends black frames while it tries the file again every
// second, so the buses keep their deadlines.
type rawFile struct {
	b     *Backend
	st    *SourceState
	cfg   cpu.RawFileConfig
	pool  *frame.Pool
	rate  frame.Rational
	retry time.Duration
	hold  bool         // on_error = "hold": repeat the last good frame, not black
	last  *frame.Frame // the last good frame, kept for hold
}

func newRawFile(b *Backend, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	f, w, h, rate, err := b.videoParams(&n)
	if err != nil {
		return nil, err
	}
	path := b.resolve(paramString(&n, "path", ""))
	if path == "" {
		return nil, fmt.Errorf("node %s: no path", n.ID)
	}
	loop, err := ctx.ParamBool("loop", true)
	if err != nil {
		return nil, err
	}
	pool, err := frame.NewPool(f, w, h, 0)
	if err != nil {
		return nil, err
	}
	onError := paramString(&n, "on_error", "black")
	if onError != "black" && onError != "hold" {
		return nil, fmt.Errorf("node %s: on_error %q: use black or hold", n.ID, onError)
	}
	return &rawFile{
		b: b, st: b.sources[n.Address], pool: pool, rate: rate, retry: time.Second, hold: onError == "hold",
		cfg: cpu.RawFileConfig{ID: n.Address, Path: path, Format: f, Width: w, Height: h, Rate: rate,
			Colour: parseColour(paramString(&n, "colour", "")), Loop: loop, Resident: paramString(&n, "mode", "") == "resident"},
	}, nil
}

func (r *rawFile) Start(ctx *runtime.NodeContext[Frame]) error {
	ctx.Go(func() error { return r.run(ctx) })
	return nil
}

// reader is what rawFile reads frames from: a raw file, or a Y4M file.
type reader interface {
	Next(dst *frame.Frame) error
	Close() error
}

// open opens the source's file: a .y4m file through the Y4M reader (its
// header must agree with the source's format and size), anything else as
// raw frames back to back.
func (r *rawFile) open() (reader, error) {
	if !strings.EqualFold(filepath.Ext(r.cfg.Path), ".y4m") {
		return cpu.OpenRawFile(r.cfg)
	}
	y, err := cpu.OpenY4M(r.cfg.Path, r.cfg.ID, r.cfg.Loop)
	if err != nil {
		return nil, err
	}
	if y.Format() != r.cfg.Format || y.Width() != r.cfg.Width || y.Height() != r.cfg.Height {
		y.Close()
		return nil, fmt.Errorf("y4m %s holds %v %dx%d frames, but the source declares %v %dx%d: set the source's format and size to match", r.cfg.Path, y.Format(), y.Width(), y.Height(), r.cfg.Format, r.cfg.Width, r.cfg.Height)
	}
	return y, nil
}

func (r *rawFile) run(ctx *runtime.NodeContext[Frame]) error {
	var src reader
	defer func() {
		if src != nil {
			src.Close()
		}
	}()
	var nextTry time.Time
	n := int64(r.st.Produced.Load())
	for !ctx.Stopping() {
		if src == nil && time.Now().After(nextTry) {
			s, err := r.open()
			if err != nil {
				r.report(ctx, err)
				nextTry = time.Now().Add(r.retry)
			} else {
				src = s
				r.st.clearErr()
			}
		}
		f, err := r.pool.Get()
		if err != nil {
			return err
		}
		if src != nil {
			err = src.Next(f)
			if errors.Is(err, io.EOF) { // a file that does not loop has ended
				f.Release()
				ctx.Log.Info("raw file ended", "path", r.cfg.Path, "frames", n)
				ctx.Done().Wait(ctx.Stopping, -1)
				return nil
			}
			if err != nil {
				r.report(ctx, err)
				src.Close()
				src = nil
				nextTry = time.Now().Add(r.retry)
			}
		}
		switch {
		case (src == nil || err != nil) && r.hold && r.last != nil:
			f.CopyFrom(r.last) // the last good frame while the file is unusable
		case src == nil || err != nil:
			f.Fill() // black while the file is unusable
			f.Colour, f.Source = r.cfg.Colour, r.cfg.ID
		case r.hold:
			if r.last == nil {
				r.last, _ = frame.New(f.Format, f.Width, f.Height)
			}
			r.last.CopyFrom(f)
		}
		f.PTS, f.TimeBase, f.SourceFrame = n, r.rate.Inverse(), n
		n++
		r.st.Produced.Add(1)
		if ok, err := ctx.Put(0, f); !ok {
			f.Release()
			if err != nil {
				return nil // stopping
			}
		}
	}
	return nil
}

func (r *rawFile) report(ctx *runtime.NodeContext[Frame], err error) {
	ctx.Stats.Errors.Add(1)
	r.st.mu.Lock()
	same := r.st.lastErr == err.Error()
	r.st.mu.Unlock()
	r.st.fail(err)
	if !same {
		what := "source shows black until its file is usable"
		if r.hold {
			what = "source holds its last good frame until its file is usable"
		}
		ctx.Log.Error(what, "error", err)
	}
}

func (r *rawFile) Stop() {}

// realtime releases one frame per period of the source's rate on its pacing
// loop, counting in the plan's time base (1/120000 s), and restamps each
// frame with its release time on the monotonic clock, the clock the buses'
// tick grids use.
type realtime struct {
	b      *Backend
	st     *SourceState
	tb     runtime.TimeBase
	step   int64
	period runtime.TimeBase
}

func newRealtime(b *Backend, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	tb, err := runtime.ParseTimeBase(paramString(&n, "time_base", "1/120000"))
	if err != nil {
		return nil, fmt.Errorf("node %s: time_base: %v", n.ID, err)
	}
	_, _, _, rate, err := b.videoParams(&n)
	if err != nil {
		return nil, err
	}
	period, err := runtime.NewTimeBase(rate.Den, rate.Num)
	if err != nil {
		return nil, err
	}
	step := period.Convert(1, tb)
	if step <= 0 {
		return nil, fmt.Errorf("node %s: a frame period of %v is shorter than the time base %v", n.ID, period, tb)
	}
	return &realtime{b: b, st: b.sources[n.Address], tb: tb, step: step, period: period}, nil
}

func (r *realtime) Start(ctx *runtime.NodeContext[Frame]) error {
	// Release on the show's frame grid, so a pacing loop wakes once per tick
	// for all of its sources.
	p, err := runtime.NewPacer(runtime.PacerConfig{TimeBase: r.tb, AlignPeriod: r.period, AlignOriginNs: r.b.origin})
	if err != nil {
		return err
	}
	var g *runtime.Pacing
	g, err = ctx.Pace(p, 0, func(pts int64) (int64, bool) { return pts + r.step, true }, func(int64) {
		f, ok := ctx.Get(0)
		if !ok {
			r.st.Underrun.Add(1)
			return
		}
		f.PTS, f.TimeBase = g.Release(), frame.Rational{Num: 1, Den: 1_000_000_000}
		r.st.Paced.Add(1)
		if ok, _ := ctx.Put(0, f); !ok {
			r.st.Drops.Add(1)
			f.Release()
		}
	})
	return err
}

func (r *realtime) Stop() {}

// fanOut hands each frame to every output edge, retaining it once per edge;
// an edge that is full drops the frame for that consumer only.
func fanOut(ctx *runtime.NodeContext[Frame], st *SourceState, f Frame) {
	for i := range ctx.Outputs {
		f.Retain()
		if ok, _ := ctx.Put(i, f); !ok {
			f.Release()
			if st != nil {
				st.Drops.Add(1)
			}
		}
	}
	f.Release()
}

// fanOutOnLoop is one_to_many_nb: the fan-out as a handler on the loop that
// paces the source.
type fanOutOnLoop struct{ st *SourceState }

func newFanOutOnLoop(b *Backend, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	return &fanOutOnLoop{st: b.sources[n.Address]}, nil
}

func (o *fanOutOnLoop) Start(ctx *runtime.NodeContext[Frame]) error {
	_, err := ctx.Watch(ctx.Inputs[0].Produced(), func(r *runtime.Registration) {
		for {
			f, ok := ctx.Get(0)
			if !ok {
				break
			}
			fanOut(ctx, o.st, f)
		}
		r.Rearm()
	})
	return err
}

func (o *fanOutOnLoop) Stop() {}

// fanOutThread is one_to_many: the same on a thread of its own.
type fanOutThread struct{ st *SourceState }

func newFanOutThread(b *Backend, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	return &fanOutThread{st: b.sources[n.Address]}, nil
}

func (o *fanOutThread) Start(ctx *runtime.NodeContext[Frame]) error {
	ctx.Go(func() error {
		for !ctx.Stopping() {
			if f, ok := ctx.Take(0, -1); ok {
				fanOut(ctx, o.st, f)
			}
		}
		return nil
	})
	return nil
}

func (o *fanOutThread) Stop() {}
