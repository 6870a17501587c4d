package compiler

// fuseRawUpload gives each raw file source the chain canvas.raw_upload
// picks. The naive chain is the stock one, reader → demux → decoder
// (rawvideo) → upload (hwupload) → pacer: an uploader fed by a decoder.
// "pinned" switches the upload to a page-locked staging block; "direct"
// and "resident" replace the whole chain up to the upload with the one
// node the uploader's declaration names (nodes.Fuses.WithChain:
// raw_video_file_cuda), which reads frames straight into page-locked
// memory.
//
// Needs: the checked naive graph. Leaves: the raw chains in their final
// shape, each change in the fusion log. Chains without an upload (the CPU
// backend's) and uploads fed by a generator (test patterns) are left alone.

import (
	"fmt"

	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

func fuseRawUpload(st *state) {
	mode := st.Show.Canvas.String("raw_upload")
	if mode == "" || mode == "hwupload" { // a chain without an upload (the CPU's) is left alone below
		return
	}
	g := st.Graph
	for _, up := range g.Nodes() {
		if up.Source == nil || up.Decl.Fuses.WithChain == "" {
			continue
		}
		in := g.In(up.ID)
		if len(in) != 1 || !g.Node(in[0].From).Decl.Has(nodes.Decoder) {
			continue // not a raw file's chain
		}
		addr := up.Address
		switch mode {
		case "pinned":
			up.Params["mode"] = "pinned"
			st.fused(plan.Fusion{Pass: "fuse raw upload", Group: up.Group, Removed: []string{up.ID}, Added: []string{up.ID},
				Reason: "raw_upload = \"pinned\": the upload copies through a page-locked staging block on its own stream instead of making pageable memory transferable every frame"})
		case "direct", "resident":
			chain := upstream(g, up) // reader first, the upload last
			next := g.Out(up.ID)
			if len(next) != 1 {
				continue
			}
			k, ok := st.fusedKind(up, up.Decl.Fuses.WithChain)
			if !ok {
				return
			}
			pacer, edge := next[0].To, *next[0]
			removed := make([]string, len(chain))
			params := make([]map[string]any, len(chain))
			for i, c := range chain {
				removed[i], params[i] = c.ID, c.Params
			}
			e := st.sourceElement(up.Source)
			n := &Node{ID: addr + "/" + k.Name, Kind: k.Name, Address: addr, Group: up.Group,
				Source: up.Source, Range: up.Source.DeclRange, Size: up.Size, Format: k.FormatOf(e), Domain: k.Traits.Domain,
				Params: k.Fused(e, params...)}
			for _, id := range removed {
				g.RemoveNode(id)
			}
			if !st.addNodeAt(n, chain[0]) {
				continue
			}
			edge.From = n.ID
			edge.Capacity = frameQueue
			g.AddEdge(&edge)
			why := "one page-locked frame per source, its reads on the shared pool of reader threads"
			if mode == "resident" {
				why = "the whole file held in page-locked memory, read once"
			}
			st.fused(plan.Fusion{Pass: "fuse raw upload", Group: n.Group, Removed: removed, Added: []string{n.ID},
				Reason: fmt.Sprintf("raw_upload = %q: %s reads frames with pread() straight into page-locked memory for %s (%s; one copy, no thread of its own: it runs on its pacing loop)", mode, n.ID, pacer, why)})
		}
	}
}

// upstream is n's chain up to n: the nodes before it, each the one input
// of the next, first first, and n last.
func upstream(g *Graph, n *Node) []*Node {
	chain := []*Node{n}
	for in := g.In(n.ID); len(in) == 1; in = g.In(in[0].From) {
		chain = append([]*Node{g.Node(in[0].From)}, chain...)
	}
	return chain
}
