package runtime

// Plan execution.
//
// Invariants:
//   - Loops and edges are made once, before any node, and outlive every
//     node: a group restart keeps the frames its edges hold.
//   - Groups start in waves: a group starts once every group it depends
//     on is ready, and the groups of a wave (in the plan's order: Order,
//     then name) start Options.StartAtOnce at a time, the next as one is
//     ready. Each must be ready (every edge leaving it has carried a
//     frame), and Options.ReadyTimeout never passes without one more group
//     of the wave becoming ready, or Start fails naming each edge that
//     never carried one, and leaves nothing running.
//   - A group's start and stop never overlap (a node can fail while its
//     group is still starting; the stop waits for the start to finish).
//   - A node failure stops its whole group; a restartable group starts
//     again (fresh node instances) after Options.RestartDelay, any other
//     failure stops the run and Wait returns it.
//   - Stop cancels every node first (so none stays blocked on an edge whose
//     other side stops), then stops nodes in reverse group order, waits for
//     their goroutines, stops the loops and frees the edges: nothing is left.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/plan"
)

// DefaultStartAtOnce is how many groups of a start wave start at once by
// default: enough that sources whose first picture waits on a sender or a
// loss timeout overlap, few enough that decoders being set up do not hold
// each other back.
const DefaultStartAtOnce = 8

// Options tune an Executor; the zero value is the default.
type Options struct {
	// ReadyTimeout bounds a start wave's readiness wait while none of its
	// groups becomes ready; 0 means 10 s.
	ReadyTimeout time.Duration
	// StartAtOnce is how many groups of a start wave may be starting (not
	// yet ready) at once; 0 means DefaultStartAtOnce.
	StartAtOnce int
	// RestartDelay is the pause before a failed restartable group starts
	// again; 0 means 1 s.
	RestartDelay time.Duration
	// Logger receives the runtime's log; nil discards it.
	Logger *slog.Logger
}

// Executor runs a plan.
type Executor[T any] struct {
	plan    *plan.Plan
	lookup  Lookup[T]
	opts    Options
	log     *slog.Logger
	started int64

	// topo guards what Extend grows while the plan runs: the loops, edges,
	// groups and nodes (Status, Stop and the supervisor read them under it).
	topo      sync.RWMutex
	extendMu  sync.Mutex // one Extend at a time
	loops     map[string]*EventLoop
	loopNames []string
	edges     []*Edge[T]
	groups    []*group[T]
	slots     map[string]*nodeSlot[T]
	slotGroup map[string]*group[T]
	sampler   *CPUSampler
	failed    chan struct{} // closed when a failure ends the run

	mu       sync.Mutex
	stopping bool
	err      error
	failures chan failure
	done     chan struct{}
	superv   sync.WaitGroup
	stopOnce sync.Once
}

type failure struct {
	g   string
	gen uint64
	err error
}

type group[T any] struct {
	opMu        sync.Mutex // held by startGroup and stopGroup: one at a time
	spec        plan.Group
	nodes       []*nodeSlot[T]
	leaving     []*Edge[T]
	gen         atomic.Uint64
	restarts    atomic.Uint64
	state       atomic.Value // string
	ready       atomic.Bool
	readyNs     atomic.Int64 // from its start to ready, at the show's start
	wave        atomic.Int64 // the start wave it began in (Executor.waves)
	waveReadyNs atomic.Int64 // from its wave's start to ready
}

type nodeSlot[T any] struct {
	spec     plan.Node
	ctor     Constructor[T]
	loop     *EventLoop
	inputs   []*Edge[T]
	outputs  []*Edge[T]
	stats    NodeStats
	restarts atomic.Uint64
	mu       sync.Mutex
	node     Node[T]
	ctx      *NodeContext[T]
	state    string
	lastErr  string
}

