package compiler

// place decides where each node runs. Blocking nodes (traits.Blocking,
// unless their parameters match traits.LoopWhen) get a thread of their own. The rest run on an event loop: a source's nodes on
// pacing_{i % pacing_loops}, where i is the source's index in the show;
// the loop-driven nodes of buses and outputs (outputs, AUX compositors and
// wipe pacing) on "default".
//
// Needs: the fused graph. Leaves: every node's Placement.

import (
	"strconv"

	"github.com/onairhq/onair/compiler/plan"
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
		default:
			n.Placement = plan.Placement{Loop: "default"}
		}
	}
}

// PacingLoop names the loop that paces source i of a show with n loops.
func PacingLoop(i, n int) string { return "pacing_" + strconv.Itoa(i%n) }
