package compiler

// fuseInputRouting removes the routing node (the demuxer) of every
// one-stream file source when canvas.input_routing = "input": the reader
// hands the file's video straight to the decoder, saving a thread and a
// queue per source.
//
// Needs: the checked graph, after raw upload fusion. Leaves: reader →
// decoder for one-stream sources (streams == 1), each removal in the
// fusion log; with input_routing = "demux", or for files with more
// streams, the routing node stays.

import (
	"fmt"

	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

func fuseInputRouting(st *state) {
	if st.Show.Canvas.String("input_routing") != "input" {
		return
	}
	g := st.Graph
	for _, n := range g.Nodes() {
		if n.Source == nil || !n.Decl.Has(nodes.Routing) || intParam(n, "streams") != 1 {
			continue
		}
		ins, outs := g.In(n.ID), g.Out(n.ID)
		if len(ins) != 1 || len(outs) != 1 {
			continue
		}
		reader, to := g.Node(ins[0].From).Kind, outs[0].To
		g.Splice(n.ID)
		st.fused(plan.Fusion{Pass: "fuse input routing", Group: n.Group, Removed: []string{n.ID},
			Reason: fmt.Sprintf("input_routing = \"input\" and %s has one stream: %s feeds %s directly", n.Address, reader, to)})
	}
}

// fused appends to the fusion log (emit copies it into the plan).
func (st *state) fused(f plan.Fusion) { st.fusions = append(st.fusions, f) }
