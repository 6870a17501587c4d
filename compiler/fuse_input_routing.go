package compiler

// fuseInputRouting removes the demuxer of every one-stream file source
// when canvas.input_routing = "input": input_rec hands the file's video
// straight to the decoder, saving a thread and a queue per source.
//
// Needs: the checked graph, after raw upload fusion. Leaves: input_rec → dec_video for
// one-stream sources (streams == 1), each removal in the fusion log; with
// input_routing = "demux", or for files with more streams, the demuxer
// stays.

import (
	"fmt"

	"github.com/onairhq/onair/compiler/plan"
)

func fuseInputRouting(st *state) {
	if st.Show.Canvas.String("input_routing") != "input" {
		return
	}
	g := st.Graph
	for _, src := range st.Show.Sources {
		id := src.Address() + "/demux"
		n := g.Node(id)
		if n == nil || intParam(n, "streams") != 1 {
			continue
		}
		ins, outs := g.In(id), g.Out(id)
		if len(ins) != 1 || len(outs) != 1 {
			continue
		}
		g.Splice(id)
		st.fused(plan.Fusion{Pass: "fuse input routing", Group: n.Group, Removed: []string{id},
			Reason: fmt.Sprintf("input_routing = \"input\" and %s has one stream: input_rec feeds %s directly", src.Address(), outs[0].To)})
	}
}

// fused appends to the fusion log (emit copies it into the plan).
func (st *state) fused(f plan.Fusion) { st.fusions = append(st.fusions, f) }
