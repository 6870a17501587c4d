package compiler

// fuseRawUpload gives each raw file source the chain canvas.raw_upload
// picks. The naive chain is the stock one, input_rec → demux →
// dec_video(rawvideo) → upload(hwupload) → realtime; "pinned" switches the
// upload to a page-locked staging block; "direct" and "resident" replace
// the reader, demuxer, decoder and upload with one raw_video_file_cuda
// node that reads frames straight into page-locked memory.
//
// Needs: the checked naive graph. Leaves: the raw chains in their final shape, each
// change in the fusion log. CPU-backend raw sources (raw_file_cpu) and
// test patterns are left alone.

import (
	"fmt"

	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/nodes"
)

func fuseRawUpload(st *state) {
	mode := st.Show.Canvas.String("raw_upload")
	if mode == "" || mode == "hwupload" { // a chain without an upload (the CPU's) is left alone below
		return
	}
	g := st.Graph
	for _, src := range st.Show.Sources {
		if src.Kind != "raw_file" {
			continue
		}
		addr := src.Address()
		up := g.Node(addr + "/upload")
		if up == nil {
			continue
		}
		switch mode {
		case "pinned":
			up.Params["mode"] = "pinned"
			st.fused(plan.Fusion{Pass: "fuse raw upload", Group: up.Group, Removed: []string{up.ID}, Added: []string{up.ID},
				Reason: "raw_upload = \"pinned\": the upload copies through a page-locked staging block on its own stream instead of making pageable memory transferable every frame"})
		case "direct", "resident":
			in := g.Node(addr + "/input_rec")
			if in == nil {
				continue
			}
			var removed []string
			for _, k := range []string{"input_rec", "demux", "dec_video", "upload"} {
				if g.Node(addr+"/"+k) != nil {
					removed = append(removed, addr+"/"+k)
				}
			}
			next := g.Out(up.ID)
			if len(next) != 1 {
				continue
			}
			pacer, edge := next[0].To, *next[0]
			colour, _ := in.Params["colour"].(string)
			dec := g.Node(addr + "/dec_video")
			pf := up.Format
			if dec != nil {
				pf = dec.Format
			}
			for _, id := range removed {
				g.RemoveNode(id)
			}
			n := &Node{ID: addr + "/raw_video_file_cuda", Kind: "raw_video_file_cuda", Address: addr, Group: up.Group,
				Source: src, Range: src.DeclRange, Size: up.Size, Format: pf, Domain: nodes.Device,
				Params: map[string]any{"mode": mode, "path": st.Show.Rel(src.Path), "loop": src.Loop, "format": pf, "size": sizeString(up.Size), "colour": colour}}
			if onError, ok := in.Params["on_error"]; ok {
				n.Params["on_error"] = onError
			}
			if !st.addNodeAt(n, in) {
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
