package compiler

// fuseFanOut runs each source's fan-out on the pacing loop that paces the
// source when canvas.source_fan_out = "event_loop": one_to_many (a thread
// per source) becomes one_to_many_nb (no thread).
//
// Needs: the checked graph with its final source chains. Leaves: each
// source's fan-out replaced, its edges moved over unchanged, each
// replacement in the fusion log. Placement puts the new node on the
// source's loop.

import (
	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/nodes"
)

func fuseFanOut(st *state) {
	if st.Show.Canvas.String("source_fan_out") != "event_loop" {
		return
	}
	g := st.Graph
	for _, src := range st.Show.Sources {
		old := g.Node(src.Address() + "/one_to_many")
		if old == nil {
			continue
		}
		oldID := old.ID
		decl, ok := nodes.Lookup("one_to_many_nb")
		if !ok {
			rng := old.Range
			st.errorf(&rng, "Unknown node kind", "source_fan_out = \"event_loop\" needs node kind one_to_many_nb, which is not registered in nodes/.")
			return
		}
		g.Rename(old, src.Address()+"/one_to_many_nb", "one_to_many_nb", decl)
		n := old
		st.fused(plan.Fusion{Pass: "fuse fan-out", Group: n.Group, Removed: []string{oldID}, Added: []string{n.ID},
			Reason: "source_fan_out = \"event_loop\": the fan-out runs on the source's pacing loop instead of a thread of its own"})
	}
}
