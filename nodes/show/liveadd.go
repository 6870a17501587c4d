package show

// Sources added on air. A change whose plan holds sources the show does
// not run (LiveChange.Grow: their nodes, the edges from them into the
// buses on air, their groups and new loops) starts them on the running
// executor (runtime.Executor.Extend: constructed by the backend, placed on
// the loops the plan's placement names, each group ready before the
// next), then hands the buses their new inputs, and only then adds the
// scenes that show them: a bus can be cut to a new source's scene only
// once the source has frames for it. Until then a cut to such a scene is
// refused, naming the source and how long ago it started (startingFor).
// A source added on air counts from its first frame (onair.go).

import (
	"fmt"
	gomaps "maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

// starting is what is being added on air now: each scene that waits for a
// new source, with the source and when it started.
type starting struct {
	mu     sync.Mutex
	scenes map[string]startingSource
}

type startingSource struct {
	source string
	since  int64 // the show's clock
}

// checkGrow checks what g adds against the show on air and returns the
// feeds (source, bus) its edges make, and what is wrong with it. canGrow
// is false where nothing can start nodes (a State without an executor).
func (b *State) checkGrow(g runtime.Extension, canGrow bool) (map[[2]string]bool, []string) {
	if len(g.Nodes) == 0 && len(g.Edges) == 0 {
		return nil, nil
	}
	if !canGrow {
		return nil, []string{"this show cannot start nodes on air"}
	}
	var problems []string
	on := b.topology()
	added := make(map[string]*plan.Node, len(g.Nodes))
	for i := range g.Nodes {
		n := &g.Nodes[i]
		switch {
		case !isSourceView(n.Address):
			problems = append(problems, fmt.Sprintf("%s (%s): on air only sources are added; this needs the show restarted", n.Address, n.ID))
		case on.sources[n.Address] != nil:
			problems = append(problems, fmt.Sprintf("%s: the show runs this source already; a node added to it (%s) needs the show restarted", n.Address, n.ID))
		}
		added[n.ID] = n
	}
	grows := map[[2]string]bool{}
	for _, e := range g.Edges {
		from := added[e.From]
		if from == nil {
			from = on.nodes[e.From]
		}
		to := on.nodes[e.To]
		if from != nil && to != nil && to.Kind == "compositor" && b.buses[to.Address] != nil {
			grows[[2]string{from.Address, to.Address}] = true
		}
	}
	return grows, problems
}

// allViews reports whether every entry of list is a source's view.
func allViews(list []string) bool {
	for _, sc := range list {
		if !isSourceView(sc) {
			return false
		}
	}
	return true
}

// newView is the view of src for bus, a route new to it: the source must
// be on air or added by the change, and feed the bus.
func (b *State) newView(bus, src string, grows map[[2]string]bool) (*plan.Scene, error) {
	if !b.feeds(src, bus) && !grows[[2]string{src, bus}] {
		return nil, fmt.Errorf("%s routes to %s, which does not feed it (the plan sent gives the bus no edge from it)", bus, src)
	}
	for _, n := range b.nodeMap() {
		if n.Address == bus && n.Kind == "compositor" {
			return b.viewOf(n, src)
		}
	}
	return nil, fmt.Errorf("%s: the show on air has no compositor for it: %w", bus, ErrNotFound)
}

// grow starts what g adds (extend) with the sources' states in the show,
// holding back, until it is ready, every scene of lists and next that
// shows one of them; on failure it takes the sources out again.
func (b *State) grow(g runtime.Extension, lists map[string][]string, next map[string]*plan.Scene, extend func(runtime.Extension) error) error {
	old := b.topology()
	t := &topology{nodes: gomaps.Clone(old.nodes), sources: gomaps.Clone(old.sources), stamps: gomaps.Clone(old.stamps), feeders: gomaps.Clone(old.feeders)}
	var srcs []string
	for i := range g.Nodes {
		n := g.Nodes[i]
		t.nodes[n.ID] = &n
		if t.sources[n.Address] == nil {
			srcs = append(srcs, n.Address)
		}
		t.addSource(n.Address)
		t.sources[n.Address].op = b.op
	}
	for _, e := range g.Edges {
		from, to := t.nodes[e.From], t.nodes[e.To]
		if from != nil && to != nil && to.Kind == "compositor" {
			t.feeders[[2]string{from.Address, to.Address}] = true
		}
	}
	now := b.opts.Clock()
	waiting := map[string]startingSource{}
	for _, list := range lists {
		for _, addr := range list {
			sc := next[addr]
			if sc == nil {
				continue
			}
			for _, l := range sc.Layers {
				if slices.Contains(srcs, l.Source) {
					waiting[addr] = startingSource{source: l.Source, since: now}
				}
			}
		}
	}
	b.adding.mu.Lock()
	b.adding.scenes = waiting
	b.adding.mu.Unlock()
	defer func() {
		b.adding.mu.Lock()
		b.adding.scenes = nil
		b.adding.mu.Unlock()
	}()
	b.topo.Store(t) // the constructors find the new nodes and sources
	if err := extend(g); err != nil {
		b.topo.Store(old)
		return fmt.Errorf("nothing changed: starting %s: %v: %w", strings.Join(srcs, ", "), err, ErrConflict)
	}
	for _, a := range srcs {
		b.snaps.addSource(a) // its tile on the page
	}
	return nil
}

// startingFor says why scene cannot be cut to yet, nil when it is not
// waiting for a source added on air.
func (b *State) startingFor(scene string) error {
	b.adding.mu.Lock()
	w, ok := b.adding.scenes[scene]
	b.adding.mu.Unlock()
	if !ok {
		return nil
	}
	ago := time.Duration(b.opts.Clock() - w.since).Round(time.Millisecond)
	return fmt.Errorf("%s shows %s, which is not ready yet (started %d ms ago); cut to it once onair apply has returned: %w", scene, w.source, ago.Milliseconds(), ErrConflict)
}
