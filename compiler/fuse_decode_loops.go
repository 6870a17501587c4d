package compiler

// fuseDecodeLoops puts the show's NVDEC decoders on a few decode loops
// (canvas decoder_placement = "decode_loops"): a decoder decodes on the
// decode loop its source's address picks (Slot: stable when other sources
// come and go) among n, n being canvas decode_loops or, at 0, the
// profile's. A loop is one thread that feeds every decoder on it round
// robin; seven engines are kept busy by one or two, where the seeds' mixer
// gave each decoder a thread. Where input routing left input_rec feeding
// the decoder directly, the two become one nvdec_file node: the decode loop
// reads each access unit from the file itself, so the source has no thread
// and no packet queue. With input_routing = "demux" the decoder stays a
// dec_video fed by its demuxer's queue, on a decode loop. With
// decoder_placement = "thread" every decoder keeps a thread of its own, and
// the fusion log says so. An HEVC nvdec_file carries canvas nvdec_parser
// as its param parser when it is not NVIDIA's (plans say only what differs
// from a kind's default), and the fusion log says which parser reads it;
// a dec_video always has NVIDIA's parser, and with nvdec_parser = "onair"
// its fusion log says that too.
//
// Needs: the graph after input routing fusion. Leaves: decoders placed on
// decode loops (st.decodeLoops), nvdec_file nodes, the fusion log.

import (
	"fmt"
	"strconv"

	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

// DecodeLoop names decode loop i.
func DecodeLoop(i int) string { return "decode_" + strconv.Itoa(i) }

// decodeLoopKind is the plan's kind for a decode loop: a thread the backend
// runs, not an event loop.
const decodeLoopKind = "nvdec"

func fuseDecodeLoops(st *state) {
	g := st.Graph
	var decs []*Node
	for _, n := range g.Nodes() {
		if n.Domain == nodes.Device && n.Decl.Matches(n.Params, n.Decl.Fuses.DecodeLoopWhen) {
			decs = append(decs, n)
		}
	}
	if len(decs) == 0 {
		return
	}
	parser := st.Show.Canvas.String("nvdec_parser")
	// edgeNote is what a decoder's log adds when the show asked for
	// onair's parser: fed over an edge, it has NVIDIA's all the same.
	edgeNote := ""
	if parser == "onair" {
		edgeNote = fmt.Sprintf("; NVIDIA's parser reads them (nvdec_parser = \"onair\" applies to %s, input_routing = \"input\" on decode loops)", decs[0].Decl.Fuses.WithReader)
	}
	if st.Show.Canvas.String("decoder_placement") == "thread" {
		st.fused(plan.Fusion{Pass: "fuse decode loops",
			Reason: fmt.Sprintf("decoder_placement = \"thread\": %s keep a thread each, as the seeds' mixer ran them%s", countOf(len(decs), "NVDEC decoder"), edgeNote)})
		return
	}
	loops := st.Show.Canvas.Int("decode_loops")
	why := "canvas decode_loops"
	if loops <= 0 && st.Profile != nil {
		loops = int(st.Profile.DecodeLoops.Value)
		why = "profile " + st.Profile.Name + "'s decode_loops"
	}
	loops = max(1, min(loops, len(decs)))
	for _, d := range decs {
		loop := DecodeLoop(Slot(st.placementKey(d.Address), loops))
		var removed, added []string
		reason := fmt.Sprintf("%s decodes on %s (one of %s, %s): one thread feeds the engines for several streams%s", d.Address, loop, countOf(loops, "decode loop"), why, edgeNote)
		if rd := readerOf(g, d); rd != nil && d.Source != nil {
			fused, ok := st.fusedKind(d, d.Decl.Fuses.WithReader)
			if !ok {
				return
			}
			decKind := d.Kind
			removed = []string{rd.ID, d.ID}
			g.RemoveNode(rd.ID)
			params := fused.Fused(st.sourceElement(d.Source), rd.Params, d.Params)
			parsed := ""
			if params["codec"] == "hevc" {
				parsed = fmt.Sprintf(" (HEVC parsed by %s)", parserName[parser])
			}
			g.Rename(d, d.Address+"/"+fused.Name, fused.Name, fused)
			d.Params = params
			added = []string{d.ID}
			reason = fmt.Sprintf("%s and %s of %s become %s on %s (one of %s, %s): the decode loop reads the file's access units and hands them straight to NVDEC%s, no reader thread, no packet queue, no decoder thread", rd.Kind, decKind, d.Address, fused.Name, loop, countOf(loops, "decode loop"), why, parsed)
		}
		d.Placement = plan.Placement{Loop: loop}
		st.decodeLoops = max(st.decodeLoops, loops)
		st.fused(plan.Fusion{Pass: "fuse decode loops", Group: d.Group, Removed: removed, Added: added, Reason: reason})
	}
}

// readerOf is the source reader feeding n directly (its one input, a
// node of the source role), or nil.
func readerOf(g *Graph, n *Node) *Node {
	in := g.In(n.ID)
	if len(in) != 1 {
		return nil
	}
	if rd := g.Node(in[0].From); rd != nil && rd.Decl.Has(nodes.Source) {
		return rd
	}
	return nil
}

// fusedKind is the registered kind named for n to fuse into; unset or
// unregistered is reported at n.
func (st *state) fusedKind(n *Node, name string) (*nodes.Kind, bool) {
	k, ok := nodes.Lookup(name)
	if !ok {
		rng := n.Range
		st.errorf(&rng, "Unknown node kind", "%s fuses into node kind %q (its Fuses in nodes/), which is not registered in nodes/.", n.Kind, name)
	}
	return k, ok
}

// parserName is how the fusion log names canvas nvdec_parser's values.
var parserName = map[string]string{"nvidia": "NVIDIA's parser", "onair": "onair's parser"}
