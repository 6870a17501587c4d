package runtime

// Nodes: what a node kind implements, and what the runtime hands it.
//
// Invariants:
//   - A Node instance lives for one start: Start once, Stop once. A group
//     restart builds fresh instances through the Constructor; the edges
//     (and the frames they hold) stay.
//   - A loop-placed node's Start and Stop run on its loop's thread, so they
//     never race its handlers; a thread-placed node's Start runs on the
//     executor's goroutine and starts its work with ctx.Go.
//   - Watches, timers and pacings made through the context are removed by
//     the runtime after Stop, and goroutines started with ctx.Go are waited
//     for: a stopped node leaves nothing running.
//   - A loop-placed node never blocks its loop: ctx.Put returns
//     ErrWouldBlock instead of waiting on a full block-policy edge.
//   - A node's ReadySets are detached from its inputs and freed after its
//     goroutines have exited.

import (
	"errors"
	"fmt"
	"log/slog"
	goruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/plan"
)

// Node is a running node of a plan.
type Node[T any] interface {
	// Start begins the node's work and returns without blocking: on a loop,
	// register watches and timers through ctx; on a thread, call ctx.Go.
	Start(ctx *NodeContext[T]) error
	// Stop ends the work Start began. The context is already stopping, its
	// Done signal notified and its edges' waiters woken; Stop releases what
	// the node holds (files, buffers). It is called even when Start failed,
	// so that it can release what Start took.
	Stop()
}

// Constructor makes a node of one kind from its plan entry. It checks the
// node's params and returns an error naming the bad one; it should not start
// anything (Start does).
type Constructor[T any] func(n plan.Node, ctx *NodeContext[T]) (Node[T], error)

// Lookup finds the constructor of a node kind: the caller's registry (the
// runtime never imports nodes/).
type Lookup[T any] func(kind string) (Constructor[T], bool)

// ErrWouldBlock is returned by NodeContext.Put on a loop's thread when a
// block-policy edge is full: keep the item and try again (on the next tick,
// or when the edge's Consumed signal fires).
var ErrWouldBlock = errors.New("edge full; a loop node must not block")

// NodeStats counts a node's traffic; NodeContext.Put and Take keep it.
type NodeStats struct {
	In     atomic.Uint64
	Out    atomic.Uint64
	Drops  atomic.Uint64
	Errors atomic.Uint64
	// Panics counts the failures that were panics recovered in its work.
	Panics atomic.Uint64
}

// NodeContext is what the runtime gives a node: its plan entry, its edges,
// its loop or thread, a logger and stats.
type NodeContext[T any] struct {
	// Plan is the node's plan entry; Show the plan's frame rate, size, format.
	Plan plan.Node
	Show *plan.Plan
	// Inputs and Outputs are the node's edges, in plan order.
	Inputs  []*Edge[T]
	Outputs []*Edge[T]
	// Log carries the node's id.
	Log   *slog.Logger
	Stats *NodeStats
	// GridOriginNs is the show's first frame tick (monotonic ns): pacers
	// given AlignOriginNs = GridOriginNs and AlignPeriod = the frame period
	// release on the show's ticks, so a loop wakes once per tick.
	GridOriginNs int64

	loop     *EventLoop
	done     *Signal
	stopping atomic.Bool
	fail     func(error)

	mu      sync.Mutex
	regs    []*Registration
	timers  []*Timer
	pacings []*Pacing
	sets    []*ReadySet
	tids    []int

	// pendingIn are the inputs Extend gave the running node, not adopted
	// yet (AdoptInputs); offered counts them, for a look without the lock.
	pendingIn []offered[T]
	offers    atomic.Int32
	wg        sync.WaitGroup
}

// threads reads the node's threads.
func (c *NodeContext[T]) threads() []ThreadStatus {
	c.mu.Lock()
	tids := append([]int(nil), c.tids...)
	c.mu.Unlock()
	var out []ThreadStatus
	for _, tid := range tids {
		if ts, err := ReadThread(tid); err == nil {
			out = append(out, ts)
		}
	}
	return out
}

// ID is the node's id.
func (c *NodeContext[T]) ID() string { return c.Plan.ID }

// Loop is the node's event loop; nil for a thread-placed node.
func (c *NodeContext[T]) Loop() *EventLoop { return c.loop }

// Stopping reports whether the node must stop.
func (c *NodeContext[T]) Stopping() bool { return c.stopping.Load() }

// Done is notified when the node must stop: add it to a MultiWait.
func (c *NodeContext[T]) Done() *Signal { return c.done }

