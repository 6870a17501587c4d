package show

import (
	"fmt"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

// realtime releases one frame per period of the source's rate on its pacing
// loop, counting in the plan's time base (1/120000 s), and restamps each
// frame with its release time on the monotonic clock, the clock the buses'
// tick grids use.
type realtime[F Frame] struct {
	b      *State
	st     *SourceState
	tb     runtime.TimeBase
	step   int64
	period runtime.TimeBase
}

func newRealtime[F Frame](b *State, n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	prm, err := Params[struct {
		TimeBase   string `param:"time_base"`
		TickPeriod string `param:"tick_period"`
	}](&n)
	if err != nil {
		return nil, err
	}
	base := prm.TimeBase
	if prm.TickPeriod != "" { // the older spelling, never written with time_base
		base = prm.TickPeriod
	}
	tb, period, err := pacingTimes(b, &n, base)
	if err != nil {
		return nil, err
	}
	step := period.Convert(1, tb)
	if step <= 0 {
		return nil, fmt.Errorf("node %s: a frame period of %v is shorter than the time base %v", n.ID, period, tb)
	}
	return &realtime[F]{b: b, st: b.sourceMap()[n.Address], tb: tb, step: step, period: period}, nil
}

// pacingTimes is a pacing node's time base (base, its time_base param)
// and the frame period of the source it paces.
func pacingTimes(b *State, n *plan.Node, base string) (tb, period runtime.TimeBase, err error) {
	if tb, err = runtime.ParseTimeBase(base); err != nil {
		return tb, period, fmt.Errorf("node %s: time_base: %v", n.ID, err)
	}
	_, _, _, rate, err := b.Video(n)
	if err != nil {
		return tb, period, err
	}
	period, err = runtime.NewTimeBase(rate.Den, rate.Num)
	return tb, period, err
}

func (r *realtime[F]) Start(ctx *runtime.NodeContext[F]) error {
	// Release on the show's frame grid, so a pacing loop wakes once per tick
	// for all of its sources.
	p, err := runtime.NewPacer(runtime.PacerConfig{TimeBase: r.tb, AlignPeriod: r.period, AlignOriginNs: r.b.origin})
	if err != nil {
		return err
	}
	var g *runtime.Pacing
	g, err = ctx.Pace(p, 0, func(pts int64) (int64, bool) { return pts + r.step, true }, func(int64) { r.release(ctx, g) })
	return err
}

// release hands on the source's next frame, stamped with the release time
// the pacing clock gives, or counts an underrun when there is none. The
// releases before the source's first frame are its start, as a bus's ticks
// before it is primed are the bus's: not underruns.
func (r *realtime[F]) release(ctx *runtime.NodeContext[F], clock interface{ Release() int64 }) {
	f, ok := ctx.Get(0)
	if !ok {
		if r.st.Paced.Load() > 0 {
			r.st.Underrun.Add(1)
		}
		return
	}
	m := f.Metadata()
	m.PTS, m.TimeBase = clock.Release(), frame.Rational{Num: 1, Den: 1_000_000_000}
	if m.Stamps.Set != 0 {
		r.st.NoteStamps(&m.Stamps, time.Now().UnixNano())
	}
	if m.SentAt != 0 && r.st != nil { // a live source's stamped frame: on air at its tick's deadline
		if l := r.st.live.Load(); l != nil {
			l.OnAir(m.SentAt, time.Now().Add(time.Duration(m.PTS-runtime.Now())))
		}
		m.SentAt = 0
	}
	r.st.Paced.Add(1)
	if ok, _ := ctx.Put(0, f); !ok {
		r.st.refused(ctx.Stopping(), ctx.Outputs[0].Taken())
		f.Release()
	}
}

func (r *realtime[F]) Stop() {}

// fanOut hands each frame to every output edge, retaining it once per edge;
// an edge that is full drops the frame for that consumer only. Toward a
// bus that has not taken a frame yet (its group still starting) a full
// edge gives up its oldest frame instead (a start drop): the bus's first
// tick then shows the source's newest frame and the ticks after it the
// frames that follow, where keeping the first ones would show a stale
// frame, repeat it and jump (issue 23).
func fanOut[F Frame](ctx *runtime.NodeContext[F], st *SourceState, f F) {
	for i, e := range ctx.Outputs {
		f.Retain()
		if !e.Taken() && !ctx.Stopping() {
			old, replaced, err := e.PutNewest(f)
			switch {
			case err != nil:
				f.Release()
			case replaced:
				old.Release()
				if st != nil {
					st.refused(false, false)
				}
			}
			if err == nil {
				ctx.Stats.Out.Add(1)
			}
			continue
		}
		if ok, _ := ctx.Put(i, f); !ok {
			f.Release()
			if st != nil {
				st.refused(ctx.Stopping(), ctx.Outputs[i].Taken())
			}
		}
	}
	f.Release()
}

// fanOutOnLoop is one_to_many_nb: the fan-out as a handler on the loop that
// paces the source.
type fanOutOnLoop[F Frame] struct{ st *SourceState }

func newFanOutOnLoop[F Frame](b *State, n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	return &fanOutOnLoop[F]{st: b.sourceMap()[n.Address]}, nil
}

func (o *fanOutOnLoop[F]) Start(ctx *runtime.NodeContext[F]) error {
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

func (o *fanOutOnLoop[F]) Stop() {}

// OutputAdded implements runtime.OutputsGrow: a bus routed to the source
// on air (fanOut puts each frame on every output it finds).
func (o *fanOutOnLoop[F]) OutputAdded(int) {}

// fanOutThread is one_to_many: the same on a thread of its own.
type fanOutThread[F Frame] struct{ st *SourceState }

func newFanOutThread[F Frame](b *State, n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	return &fanOutThread[F]{st: b.sourceMap()[n.Address]}, nil
}

func (o *fanOutThread[F]) Start(ctx *runtime.NodeContext[F]) error {
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

func (o *fanOutThread[F]) Stop() {}

// smoother is smooth_timestamps: it re-times the frames of a source that
// paints unevenly (a browser window) onto the show's frame grid, on its
// source's pacing loop, against the show's clock. Each frame is stamped one
// slot after the one before; the slots re-anchor only when the average
// drift of arrivals passes a frame period (runtime.Smoother), so jitter
// never moves them. A frame that arrives too early for its slot (the
// producer paints faster than the show's rate) is held until its slot is
// near (runtime.MaxLead), and dropped, counted as early, when a newer frame
// comes first: the newest picture is always shown, no frame waits more
// than half a period for its slot, and what waits for a bus stays bounded.
// Slots of real time with no frame (a producer slower than the rate) are
// counted as the source's underruns.
type smoother[F Frame] struct {
	b     *State
	st    *SourceState
	sm    *runtime.Smoother
	unit  runtime.TimeBase
	first int64 // arrival of the first frame: slot 0, monotonic ns

	// On the loop: the frame held for its slot, and the timer that
	// releases it.
	held    F
	holding bool
	timer   *runtime.Timer
}

func newSmoother[F Frame](b *State, n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	prm, err := Params[struct {
		TimeBase string `param:"time_base"`
	}](&n)
	if err != nil {
		return nil, err
	}
	unit, period, err := pacingTimes(b, &n, prm.TimeBase)
	if err != nil {
		return nil, err
	}
	sm, err := runtime.NewSmoother(unit, period, period.ToNanos(1))
	if err != nil {
		return nil, fmt.Errorf("node %s: %v", n.ID, err)
	}
	return &smoother[F]{b: b, st: b.sourceMap()[n.Address], sm: sm, unit: unit, first: -1}, nil
}

func (s *smoother[F]) Start(ctx *runtime.NodeContext[F]) error {
	t, err := ctx.AddTimer(runtime.Now(), func() { s.release(ctx) })
	if err != nil {
		return err
	}
	s.timer = t
	_, err = ctx.Watch(ctx.Inputs[0].Produced(), func(r *runtime.Registration) {
		for {
			f, ok := ctx.Get(0)
			if !ok {
				break
			}
			if s.holding { // a newer frame came before the held one's slot
				s.drop()
			}
			s.offer(ctx, f)
		}
		r.Rearm()
	})
	return err
}

// offer stamps f and hands it on, or holds it until its slot is near.
func (s *smoother[F]) offer(ctx *runtime.NodeContext[F], f F) {
	arrival := clock(s.b)
	gaps := s.sm.Gaps()
	slot, keep := s.sm.Stamp(arrival)
	if g := s.sm.Gaps() - gaps; g > 0 {
		s.st.Underrun.Add(g)
	}
	if !keep {
		s.held, s.holding = f, true
		s.timer.Reset(runtime.Now() + max(0, s.sm.Due()-arrival))
		return
	}
	if s.first < 0 {
		s.first = arrival
	}
	s.put(ctx, f, s.first+s.unit.ToNanos(slot))
}

// release offers the held frame again, its slot being near.
func (s *smoother[F]) release(ctx *runtime.NodeContext[F]) {
	if !s.holding {
		return
	}
	f := s.held
	s.holding = false
	var zero F
	s.held = zero
	s.offer(ctx, f)
}

func (s *smoother[F]) put(ctx *runtime.NodeContext[F], f F, pts int64) {
	m := f.Metadata()
	m.PTS, m.TimeBase = pts, frame.Rational{Num: 1, Den: 1_000_000_000}
	s.st.Paced.Add(1)
	if ok, _ := ctx.Put(0, f); !ok {
		s.st.refused(ctx.Stopping(), ctx.Outputs[0].Taken())
		f.Release()
	}
}

// drop lets the held frame go, counted early.
func (s *smoother[F]) drop() {
	s.st.Browser().Early.Add(1)
	s.held.Release()
	var zero F
	s.held, s.holding = zero, false
}

// Stop lets go of a held frame (the loop has stopped running the node).
func (s *smoother[F]) Stop() {
	if s.holding {
		s.held.Release()
		var zero F
		s.held, s.holding = zero, false
	}
}
