package runtime

// Extend: nodes, edges, groups and loops added to a plan while it runs.
//
// Invariants:
//   - The new groups start in order, each ready (every edge leaving it has
//     carried a frame) before the next and before any edge into a running
//     node is handed over: a running node is never given an input that has
//     not produced.
//   - An edge into a running node is adopted by that node on its own
//     thread (NodeContext.AdoptInputs), so its inputs never change under
//     a handler; an edge out of a running node is added on the node's
//     loop, between its handlers. Extend returns once each was adopted.
//   - A node restarted later gets every edge added to it (its slot keeps
//     them), so a group restart rebuilds what Extend made.
//   - Nothing is added when a check fails; a group that fails to start or
//     to become ready is stopped and removed again, with what it made.

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onairhq/onair/plan"
)

// readySpare is how many inputs a node's ReadySet has room for beyond
// those it starts with: the inputs Extend may add to it while it runs.
const readySpare = 64

// Extension is what Extend adds to a running plan: new nodes in new
// groups, the edges among them, from them into running nodes, and from a
// running node on a loop (OutputsGrow) into them or into a running node,
// and the loops they are placed on that the plan does not run yet.
type Extension struct {
	Nodes  []plan.Node
	Edges  []plan.Edge
	Groups []plan.Group
	Loops  []plan.Loop
}

// added is what one Extend made, to undo it when a group fails.
type added[T any] struct {
	groups []*group[T]
	loops  []string
	edges  []*Edge[T]
}

// Extend adds ext to the running plan: it makes the new loops and edges,
// starts the new groups in their order, each ready within the ready
// timeout, then hands the edges into running nodes over and waits for the
// nodes to adopt them. On error nothing of ext is left running.
func (x *Executor[T]) Extend(ctx context.Context, ext Extension) error {
	x.extendMu.Lock()
	defer x.extendMu.Unlock()
	x.mu.Lock()
	stopping := x.stopping
	x.mu.Unlock()
	if x.started == 0 || stopping {
		return fmt.Errorf("plan %q: the executor is not running", x.plan.Show)
	}
	a, into, outOf, err := x.extendTopology(ext)
	if err != nil {
		return err
	}
	for _, g := range a.groups {
		began := time.Now()
		err := x.startGroup(g)
		if err == nil {
			err = x.waitReady(ctx, began, g)
		}
		if err != nil {
			x.undo(a)
			return err
		}
	}
	return x.handOver(ctx, a, into, outOf)
}

// link is an edge handed to a running node.
type link[T any] struct {
	slot *nodeSlot[T]
	edge *Edge[T]
}

