package show

import (
	"errors"
	"fmt"

	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/runtime"
)

// hostFrame converts a host frame to the backend's frame type, and reports
// whether the backend's edges carry host frames at all (the CPU's are host
// frames; the CUDA backend's carry host frames up to an upload).
func hostFrame[F Frame](f *frame.Frame) (F, bool) {
	v, ok := any(f).(F)
	return v, ok
}

func host[F Frame](f *frame.Frame) F {
	v, _ := hostFrame[F](f)
	return v
}

// testPattern draws frames on a thread of its own (as the registry places
// it), blocking on its output edge, or, placed on a loop, whenever the
// edge has room (its Consumed signal wakes it); either way it never runs
// ahead of the pacer by more than the edge holds.
type testPattern[F Frame] struct {
	st      *SourceState
	tp      *media.TestPattern
	pool    *frame.Pool
	pending *frame.Frame
}

func newTestPattern[F Frame](b *State, n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	if _, ok := hostFrame[F](nil); !ok {
		return nil, fmt.Errorf("node %s: test_pattern draws in host memory, and this backend's edges do not carry host frames", n.ID)
	}
	f, w, h, rate, err := b.Video(&n)
	if err != nil {
		return nil, err
	}
	prm, err := Params[struct {
		Pattern string `param:"pattern"`
		Colour  string `param:"colour"`
	}](&n)
	if err != nil {
		return nil, err
	}
	pat, err := media.ParsePattern(prm.Pattern)
	if err != nil {
		return nil, fmt.Errorf("node %s: %v", n.ID, err)
	}
	tp, err := media.NewTestPattern(media.TestPatternConfig{
		ID: n.Address, StampID: b.StampID(n.Address), Pattern: pat, Format: f, Width: w, Height: h,
		Rate: rate, Colour: ParseColour(prm.Colour),
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
	return &testPattern[F]{st: b.Source(n.Address), tp: tp, pool: pool}, nil
}

func (t *testPattern[F]) Start(ctx *runtime.NodeContext[F]) error {
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
				if ok, _ := ctx.Put(0, host[F](f)); !ok {
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

func (t *testPattern[F]) fill(ctx *runtime.NodeContext[F]) {
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
		ok, err := ctx.Put(0, host[F](t.pending))
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

func (t *testPattern[F]) Stop() {
	if t.pending != nil {
		t.pending.Release()
		t.pending = nil
	}
}
