package compiler

// place decides where each node runs. Blocking nodes (traits.Blocking,
// unless their parameters match traits.LoopWhen) get a thread of their own. The rest run on an event loop: a source's nodes on
// pacing_{i % pacing_loops}, where i is the source's index in the show;
// loop-driven outputs (a null output) on "outputs", a loop that does
// nothing else, so that a bus's hand-off never waits behind another bus's
// drawing; the other loop-driven nodes of buses (AUX compositors and wipe
// pacing) on "default".
//
// Needs: the fused graph. Leaves: every node's Placement.

import (
	"strconv"

	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/nodes"
)

func place(st *state) {
	loops := st.Show.Canvas.Int("pacing_loops")
	if loops < 1 {
		loops = 1
	}
	for _, n := range st.Graph.Nodes() {
		if n.Placement != (plan.Placement{}) {
			continue // placed by a fusion (a decode loop)
		}
		switch {
		case n.Decl.RunsOnThread(n.Params):
			n.Placement = plan.Placement{Thread: true}
		case n.Source != nil:
			n.Placement = plan.Placement{Loop: PacingLoop(n.Source.Index, loops)}
		case n.Decl.Has(nodes.Sink):
			n.Placement = plan.Placement{Loop: OutputsLoop}
		default:
			n.Placement = plan.Placement{Loop: "default"}
		}
	}
}

// OutputsLoop is the loop the outputs that run on a loop share. An AUX
// compositor draws on "default" (on the CPU backend in Go, on the GPU
// waiting for the picture); were the outputs there, every Program bus's
// hand-off would wait for those draws whenever an output's queue was full
// (issue 23: a hand-off of most of a frame period at a switch).
const OutputsLoop = "outputs"

// PacingLoop names the loop that paces source i of a show with n loops.
func PacingLoop(i, n int) string { return "pacing_" + strconv.Itoa(i%n) }
