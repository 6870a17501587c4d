package compiler

// fuseFrameMetadata prunes the timestamp keys nobody reads: the naive graph
// stamps every key on every frame; canvas.frame_metadata lists the ones the
// show wants, and every node with a timestamp_keys parameter keeps only
// those.
//
// Needs: the graph after the chain-shaping fusions. Leaves: timestamp_keys
// narrowed, one fusion log entry per group where something was pruned.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/onairhq/onair/plan"
)

func fuseFrameMetadata(st *state) {
	want := map[string]bool{}
	for _, k := range st.Show.Canvas.Strings("frame_metadata") {
		want[k] = true
	}
	g := st.Graph
	var group string
	var touched []string
	var pruned map[string]bool
	flush := func() {
		if len(touched) == 0 {
			return
		}
		keys := sortedKeys(pruned)
		st.fused(plan.Fusion{Pass: "fuse frame metadata", Group: group, Removed: nil, Added: nil,
			Reason: fmt.Sprintf("frame_metadata does not list %s: %s stop stamping them", strings.Join(keys, ", "), strings.Join(touched, ", "))})
		touched, pruned = nil, nil
	}
	for _, n := range g.Nodes() {
		keys, ok := n.Params["timestamp_keys"].([]string)
		if !ok {
			continue
		}
		if n.Group != group {
			flush()
			group = n.Group
		}
		var kept []string
		for _, k := range keys {
			if want[k] {
				kept = append(kept, k)
			} else {
				if pruned == nil {
					pruned = map[string]bool{}
				}
				pruned[k] = true
			}
		}
		if len(kept) != len(keys) {
			sort.Strings(kept)
			if kept == nil {
				kept = []string{}
			}
			n.Params["timestamp_keys"] = kept
			touched = append(touched, n.ID)
		}
	}
	flush()
}
