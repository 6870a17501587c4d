package compiler

// place decides where each node runs. Blocking nodes (traits.Blocking,
// unless their parameters match traits.LoopWhen) get a thread of their
// own. The rest run on an event loop: a source's nodes on the pacing loop
// its address picks (Slot), so a source keeps its loop when others are
// added, removed or change kind, and a diff shows only what changed;
// loop-driven outputs (a null output) on "outputs", a loop that does
// nothing else, so that a bus's hand-off never waits behind another bus's
// drawing; the other loop-driven nodes of buses (AUX compositors and wipe
// pacing) on "default".
//
// Needs: the fused graph. Leaves: every node's Placement.

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
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
			n.Placement = plan.Placement{Loop: PacingLoop(Slot(st.placementKey(n.Source.Address()), loops))}
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

// placementKey is the address a source is placed by: the one it had
// before the show's moved blocks renamed it, so a rename moves nothing.
func (st *state) placementKey(addr string) string {
	for range st.Show.Moved { // a chain of renames is at most this long
		renamed := false
		for _, m := range st.Show.Moved {
			switch {
			case addr == m.To:
				addr, renamed = m.From, true
			case strings.HasPrefix(addr, m.To+"["): // a whole counted block
				addr, renamed = m.From+addr[len(m.To):], true
			}
		}
		if !renamed {
			break
		}
	}
	return addr
}

// PacingLoop names pacing loop i.
func PacingLoop(i int) string { return "pacing_" + strconv.Itoa(i) }

// Slot picks one of n loops for the element at address key by rendezvous
// hashing: each loop scores the key and the highest score wins. A key's
// slot depends on the key and n alone, so adding or removing other
// elements moves nothing else, and over many keys each loop gets its share
// (192 sources on 4 loops: 48 each, give or take a few).
func Slot(key string, n int) int {
	best, bestScore := 0, uint64(0)
	for i := 0; i < n; i++ {
		h := fnv.New64a()
		h.Write([]byte(key))
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		h.Write(b[:])
		// FNV's last bytes mix weakly into its high bits: finish with a
		// 64-bit mixer (splitmix64's) before comparing.
		x := h.Sum64()
		x ^= x >> 30
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 27
		x *= 0x94d049bb133111eb
		x ^= x >> 31
		if i == 0 || x > bestScore {
			best, bestScore = i, x
		}
	}
	return best
}