// extendTopology checks ext against the running plan and makes its loops,
// edges, groups and node slots, under topo; it returns the edges into and
// out of running nodes, not handed over yet.
func (x *Executor[T]) extendTopology(ext Extension) (a added[T], into, outOf []link[T], err error) {
	x.topo.Lock()
	defer x.topo.Unlock()
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	newLoops := map[string]bool{}
	for _, l := range ext.Loops {
		switch {
		case x.loops[l.Name] != nil:
		case l.Kind != "":
			bad("loop %q is a %s loop, which a running plan cannot add", l.Name, l.Kind)
		case l.Name == "":
			bad("a loop has no name")
		default:
			newLoops[l.Name] = true
		}
	}
	groups := map[string]*group[T]{}
	for _, g := range ext.Groups {
		if x.groupNamedLocked(g.Name) != nil || groups[g.Name] != nil {
			bad("group %q runs already", g.Name)
			continue
		}
		gr := &group[T]{spec: g}
		gr.state.Store("stopped")
		groups[g.Name] = gr
		a.groups = append(a.groups, gr)
	}
	sort.SliceStable(a.groups, func(i, j int) bool {
		p, q := a.groups[i].spec, a.groups[j].spec
		if p.Order != q.Order {
			return p.Order < q.Order
		}
		return p.Name < q.Name
	})
	slots := map[string]*nodeSlot[T]{}
	for _, n := range ext.Nodes {
		if x.slots[n.ID] != nil || slots[n.ID] != nil {
			bad("node %q runs already", n.ID)
			continue
		}
		ctor, ok := x.lookup(n.Kind)
		if !ok || ctor == nil {
			bad("node %q: kind %q has no constructor in this backend", n.ID, n.Kind)
		}
		g := groups[n.Group]
		if g == nil {
			bad("node %q is in group %q, which the extension does not add", n.ID, n.Group)
			continue
		}
		loop := n.Placement.Loop
		if !n.Placement.Thread && loop == "" {
			loop = "default"
		}
		if loop != "" && x.loops[loop] == nil && !newLoops[loop] {
			bad("node %q is placed on loop %q, which neither the plan nor the extension runs", n.ID, loop)
		}
		s := &nodeSlot[T]{spec: n, ctor: ctor, state: "stopped"}
		slots[n.ID] = s
		g.nodes = append(g.nodes, s)
	}
	type pending struct {
		pe       plan.Edge
		from, to *nodeSlot[T]
		fromNew  bool
		toNew    bool
	}
	var edges []pending
	inputsOf := map[*nodeSlot[T]]int{}
	for _, pe := range ext.Edges {
		from, fromNew := slots[pe.From]
		if !fromNew {
			from = x.slots[pe.From]
		}
		to, toNew := slots[pe.To]
		if !toNew {
			to = x.slots[pe.To]
		}
		switch {
		case from == nil || to == nil:
			bad("edge %s -> %s names a node neither the plan nor the extension holds", pe.From, pe.To)
			continue
		case !fromNew && !toNew && x.joined(pe.From, pe.To):
			bad("edge %s -> %s runs already", pe.From, pe.To)
			continue
		}
		if _, err := ParsePolicy(pe.Policy); err != nil {
			bad("edge %s -> %s: %v", pe.From, pe.To, err)
		}
		if pe.Capacity < 1 {
			bad("edge %s -> %s: capacity %d: must be at least 1", pe.From, pe.To, pe.Capacity)
		}
		if !toNew {
			if why := adoptsInputs(to, inputsOf[to]+1); why != "" {
				bad("edge %s -> %s: %s", pe.From, pe.To, why)
			}
			inputsOf[to]++
		}
		if !fromNew {
			if why := takesOutputs(from); why != "" {
				bad("edge %s -> %s: %s", pe.From, pe.To, why)
			}
		}
		edges = append(edges, pending{pe: pe, from: from, to: to, fromNew: fromNew, toNew: toNew})
	}
	if len(problems) > 0 {
		return a, nil, nil, fmt.Errorf("plan %q cannot grow on air:\n  %s", x.plan.Show, strings.Join(problems, "\n  "))
	}
	for _, name := range slices.Sorted(mapKeys(newLoops)) {
		l, err := NewEventLoop(name)
		if err != nil {
			x.undoLocked(a)
			return a, nil, nil, fmt.Errorf("plan %q: %w", x.plan.Show, err)
		}
		x.loops[name] = l
		x.loopNames = append(x.loopNames, name)
		a.loops = append(a.loops, name)
	}
	for _, s := range slots {
		if !s.spec.Placement.Thread {
			name := s.spec.Placement.Loop
			if name == "" {
				name = "default"
			}
			s.loop = x.loops[name]
		}
	}
	for _, p := range edges {
		pol, _ := ParsePolicy(p.pe.Policy)
		e, err := NewEdge[T](EdgeConfig{From: p.pe.From, To: p.pe.To, Capacity: p.pe.Capacity, Policy: pol})
		if err != nil {
			x.undoLocked(a)
			return a, nil, nil, fmt.Errorf("plan %q: %w", x.plan.Show, err)
		}
		a.edges = append(a.edges, e)
		if p.fromNew {
			p.from.outputs = append(p.from.outputs, e)
		} else {
			outOf = append(outOf, link[T]{slot: p.from, edge: e})
		}
		if p.toNew {
			p.to.inputs = append(p.to.inputs, e)
		} else {
			into = append(into, link[T]{slot: p.to, edge: e})
		}
		// The edges leaving a new group are its readiness (waitReady).
		if gf := groups[p.from.spec.Group]; p.fromNew && (!p.toNew || groups[p.to.spec.Group] != gf) {
			gf.leaving = append(gf.leaving, e)
		}
	}
	x.edges = append(x.edges, a.edges...)
	for id, s := range slots {
		x.slots[id] = s
		x.slotGroup[id] = groups[s.spec.Group]
	}
	x.groups = append(x.groups, a.groups...)
	return a, into, outOf, nil
}

// adoptsInputs says why the running node of s cannot take n more inputs,
// "" when it can: it must read its inputs through a ReadySet with room.
func adoptsInputs[T any](s *nodeSlot[T], n int) string {
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	if ctx == nil {
		return s.spec.ID + " is not running"
	}
	ctx.mu.Lock()
	defer ctx.mu.Unlock()
	if len(ctx.sets) == 0 {
		return s.spec.ID + " does not read its inputs through a ready set, so its inputs are fixed while it runs"
	}
	if room := ctx.sets[0].Len() - len(ctx.Inputs) - len(ctx.pendingIn); n > room {
		return fmt.Sprintf("%s has room for %d more inputs while it runs; restart the show to add more", s.spec.ID, room)
	}
	return ""
}

