// Package runtime executes a compiled plan: event loops on epoll, coalesced
// eventfd signals, bounded edges between nodes, a realtime pacer, and the
// executor that starts node groups in order, waits for their readiness,
// restarts failed groups and reports status.
//
// It is Linux only (epoll, eventfd, timerfd, /proc) and must never import
// nodes/, lang/ or compiler/; it reads the plan (plan/), and of the rest of
// onair it uses internal/panics, to turn a panic into a node's failure, logged and
// counted): node kinds reach it as
// Constructors through a Lookup the caller passes, so the CPU and CUDA
// backends plug in without changing this package.
//
// # The parts
//
//   - EventLoop: one epoll set on one locked OS thread; one-shot waits
//     re-armed by their handler (Watch, Register, Registration.Rearm),
//     nanosecond timers in a heap behind one timerfd (AddTimer, NewTimer,
//     Timer.Reset), posted work (Post, Do). Adding from the loop's own
//     thread never wakes it.
//   - Signal: an eventfd written only when the last write was read. Every
//     reader reads, clears, then checks its condition again.
//   - Edge[T]: a bounded FIFO with Produced/Consumed signals, policy Block
//     or Drop, and counters (EdgeStats).
//   - MultiWait: wait on several signals until a deadline and learn which
//     fired. ReadySet: which of many inputs got frames, behind one coalesced
//     signal (NodeContext.ReadyInputs), for compositors with many inputs.
//   - TimeBase, Pacer, Smoother: rational time, release times that count a
//     release inside the clock's current quantum as due, and slot numbering
//     for irregular sources.
//   - Executor[T] (NewExecutor, Start, Wait, Stop, Status).
//
// # Writing a node
//
// A node kind is a Constructor: it reads its plan entry's params through the
// NodeContext and returns a Node, whose Start begins the work and whose Stop
// releases what it holds. A node placed on a loop (plan Placement.Loop) runs
// Start, Stop and all its handlers on that loop's thread and must never
// block it; a node placed on a thread (Placement.Thread) starts its work
// with ctx.Go. What a node registers through the context (Watch, AddTimer,
// Pace, Go) is cleaned up by the runtime when the node stops or its group
// restarts.
//
// A test-pattern source paced on its loop, fanning each frame out to its
// outputs from the loop:
//
//	type pattern struct{ pending []*frame.Frame }
//
//	func newPattern(n plan.Node, ctx *runtime.NodeContext[*frame.Frame]) (runtime.Node[*frame.Frame], error) {
//		return &pattern{pending: make([]*frame.Frame, len(ctx.Outputs))}, nil
//	}
//
//	func (p *pattern) Start(ctx *runtime.NodeContext[*frame.Frame]) error {
//		period, err := ctx.FramePeriod() // the show's frame rate
//		if err != nil {
//			return err
//		}
//		step := period.Convert(1, runtime.Base120k) // 4000 at 30 fps
//		pacer, err := runtime.NewPacer(runtime.PacerConfig{TimeBase: runtime.Base120k})
//		if err != nil {
//			return err
//		}
//		_, err = ctx.Pace(pacer, 0,
//			func(pts int64) (int64, bool) { return pts + step, true },
//			func(pts int64) {
//				for i := range ctx.Outputs {
//					f := p.pending[i]
//					if f == nil {
//						f = drawPattern(pts) // stamped in 1/120000 s
//					}
//					// On a loop, a full block edge answers ErrWouldBlock: keep
//					// the frame and offer it again next tick.
//					if _, err := ctx.Put(i, f); errors.Is(err, runtime.ErrWouldBlock) {
//						p.pending[i] = f
//						continue
//					}
//					p.pending[i] = nil
//				}
//			})
//		return err
//	}
//
//	func (p *pattern) Stop() {}
//
// Pass AlignPeriod: period and AlignOriginNs: ctx.GridOriginNs in the
// PacerConfig to release on the show's ticks: the loop then wakes once per
// tick for all its sources instead of once per source.
//
// A compositor on its own thread sleeps to its next tick and takes frames
// only from the inputs that signalled:
//
//	func (c *comp) Start(ctx *runtime.NodeContext[*frame.Frame]) error {
//		ready, err := ctx.ReadyInputs() // one signal for all inputs
//		if err != nil {
//			return err
//		}
//		mw, err := runtime.NewMultiWait(ctx.Done(), ready.Signal())
//		if err != nil {
//			return err
//		}
//		period, _ := ctx.FramePeriod()
//		ctx.Go(func() error {
//			defer mw.Close()
//			next := runtime.Now() + period.ToNanos(1)
//			var inputs []int
//			for !ctx.Stopping() {
//				// returns at next if nothing fired; an input poll interval
//				// (input_poll_ms) is a sleep here between looks
//				if _, err := mw.Wait(next); err != nil {
//					return err // fails the node: its group restarts
//				}
//				inputs = ready.Take(inputs[:0])
//				for _, i := range inputs {
//					c.takeLatest(ctx, i) // ctx.Get(i) until empty
//				}
//				if runtime.Now() >= next {
//					ctx.Put(0, c.draw())
//					next += period.ToNanos(1)
//				}
//			}
//			return nil
//		})
//		return nil
//	}
//
// A sink (a Y4M writer) takes frames on its thread with ctx.Take(0, -1),
// which returns false once the node stops, and closes its file in Stop. A
// node on a loop that consumes (a fan-out) watches its input instead:
//
//	ctx.Watch(ctx.Inputs[0].Produced(), func(r *runtime.Registration) {
//		for f, ok := ctx.Get(0); ok; f, ok = ctx.Get(0) {
//			for o := range ctx.Outputs {
//				ctx.Put(o, f)
//			}
//		}
//		r.Rearm() // one-shot: wait again
//	})
//
// The caller runs a plan with its registry:
//
//	x, err := runtime.NewExecutor(thePlan, func(kind string) (runtime.Constructor[*frame.Frame], bool) {
//		c, ok := registry[kind]
//		return c, ok
//	}, runtime.Options{})
//	if err == nil {
//		err = x.Start(ctx)
//	}
//	if err == nil {
//		<-ctx.Done() // or x.Failed()
//		err = x.Stop()
//	}
package runtime