// NewExecutor checks p against the constructors lookup knows and prepares
// to run it; nothing starts until Start. Every problem is reported at once.
func NewExecutor[T any](p *plan.Plan, lookup Lookup[T], opts Options) (*Executor[T], error) {
	if p == nil || lookup == nil {
		return nil, errors.New("executor: a plan and a constructor lookup are required")
	}
	if opts.StartAtOnce <= 0 {
		opts.StartAtOnce = DefaultStartAtOnce
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 10 * time.Second
	}
	if opts.RestartDelay <= 0 {
		opts.RestartDelay = time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	x := &Executor[T]{plan: p, lookup: lookup, opts: opts, log: log, failures: make(chan failure, 64), done: make(chan struct{}), failed: make(chan struct{})}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }

	loopSet := map[string]bool{"default": true}
	for _, l := range p.Loops {
		if l.Name == "" {
			bad("a loop has no name")
		}
		loopSet[l.Name] = true
	}
	groups := map[string]*group[T]{}
	for _, g := range p.Groups {
		if groups[g.Name] != nil {
			bad("group %q is declared twice", g.Name)
			continue
		}
		gr := &group[T]{spec: g}
		gr.state.Store("stopped")
		groups[g.Name] = gr
		x.groups = append(x.groups, gr)
	}
	for _, g := range p.Groups {
		for _, d := range g.DependsOn {
			if dg := groups[d]; dg == nil {
				bad("group %q depends on %q, which the plan does not declare", g.Name, d)
			} else if dg.spec.Order >= g.Order {
				bad("group %q (order %d) depends on %q, which starts at order %d: a dependency must start first; recompile the plan", g.Name, g.Order, d, dg.spec.Order)
			}
		}
	}
	sort.SliceStable(x.groups, func(i, j int) bool {
		a, b := x.groups[i].spec, x.groups[j].spec
		if a.Order != b.Order {
			return a.Order < b.Order
		}
		return a.Name < b.Name
	})
	slots := map[string]*nodeSlot[T]{}
	slotGroup := map[string]*group[T]{}
	for _, n := range p.Nodes {
		if slots[n.ID] != nil {
			bad("node %q is declared twice", n.ID)
			continue
		}
		ctor, ok := lookup(n.Kind)
		if !ok || ctor == nil {
			bad("node %q: kind %q has no constructor in this backend", n.ID, n.Kind)
		}
		loop := n.Placement.Loop
		if !n.Placement.Thread && loop == "" {
			loop = "default"
		}
		if loop != "" && !loopSet[loop] {
			bad("node %q is placed on loop %q, which the plan does not declare", n.ID, loop)
		}
		g := groups[n.Group]
		if g == nil {
			bad("node %q is in group %q, which the plan does not declare", n.ID, n.Group)
		}
		s := &nodeSlot[T]{spec: n, ctor: ctor, state: "stopped"}
		slots[n.ID] = s
		slotGroup[n.ID] = g
		if g != nil {
			g.nodes = append(g.nodes, s)
		}
	}
	for i, e := range p.Edges {
		from, to := slots[e.From], slots[e.To]
		if from == nil || to == nil {
			bad("edge %d (%s -> %s) names a node the plan does not declare", i, e.From, e.To)
			continue
		}
		if _, err := ParsePolicy(e.Policy); err != nil {
			bad("edge %s -> %s: %v", e.From, e.To, err)
		}
		if e.Capacity < 1 {
			bad("edge %s -> %s: capacity %d: must be at least 1", e.From, e.To, e.Capacity)
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("plan %q cannot run:\n  %s", p.Show, strings.Join(problems, "\n  "))
	}
	// Loop names in a stable order: default first, then the plan's.
	x.loopNames = []string{"default"}
	for _, l := range p.Loops {
		if l.Name != "default" && l.Kind == "" {
			x.loopNames = append(x.loopNames, l.Name)
		}
	}
	x.loops = map[string]*EventLoop{}
	x.slots, x.slotGroup = slots, slotGroup
	return x, nil
}

// Start makes the loops and edges, then starts the groups wave by wave
// (waves), each wave ready before the next. On error nothing is left running.
func (x *Executor[T]) Start(ctx context.Context) error {
	if x.started != 0 {
		return fmt.Errorf("plan %q: the executor was started already; make a new one", x.plan.Show)
	}
	x.started = Now()
	x.sampler = NewCPUSampler()
	for _, name := range x.loopNames {
		l, err := NewEventLoop(name)
		if err != nil {
			x.Stop()
			return fmt.Errorf("plan %q: %w", x.plan.Show, err)
		}
		x.loops[name] = l
	}
	for _, pe := range x.plan.Edges {
		pol, _ := ParsePolicy(pe.Policy)
		e, err := NewEdge[T](EdgeConfig{From: pe.From, To: pe.To, Capacity: pe.Capacity, Policy: pol})
		if err != nil {
			x.Stop()
			return fmt.Errorf("plan %q: %w", x.plan.Show, err)
		}
		x.edges = append(x.edges, e)
		from, to := x.slots[pe.From], x.slots[pe.To]
		from.outputs = append(from.outputs, e)
		to.inputs = append(to.inputs, e)
		if gf, gt := x.slotGroup[pe.From], x.slotGroup[pe.To]; gf != gt {
			gf.leaving = append(gf.leaving, e)
		}
	}
	for _, s := range x.slots {
		if s.spec.Placement.Thread {
			continue
		}
		name := s.spec.Placement.Loop
		if name == "" {
			name = "default"
		}
		s.loop = x.loops[name] // nil on a backend's loop: the node runs there itself
	}
	x.superv.Add(1)
	go x.supervise()
	for i, wave := range x.waves() {
		for _, g := range wave {
			g.wave.Store(int64(i))
		}
		if err := x.startWave(ctx, wave); err != nil {
			x.Stop()
			return err
		}
	}
	return nil
}

// waves splits the groups into start waves: a group is in the first wave
// after every group it depends on, as the plan declares (DependsOn) or as
// an edge into it from a group earlier in the order says. The groups of a
// wave start one after another (a node's start is quick) and become ready
// together, so a show's sources, each of which may take its loss timeout
// to give its first picture (a live source whose sender is not there yet),
// wait once and not once each. Within a wave, the plan's order.
func (x *Executor[T]) waves() [][]*group[T] {
	feeds := map[*group[T]][]*group[T]{} // group -> the groups with an edge into it
	for _, pe := range x.plan.Edges {
		if gf, gt := x.slotGroup[pe.From], x.slotGroup[pe.To]; gf != gt && gf != nil && gt != nil {
			feeds[gt] = append(feeds[gt], gf)
		}
	}
	level := map[*group[T]]int{}
	byName := map[string]*group[T]{}
	var out [][]*group[T]
	for _, g := range x.groups { // in order: a dependency comes first (New checks)
		l := 0
		for _, d := range g.spec.DependsOn {
			if dg, ok := byName[d]; ok {
				l = max(l, level[dg]+1)
			}
		}
		for _, f := range feeds[g] {
			if fl, ok := level[f]; ok { // earlier in the order: not a loop back
				l = max(l, fl+1)
			}
		}
		level[g], byName[g.spec.Name] = l, g
		for len(out) <= l {
			out = append(out, nil)
		}
		out[l] = append(out[l], g)
	}
	return out
}

// startWave starts the groups of a wave, at most Options.StartAtOnce of
// them starting and not yet ready at any moment (a start of 105 NVDEC
// sources at once left none ready after 10 s on the H200, while one after
// another each took 170 ms), the next starting as one becomes ready, and
// returns once every one is ready. It fails when Options.ReadyTimeout
// passes without one more of them becoming ready, naming those that are
// not.
func (x *Executor[T]) startWave(ctx context.Context, wave []*group[T]) error {
	began := time.Now()
	queue, active := wave, []*group[T](nil)
	started := map[*group[T]]time.Time{}
	deadline := began.Add(x.opts.ReadyTimeout)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		for len(queue) > 0 && len(active) < x.opts.StartAtOnce {
			g := queue[0]
			queue = queue[1:]
			started[g] = time.Now()
			if err := x.startGroup(g); err != nil {
				return err
			}
			active = append(active, g)
		}
		var late []string
		rest := active[:0]
		for _, g := range active {
			if missing := g.silentEdges(); len(missing) > 0 {
				rest = append(rest, g)
				late = append(late, fmt.Sprintf("group %q: edge %s never carried a frame", g.spec.Name, quoteAll(missing)))
				continue
			}
			g.readyNs.Store(int64(time.Since(started[g])))
			g.waveReadyNs.Store(int64(time.Since(began)))
			g.ready.Store(true)
			g.state.Store("running")
		}
		if len(rest) < len(active) {
			deadline = time.Now().Add(x.opts.ReadyTimeout) // progress: the others get the timeout again
		}
		active = rest
		if len(active) == 0 && len(queue) == 0 {
			return nil
		}
		if len(active) < x.opts.StartAtOnce && len(queue) > 0 {
			continue // room to start more
		}
		if time.Now().After(deadline) {
			what := fmt.Sprintf("%d group(s) not ready after %v (%v with none of them becoming ready)", len(active)+len(queue), time.Since(began).Round(time.Millisecond), x.opts.ReadyTimeout)
			if len(late) > 8 {
				late = append(late[:8], fmt.Sprintf("and %d more", len(late)-8))
			}
			if len(queue) > 0 {
				late = append(late, fmt.Sprintf("%d not started yet", len(queue)))
			}
			return fmt.Errorf("%s: %s; check that its source produces (its log, its params), or raise the ready timeout", what, strings.Join(late, "; "))
		}
		if err := x.waitTick(ctx, tick, active[0]); err != nil {
			return err
		}
	}
}

