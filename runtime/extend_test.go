package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/plan"
)

// TestExtendAddsASourceToARunningCompositor: a plan runs one source into
// a compositor on its thread; Extend adds a second source on a loop the
// plan did not run, into that compositor: the new group starts ready, the
// compositor takes its frames in order from the first one it was handed,
// the first source runs on undisturbed, and Status lists the new loop,
// group, node and edge. An extension that names a node nobody holds, or
// that repeats an edge that runs, or gives an output to a node that
// keeps its outputs, is refused whole and changes nothing.
func TestExtendAddsASourceToARunningCompositor(t *testing.T) {
	leakCheck(t)
	w := newWorld()
	p := &plan.Plan{Show: "extend", FrameRate: value.Rational{Num: 60, Den: 1}, Loops: []plan.Loop{{Name: "default"}, {Name: "pacing_0"}},
		Nodes: []plan.Node{
			{ID: "source.a/test_source", Kind: "test_source", Group: "source.a", Placement: plan.Placement{Loop: "pacing_0"}},
			{ID: "bus.pgm/compositor", Kind: "compositor", Group: "bus.pgm", Placement: plan.Placement{Thread: true}},
		},
		Edges:  []plan.Edge{{From: "source.a/test_source", To: "bus.pgm/compositor", Capacity: 3, Policy: "drop"}},
		Groups: []plan.Group{{Name: "source.a", Order: 0}, {Name: "bus.pgm", Order: 1}},
	}
	x, err := NewExecutor(p, w.lookup(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer x.Stop()
	const aIn, bIn = "source.a/test_source -> bus.pgm/compositor", "source.b/test_source -> bus.pgm/compositor"
	testwait.Until(t, testwait.Bound, "10 frames of source.a", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.consumed[aIn] >= 10
	})
	before := len(x.Status().Edges)
	for _, bad := range []struct {
		ext  Extension
		want string
	}{
		{Extension{Edges: []plan.Edge{{From: "source.zz/x", To: "bus.pgm/compositor", Capacity: 1, Policy: "drop"}}}, "names a node neither"},
		{Extension{Edges: []plan.Edge{{From: "source.a/test_source", To: "bus.pgm/compositor", Capacity: 1, Policy: "drop"}}}, "runs already"},
		{Extension{
			Nodes:  []plan.Node{{ID: "output.x/sink", Kind: "sink", Group: "output.x", Placement: plan.Placement{Thread: true}}},
			Groups: []plan.Group{{Name: "output.x"}},
			Edges:  []plan.Edge{{From: "source.a/test_source", To: "output.x/sink", Capacity: 1, Policy: "drop"}},
		}, "keeps the outputs it started with"},
	} {
		if err := x.Extend(context.Background(), bad.ext); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("extension %+v: %v, want an error saying %q", bad.ext, err, bad.want)
		}
	}
	if st := x.Status(); len(st.Edges) != before || len(st.Groups) != 2 {
		t.Fatalf("a refused extension changed the plan: %d edges, %d groups", len(st.Edges), len(st.Groups))
	}
	err = x.Extend(context.Background(), Extension{
		Nodes:  []plan.Node{{ID: "source.b/test_source", Kind: "test_source", Group: "source.b", Placement: plan.Placement{Loop: "pacing_1"}}},
		Edges:  []plan.Edge{{From: "source.b/test_source", To: "bus.pgm/compositor", Capacity: 3, Policy: "drop"}},
		Groups: []plan.Group{{Name: "source.b", Order: 0}},
		Loops:  []plan.Loop{{Name: "pacing_1"}},
	})
	if err != nil {
		t.Fatalf("extend: %v", err)
	}
	w.mu.Lock()
	a0 := w.consumed[aIn]
	w.mu.Unlock()
	testwait.Until(t, testwait.Bound, "20 frames of source.b and 20 more of source.a", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.consumed[bIn] >= 20 && w.consumed[aIn] >= a0+20
	})
	x.Stop()
	st := x.Status()
	var loops, groups []string
	for _, l := range st.Loops {
		loops = append(loops, l.Name)
	}
	for _, g := range st.Groups {
		groups = append(groups, g.Name)
	}
	if got := strings.Join(loops, " "); got != "default pacing_0 pacing_1" {
		t.Errorf("loops %s", got)
	}
	if got := strings.Join(groups, " "); got != "source.a bus.pgm source.b" {
		t.Errorf("groups %s", got)
	}
	var fromB *EdgeStats
	for i := range st.Edges {
		if st.Edges[i].Name == bIn {
			fromB = &st.Edges[i]
		}
	}
	if fromB == nil || fromB.DequeuedTotal < 20 {
		t.Fatalf("status of the new edge: %+v", fromB)
	}
}
