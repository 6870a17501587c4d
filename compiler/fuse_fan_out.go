package compiler

// fuseFanOut runs each source's fan-out on the pacing loop that paces the
// source when canvas.source_fan_out = "event_loop": a fan-out with a thread
// of its own becomes the kind its declaration names to do its work on the
// loop (nodes.Fuses.OnLoop: one_to_many becomes one_to_many_nb).
//
// Needs: the checked graph with its final source chains. Leaves: each
// source's fan-out replaced, its edges moved over unchanged, each
// replacement in the fusion log. Placement puts the new node on the
// source's loop.

import (
	"github.com/onairhq/onair/plan"
)

func fuseFanOut(st *state) {
	if st.Show.Canvas.String("source_fan_out") != "event_loop" {
		return
	}
	g := st.Graph
	for _, old := range g.Nodes() {
		if old.Source == nil || old.Decl.Fuses.OnLoop == "" {
			continue
		}
		oldID := old.ID
		decl, ok := st.fusedKind(old, old.Decl.Fuses.OnLoop)
		if !ok {
			return
		}
		g.Rename(old, old.Address+"/"+decl.Name, decl.Name, decl)
		n := old
		st.fused(plan.Fusion{Pass: "fuse fan-out", Group: n.Group, Removed: []string{oldID}, Added: []string{n.ID},
			Reason: "source_fan_out = \"event_loop\": the fan-out runs on the source's pacing loop instead of a thread of its own"})
	}
}