// silentEdges names the edges leaving g that have not carried a frame.
func (g *group[T]) silentEdges() []string {
	var missing []string
	for _, e := range g.leaving {
		if e.enqueued.Load() == 0 {
			missing = append(missing, e.Name())
		}
	}
	return missing
}

// waitTick waits for the next poll of a readiness wait, or for what ends
// it: the start cancelled, a node failed, the run stopped.
func (x *Executor[T]) waitTick(ctx context.Context, tick *time.Ticker, g *group[T]) error {
	select {
	case <-ctx.Done():
		return fmt.Errorf("group %q: start cancelled while waiting for readiness: %w", g.spec.Name, ctx.Err())
	case <-x.failed:
		return x.Err()
	case <-x.done: // stopped while a group added on air got ready (Extend)
		return fmt.Errorf("group %q: the run stopped while waiting for readiness", g.spec.Name)
	case <-tick.C:
		return nil
	}
}

// waitReady waits until every edge leaving g (started at began) has
// carried a frame, within Options.ReadyTimeout.
func (x *Executor[T]) waitReady(ctx context.Context, began time.Time, g *group[T]) error {
	deadline := began.Add(x.opts.ReadyTimeout)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		missing := g.silentEdges()
		if len(missing) == 0 {
			g.readyNs.Store(int64(time.Since(began)))
			g.waveReadyNs.Store(int64(time.Since(began)))
			g.ready.Store(true)
			g.state.Store("running")
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("group %q not ready after %v: edge %s never carried a frame; check that its source produces (its log, its params), or raise the ready timeout", g.spec.Name, x.opts.ReadyTimeout, quoteAll(missing))
		}
		if err := x.waitTick(ctx, tick, g); err != nil {
			return err
		}
	}
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// startGroup builds and starts fresh instances of g's nodes.
func (x *Executor[T]) startGroup(g *group[T]) error {
	g.opMu.Lock()
	defer g.opMu.Unlock()
	gen := g.gen.Add(1)
	g.state.Store("starting")
	for i, s := range g.nodes {
		if err := x.startNode(g, gen, s); err != nil {
			for _, t := range g.nodes[:i] {
				x.stopNode(t, "failed")
			}
			g.state.Store("failed")
			return fmt.Errorf("group %q: %w", g.spec.Name, err)
		}
	}
	g.state.Store("running")
	return nil
}