// Fail reports that the node cannot go on: the runtime stops its group and,
// if the group is restartable, starts it again after the restart delay.
//
// A panic recovered in the node's work (a *panics.Error, however wrapped)
// is counted in the node's status as well, and its stack logged.
func (c *NodeContext[T]) Fail(err error) {
	c.Stats.Errors.Add(1)
	if pe := (*panics.Error)(nil); errors.As(err, &pe) {
		c.Stats.Panics.Add(1)
		pe.Log(c.Log) // unless its goroutine logged it
	}
	if !c.Stopping() {
		c.fail(fmt.Errorf("node %s: %w", c.Plan.ID, err))
	}
}

// Go runs fn on a goroutine locked to its own OS thread (the node's thread,
// named after the node's kind in /proc, listed in the node's status; it
// exits with fn). fn returns when ctx.Stopping() (watch ctx.Done()); a
// non-nil error, or a panic (logged with its stack: package panics),
// fails the node as Fail does.
func (c *NodeContext[T]) Go(fn func() error) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		goruntime.LockOSThread() // never unlocked: the named thread exits with fn
		tid := unix.Gettid()
		name := []byte(c.Plan.Kind)
		if len(name) > 15 {
			name = name[:15]
		}
		name = append(name, 0)
		unix.Prctl(unix.PR_SET_NAME, uintptr(unsafePointer(&name[0])), 0, 0, 0)
		c.mu.Lock()
		c.tids = append(c.tids, tid)
		c.mu.Unlock()
		err := panics.Run("the thread of node "+c.Plan.ID, c.Log, fn)
		if err != nil && !c.Stopping() {
			c.Fail(err)
		}
	}()
}

// recoverHandler turns a panic in one of the node's loop handlers into a
// failure of the node (its group restarts), so that one broken node cannot
// take the loop, and every other source on it, down with it.
func (c *NodeContext[T]) recoverHandler() {
	if p := recover(); p != nil {
		c.Fail(panics.From("a handler on loop "+c.loop.Name(), p, c.Log))
	}
}

// Watch waits on the node's loop for s; fn runs on the loop's thread and
// calls r.Rearm() to wait again. The runtime unregisters it after Stop.
func (c *NodeContext[T]) Watch(s *Signal, fn func(r *Registration)) (*Registration, error) {
	if c.loop == nil {
		return nil, fmt.Errorf("node %s: Watch needs an event loop; this node is placed on a thread (use a MultiWait)", c.Plan.ID)
	}
	r, err := c.loop.Watch(s, func(r *Registration) {
		defer c.recoverHandler()
		fn(r)
	})
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", c.Plan.ID, err)
	}
	c.mu.Lock()
	c.regs = append(c.regs, r)
	c.mu.Unlock()
	return r, nil
}

// AddTimer runs fn on the node's loop at monotonic time at (ns). The runtime
// stops it after Stop.
func (c *NodeContext[T]) AddTimer(at int64, fn func()) (*Timer, error) {
	if c.loop == nil {
		return nil, fmt.Errorf("node %s: AddTimer needs an event loop; this node is placed on a thread", c.Plan.ID)
	}
	t := c.loop.AddTimer(at, func() {
		defer c.recoverHandler()
		fn()
	})
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return t, nil
}

// Pace releases timestamps on the node's loop (see Pacer.Run); the runtime
// stops it after Stop.
func (c *NodeContext[T]) Pace(p *Pacer, first int64, next func(pts int64) (int64, bool), emit func(pts int64)) (*Pacing, error) {
	if c.loop == nil {
		return nil, fmt.Errorf("node %s: Pace needs an event loop; place the node on a pacing loop", c.Plan.ID)
	}
	g := p.Run(c.loop, first, func(pts int64) (int64, bool) {
		defer c.recoverHandler()
		return next(pts)
	}, func(pts int64) {
		defer c.recoverHandler()
		emit(pts)
	})
	c.mu.Lock()
	c.pacings = append(c.pacings, g)
	c.mu.Unlock()
	return g, nil
}

// Put sends v on output out following the edge's policy and counts it. On a
// full drop edge it returns (false, nil) and counts a drop. On a full block
// edge a thread-placed node waits (until the node stops: ErrCancelled); a
// loop-placed node never waits: it gets ErrWouldBlock, keeps v and offers it
// again (next tick, or when the edge's Consumed signal fires). A goroutine
// of a loop-placed node that may block calls Outputs[out].Put itself.
func (c *NodeContext[T]) Put(out int, v T) (bool, error) {
	e := c.Outputs[out]
	var ok bool
	var err error
	if c.loop != nil && e.cfg.Policy == Block {
		if ok, err = e.TryPut(v); err == nil && !ok {
			return false, ErrWouldBlock // not wrapped: this is the hot path, and allocates nothing
		}
	} else {
		ok, err = e.Put(v, c.Stopping)
	}
	switch {
	case ok:
		c.Stats.Out.Add(1)
	case err == nil:
		c.Stats.Drops.Add(1)
	}
	return ok, err
}