// OutputsGrow is what a node implements whose outputs may grow while it
// runs on a loop (a fan-out that puts each frame on every output of
// NodeContext.Outputs as it finds them): Extend then adds an edge out of it
// on its loop, between its handlers.
type OutputsGrow interface {
	// OutputAdded is called on the node's loop once output i is in
	// NodeContext.Outputs.
	OutputAdded(i int)
}

// takesOutputs says why the running node of s cannot take an output, ""
// when it can.
func takesOutputs[T any](s *nodeSlot[T]) string {
	s.mu.Lock()
	node := s.node
	s.mu.Unlock()
	if _, ok := node.(OutputsGrow); !ok || s.loop == nil {
		return s.spec.ID + " keeps the outputs it started with while it runs (only a fan-out on a loop takes more)"
	}
	return ""
}

// handOver gives the edges out of running nodes to them (on their loops)
// and the edges into running nodes (adopted on their own threads), and
// waits until each node adopted its new inputs.
func (x *Executor[T]) handOver(ctx context.Context, a added[T], into, outOf []link[T]) error {
	for _, l := range outOf {
		s := l.slot
		s.mu.Lock()
		s.outputs = append(slices.Clip(s.outputs), l.edge) // a restart makes them all
		nctx := s.ctx
		s.mu.Unlock()
		if nctx != nil {
			s.mu.Lock()
			grows, _ := s.node.(OutputsGrow)
			s.mu.Unlock()
			if err := s.loop.Do(func() { grows.OutputAdded(nctx.addOutput(l.edge)) }); err != nil {
				return fmt.Errorf("node %s: %w", s.spec.ID, err)
			}
		}
	}
	var waits []func() bool
	for _, l := range into {
		s := l.slot
		s.mu.Lock()
		s.inputs = append(slices.Clip(s.inputs), l.edge)
		nctx := s.ctx
		s.mu.Unlock()
		if nctx == nil {
			continue
		}
		done := nctx.offerInput(l.edge)
		waits = append(waits, func() bool {
			s.mu.Lock()
			replaced := s.ctx != nctx // a new instance was built with the edge
			s.mu.Unlock()
			return replaced || done.Load()
		})
	}
	deadline := time.Now().Add(x.opts.ReadyTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for _, adopted := range waits {
		for !adopted() {
			if time.Now().After(deadline) {
				return fmt.Errorf("plan %q: a running node did not take its new input within %v", x.plan.Show, x.opts.ReadyTimeout)
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("plan %q: cancelled while a running node took its new input: %w", x.plan.Show, ctx.Err())
			case <-x.done:
				return fmt.Errorf("plan %q: stopped while a running node took its new input", x.plan.Show)
			case <-tick.C:
			}
		}
	}
	return nil
}

// undo stops and removes the groups, edges and loops a failed Extend made.
func (x *Executor[T]) undo(a added[T]) {
	for i := len(a.groups) - 1; i >= 0; i-- {
		x.stopGroup(a.groups[i], "stopped")
	}
	x.topo.Lock()
	defer x.topo.Unlock()
	x.undoLocked(a)
}

// undoLocked removes what a made from the executor; topo is held and a's
// groups are stopped.
func (x *Executor[T]) undoLocked(a added[T]) {
	for _, g := range a.groups {
		for _, s := range g.nodes {
			delete(x.slots, s.spec.ID)
			delete(x.slotGroup, s.spec.ID)
		}
	}
	x.groups = slices.DeleteFunc(x.groups, func(g *group[T]) bool { return slices.Contains(a.groups, g) })
	x.edges = slices.DeleteFunc(x.edges, func(e *Edge[T]) bool { return slices.Contains(a.edges, e) })
	for _, e := range a.edges {
		e.Close()
		e.Release()
	}
	for _, name := range a.loops {
		x.loops[name].Stop()
		delete(x.loops, name)
		x.loopNames = slices.DeleteFunc(x.loopNames, func(n string) bool { return n == name })
	}
}

// joined reports whether an edge from one node to another runs; topo is
// held.
func (x *Executor[T]) joined(from, to string) bool {
	for _, e := range x.edges {
		if c := e.Config(); c.From == from && c.To == to {
			return true
		}
	}
	return false
}

// groupNamed is the group of that name, nil if none.
func (x *Executor[T]) groupNamed(name string) *group[T] {
	x.topo.RLock()
	defer x.topo.RUnlock()
	return x.groupNamedLocked(name)
}

func (x *Executor[T]) groupNamedLocked(name string) *group[T] {
	for _, g := range x.groups {
		if g.spec.Name == name {
			return g
		}
	}
	return nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