func (x *Executor[T]) startNode(g *group[T], gen uint64, s *nodeSlot[T]) error {
	done, err := NewSignal()
	if err != nil {
		return fmt.Errorf("node %s: %w", s.spec.ID, err)
	}
	ctx := &NodeContext[T]{
		Plan: s.spec, Show: x.plan, Inputs: s.inputs, Outputs: s.outputs,
		Log: x.log.With("node", s.spec.ID), Stats: &s.stats, loop: s.loop, done: done, GridOriginNs: x.started,
		fail: func(err error) { s.setErr(err); x.report(g, gen, err) },
	}
	node, err := safely(s.spec.ID, "constructor", ctx.Log, func() (Node[T], error) { return s.ctor(s.spec, ctx) })
	if err == nil && node == nil {
		err = fmt.Errorf("node %s: the %q constructor returned no node", s.spec.ID, s.spec.Kind)
	}
	if err == nil {
		start := func() (Node[T], error) { return node, node.Start(ctx) }
		if s.loop != nil {
			if derr := s.loop.Do(func() { _, err = safely(s.spec.ID, "Start", ctx.Log, start) }); derr != nil {
				err = derr
			}
		} else {
			_, err = safely(s.spec.ID, "Start", ctx.Log, start)
		}
	}
	s.mu.Lock()
	s.node, s.ctx = node, ctx
	s.mu.Unlock()
	if err != nil {
		s.setErr(err)
		x.stopNode(s, "failed")
		return err
	}
	s.mu.Lock()
	s.state = "running"
	s.mu.Unlock()
	return nil
}