// ReadyInputs attaches every input to a new ReadySet (input i is index i)
// and returns it; the runtime detaches and frees it when the node stops. A
// compositor waits on its Signal (with ctx.Done in a MultiWait) and takes
// frames only from the inputs Take returns.
func (c *NodeContext[T]) ReadyInputs() (*ReadySet, error) {
	set, err := NewReadySet(len(c.Inputs) + readySpare) // room for inputs added while it runs (Extend)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", c.Plan.ID, err)
	}
	for i, e := range c.Inputs {
		e.Attach(set, i)
	}
	c.mu.Lock()
	c.sets = append(c.sets, set)
	c.mu.Unlock()
	return set, nil
}

// Get takes an item from input in without waiting, and counts it.
func (c *NodeContext[T]) Get(in int) (T, bool) {
	v, ok := c.Inputs[in].Get()
	if ok {
		c.Stats.In.Add(1)
	}
	return v, ok
}

// Take waits up to timeout (< 0: until the node stops) for an item on input
// in. Never call it on a loop's thread.
func (c *NodeContext[T]) Take(in int, timeout time.Duration) (T, bool) {
	v, ok := c.Inputs[in].Take(timeout, c.Stopping)
	if ok {
		c.Stats.In.Add(1)
	}
	return v, ok
}

// FramePeriod is the show's frame period (1/30 s for "30").
func (c *NodeContext[T]) FramePeriod() (TimeBase, error) {
	if c.Show == nil || c.Show.FrameRate.Den <= 0 {
		return NewTimeBase(1, 30)
	}
	return NewTimeBase(c.Show.FrameRate.Den, c.Show.FrameRate.Num)
}

// cancel marks the context stopping and wakes everything the node may wait
// on: its Done signal and both sides of its edges.
func (c *NodeContext[T]) cancel() {
	c.stopping.Store(true)
	c.done.Notify()
	c.mu.Lock() // the node may be adopting an input (AdoptInputs)
	defer c.mu.Unlock()
	for _, e := range c.Outputs {
		e.consumed.Notify()
	}
	for _, e := range c.Inputs {
		e.produced.Notify()
	}
}

// cleanup removes the loop items made through the context; on the loop's
// thread.
func (c *NodeContext[T]) cleanup() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.pacings {
		g.Stop()
	}
	for _, t := range c.timers {
		t.Stop()
	}
	for _, r := range c.regs {
		r.Unregister()
	}
	c.pacings, c.timers, c.regs = nil, nil, nil
}

// release frees what outlives the node's goroutines: its ready sets.
func (c *NodeContext[T]) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, set := range c.sets {
		for _, e := range c.Inputs {
			if rl := e.ready.Load(); rl != nil && rl.set == set {
				e.Attach(nil, 0)
			}
		}
		set.Close()
	}
	c.sets = nil
}

// offered is an input Extend gave a running node.
type offered[T any] struct {
	edge *Edge[T]
	done *atomic.Bool
}

// offerInput queues e for the running node to adopt on its own thread
// (AdoptInputs) and wakes it through its ready set; the flag returned is
// set once it has.
func (c *NodeContext[T]) offerInput(e *Edge[T]) *atomic.Bool {
	done := new(atomic.Bool)
	c.mu.Lock()
	c.pendingIn = append(c.pendingIn, offered[T]{edge: e, done: done})
	c.offers.Add(1)
	set := c.sets[0] // adoptsInputs checked there is one
	c.mu.Unlock()
	set.Signal().Notify()
	return done
}

// AdoptInputs takes the inputs the runtime added to the running node
// (Executor.Extend) into Inputs, each attached to the node's first ready
// set at its new index, and returns how many it took: call it from the
// node's own thread (its goroutine, or its loop's handlers) when its
// ready set signals, and grow what the node keeps per input. It costs one
// atomic load when there is nothing to take.
func (c *NodeContext[T]) AdoptInputs() int {
	if c.offers.Load() == 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.pendingIn)
	for _, o := range c.pendingIn {
		c.Inputs = append(slices.Clip(c.Inputs), o.edge)
		o.edge.Attach(c.sets[0], len(c.Inputs)-1)
		o.done.Store(true)
	}
	c.pendingIn = nil
	c.offers.Store(0)
	return n
}

// addOutput gives the running node an output edge and returns its index;
// on its loop's thread, between its handlers.
func (c *NodeContext[T]) addOutput(e *Edge[T]) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Outputs = append(slices.Clip(c.Outputs), e)
	return len(c.Outputs) - 1
}
