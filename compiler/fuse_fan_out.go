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
)

func fuseFanOut(st *state) {
	if st.Show.Canvas.SourceFanOut != "event_loop" {
		return
	}
	g := st.Graph
	for _, src := range st.Show.Sources {
		old := g.Node(src.Address() + "/one_to_many")
		if old == nil {
			continue
		}
		n := *old
		n.ID, n.Kind = src.Address()+"/one_to_many_nb", "one_to_many_nb"
		n.Params = copyParams(old.Params)
		ins := append([]*Edge(nil), g.In(old.ID)...)
		outs := append([]*Edge(nil), g.Out(old.ID)...)
		g.RemoveNode(old.ID)
		if !st.addNodeAt(&n, old) {
			continue
		}
		for _, e := range ins {
			c := *e
			c.To = n.ID
			g.AddEdge(&c)
		}
		for _, e := range outs {
			c := *e
			c.From = n.ID
			g.AddEdge(&c)
		}
		st.fused(plan.Fusion{Pass: "fuse fan-out", Group: n.Group, Removed: []string{old.ID}, Added: []string{n.ID},
			Reason: "source_fan_out = \"event_loop\": the fan-out runs on the source's pacing loop instead of a thread of its own"})
	}
}

func copyParams(p map[string]any) map[string]any {
	out := make(map[string]any, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}