func (s *nodeSlot[T]) setErr(err error) {
	s.mu.Lock()
	s.lastErr = err.Error()
	s.mu.Unlock()
}

// cancelNode marks a node stopping and wakes its waits.
func (s *nodeSlot[T]) cancelNode() {
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	if ctx != nil {
		ctx.cancel()
	}
}

// safely runs a node's constructor or Start, turning a panic into an error
// naming the node, so a broken node fails its group instead of the process.
func safely[T any](id, what string, log *slog.Logger, fn func() (Node[T], error)) (n Node[T], err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("node %s: %w", id, panics.From(what, p, log))
		}
	}()
	return fn()
}

// stopNode stops a node instance and waits for everything it started.
func (x *Executor[T]) stopNode(s *nodeSlot[T], state string) {
	s.mu.Lock()
	ctx, node := s.ctx, s.node
	s.ctx, s.node, s.state = nil, nil, state
	s.mu.Unlock()
	if ctx == nil {
		return
	}
	ctx.cancel()
	stop := func() {
		if node != nil {
			func() {
				defer func() {
					if p := recover(); p != nil {
						panics.From("Stop of node "+s.spec.ID, p, x.log)
					}
				}()
				node.Stop()
			}()
		}
		ctx.cleanup()
	}
	if s.loop != nil {
		if err := s.loop.Do(stop); err != nil {
			stop() // the loop is gone: nothing runs there any more
		}
	} else {
		stop()
	}
	ctx.wg.Wait()
	ctx.release()
	ctx.done.Close()
}

func (x *Executor[T]) stopGroup(g *group[T], state string) {
	// A node may fail while its group is still starting: the supervisor's
	// stop then waits here for the start to finish, and stops it all.
	g.opMu.Lock()
	defer g.opMu.Unlock()
	g.gen.Add(1) // failures reported by the old instances are stale now
	g.ready.Store(false)
	for _, s := range g.nodes {
		s.cancelNode()
	}
	for i := len(g.nodes) - 1; i >= 0; i-- {
		x.stopNode(g.nodes[i], state)
	}
}

func (x *Executor[T]) report(g *group[T], gen uint64, err error) {
	select {
	case x.failures <- failure{g: g.spec.Name, gen: gen, err: err}:
	default: // the supervisor is behind; this group already has a failure queued
	}
}

// supervise restarts failed restartable groups and ends the run on any
// other failure.
func (x *Executor[T]) supervise() {
	defer x.superv.Done()
	for {
		var f failure
		select {
		case <-x.done:
			return
		case f = <-x.failures:
		}
		g := x.groupNamed(f.g) // Extend may add groups
		if g == nil || f.gen != g.gen.Load() {
			continue
		}
		if !g.spec.Restartable {
			x.log.Error("group failed; stopping the show", "group", g.spec.Name, "err", f.err)
			x.mu.Lock()
			if x.err == nil {
				x.err = fmt.Errorf("group %q failed and is not restartable: %w", g.spec.Name, f.err)
				close(x.failed)
			}
			x.mu.Unlock()
			g.state.Store("failed")
			continue
		}
		x.log.Warn("group failed; restarting", "group", g.spec.Name, "after", x.opts.RestartDelay, "err", f.err)
		g.state.Store("restarting")
		x.stopGroup(g, "restarting")
		for {
			select {
			case <-x.done:
				return
			case <-time.After(x.opts.RestartDelay):
			}
			g.restarts.Add(1)
			for _, s := range g.nodes {
				s.restarts.Add(1)
			}
			carried := make([]uint64, len(g.leaving))
			for i, e := range g.leaving {
				carried[i] = e.enqueued.Load()
			}
			if err := x.startGroup(g); err != nil {
				x.log.Warn("group restart failed; trying again", "group", g.spec.Name, "err", err)
				continue
			}
			x.superv.Add(1)
			go x.readyAgain(g, g.gen.Load(), carried)
			break
		}
	}
}

// readyAgain marks a restarted group ready once every edge leaving it has
// carried a frame of the new instances (more than carried[i] in all), or
// logs the edges that carried none within the ready timeout. It gives up
// when the group restarts again (gen changes) or the run stops.
func (x *Executor[T]) readyAgain(g *group[T], gen uint64, carried []uint64) {
	defer x.superv.Done()
	deadline := time.Now().Add(x.opts.ReadyTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if g.gen.Load() != gen {
			return
		}
		var missing []string
		for i, e := range g.leaving {
			if e.enqueued.Load() <= carried[i] {
				missing = append(missing, e.Name())
			}
		}
		if len(missing) == 0 {
			g.ready.Store(true)
			return
		}
		if time.Now().After(deadline) {
			x.log.Error("restarted group not ready", "group", g.spec.Name, "after", x.opts.ReadyTimeout, "silent_edges", quoteAll(missing))
			return
		}
		select {
		case <-x.done:
			return
		case <-tick.C:
		}
	}
}

// Wait blocks until the run fails (and returns why) or Stop is called
// (and returns nil).
func (x *Executor[T]) Wait() error {
	select {
	case <-x.failed:
	case <-x.done:
	}
	return x.Err()
}

// Err is the failure that ended the run, if any.
func (x *Executor[T]) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// Failed is closed when a failure ends the run.
func (x *Executor[T]) Failed() <-chan struct{} { return x.failed }

// Stop stops every node, loop and edge; it returns the run's failure, if
// any. Safe to call more than once.
func (x *Executor[T]) Stop() error {
	x.stopOnce.Do(func() {
		x.mu.Lock()
		x.stopping = true
		x.mu.Unlock()
		close(x.done)
		x.superv.Wait()
		x.extendMu.Lock() // an Extend under way finishes (or fails) first
		defer x.extendMu.Unlock()
		for _, g := range x.groups {
			for _, s := range g.nodes {
				s.cancelNode()
			}
		}
		for i := len(x.groups) - 1; i >= 0; i-- {
			x.stopGroup(x.groups[i], "stopped")
			x.groups[i].state.Store("stopped")
		}
		for _, e := range x.edges {
			e.Close()
		}
		for _, name := range x.loopNames {
			if l := x.loops[name]; l != nil {
				l.Stop()
			}
		}
		for _, e := range x.edges {
			e.Release()
		}
	})
	return x.Err()
}

// Loop returns a loop by name ("default", "pacing_0", ...), nil if none.
func (x *Executor[T]) Loop(name string) *EventLoop {
	x.topo.RLock()
	defer x.topo.RUnlock()
	return x.loops[name]
}

// Status reads every loop, group, node, edge and thread.
func (x *Executor[T]) Status() Status {
	st := Status{Show: x.plan.Show}
	if x.started != 0 {
		st.Uptime = Now() - x.started
	}
	if x.sampler != nil {
		st.Process = x.sampler.Sample()
	}
	x.topo.RLock()
	defer x.topo.RUnlock()
	for _, name := range x.loopNames {
		if l := x.loops[name]; l != nil {
			st.Loops = append(st.Loops, LoopStatusOf(l))
		}
	}
	for _, g := range x.groups {
		st.Groups = append(st.Groups, GroupStatus{Name: g.spec.Name, Order: g.spec.Order, State: g.state.Load().(string), Ready: g.ready.Load(), ReadyMs: float64(g.readyNs.Load()) / 1e6, Wave: int(g.wave.Load()), WaveReadyMs: float64(g.waveReadyNs.Load()) / 1e6, Restarts: g.restarts.Load()})
		for _, s := range g.nodes {
			s.mu.Lock()
			ns := NodeStatus{ID: s.spec.ID, Kind: s.spec.Kind, Group: g.spec.Name, Thread: s.spec.Placement.Thread, State: s.state, LastError: s.lastErr}
			ctx := s.ctx
			s.mu.Unlock()
			if ctx != nil {
				ns.Threads = ctx.threads()
			}
			if s.loop != nil {
				ns.Loop = s.loop.Name()
			}
			ns.Restarts = s.restarts.Load()
			ns.FramesIn, ns.FramesOut, ns.Drops, ns.Errors = s.stats.In.Load(), s.stats.Out.Load(), s.stats.Drops.Load(), s.stats.Errors.Load()
			ns.Panics = s.stats.Panics.Load()
			st.Nodes = append(st.Nodes, ns)
		}
	}
	for _, e := range x.edges {
		st.Edges = append(st.Edges, e.Stats())
	}
	st.Threads, _ = ReadThreads()
	return st
}
