package compiler

// build makes the naive node graph.
//
// Needs: the show (expanded, references resolved) and the backend.
// Leaves: st.Graph with one chain per source, exactly as PRODUCT.md draws it
// before any fusion (file sources keep input_rec → demux, raw files the
// hwupload chain, every fan-out its own thread), one compositor per bus fed
// through each source's fan-out, and one sink per output. Every node
// carries its kind declaration, its group and the show range that made it.
//
// build names no kind: a source's chain is the backend's lowering's
// (Lowering.Chains), a bus's and an output's node is the kind that
// declares it (Kind.From, nodes.For), and each node's params are its
// kind's Lower of the element (nodes.Element, filled here from the show).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
)

// Edge capacities of the naive graph.
const (
	packetQueue = 10 // packets read ahead of the decoder (about ten frames, as the seeds' input chain kept)
	frameQueue  = 2  // decoded or uploaded frames waiting for the pacer
	pacedQueue  = 1  // a paced frame waiting for its fan-out
	sourceQueue = 3  // a source's queue at a compositor: three frames cover 8 ms polls up to 60 fps
	outputQueue = 4  // a bus's frames waiting for an output
)

func build(st *state) {
	show := st.Show
	g := NewGraph()
	st.Graph = g
	fanOut := make(map[*lang.Source]string, len(show.Sources))
	for _, src := range show.Sources {
		if id, ok := buildSource(st, src); ok {
			fanOut[src] = id
		}
	}
	busNodes := make(map[*lang.Bus]*Node, len(show.Buses))
	for _, bus := range show.Buses {
		var inputs []*lang.Source
		var scenes []string
		start := "" // what an AUX bus with routes starts with
		switch {
		case bus.Kind == "aux" && len(bus.Routes) > 0:
			scenes, inputs = auxRoutes(show.Sources, bus)
			start = scenes[0]
		case bus.Kind == "program":
			for _, sc := range show.Scenes {
				scenes = append(scenes, sc.Address())
			}
			inputs = sourcesOfScenes(show.Sources, show.Scenes)
		case bus.Source != nil:
			inputs = []*lang.Source{bus.Source}
		case bus.Scene != nil:
			scenes = []string{bus.Scene.Address()}
			inputs = sourcesOfScenes(show.Sources, []*lang.Scene{bus.Scene})
		}
		e := &nodes.Element{Kind: bus.Kind, Address: bus.Address(), Format: string(show.Format), Size: sizeString(show.Size),
			Rate: ratString(show.FrameRate), Colour: colourString(show.Colour, show.Format), Canvas: show.Canvas.Settings, Attrs: map[string]any{}}
		if start != "" {
			e.Attrs["scene"] = start
		} else if bus.Scene != nil {
			e.Attrs["scene"] = bus.Scene.Address()
		}
		if scenes != nil {
			e.Attrs["scenes"] = scenes
		}
		st.busAudio(e, bus, inputs)
		comp := st.elementNode("bus", e, bus.DeclRange)
		if comp == nil {
			continue
		}
		comp.Format, comp.Size, comp.Bus = string(show.Format), show.Size, bus
		comp.Domain = st.Options.Target.Domain
		if !st.addNode(comp) {
			continue
		}
		busNodes[bus] = comp
		for _, src := range inputs {
			from, ok := fanOut[src]
			if !ok {
				continue
			}
			g.AddEdge(&Edge{From: from, To: comp.ID, Capacity: sourceQueue, Policy: "drop", Format: g.Node(from).Format})
		}
	}
	for _, out := range show.Outputs {
		e := &nodes.Element{Kind: out.Kind, Address: out.Address(), Path: show.Rel(out.Path), Canvas: show.Canvas.Settings, Attrs: map[string]any{}}
		if out.Args != nil {
			e.Attrs["args"] = out.Args
		}
		if out.Audio {
			e.Attrs["audio"] = true
		}
		if out.Delivery != nil { // an encoded output's settings, decoded and checked by lang
			e.Attrs["delivery"] = *out.Delivery
		}
		for name, v := range map[string]int{"interval_ms": out.IntervalMs, "quality": out.Quality} {
			if v != 0 {
				e.Attrs[name] = v
			}
		}
		st.extraAttrs(e.Attrs, "output", out.Kind, out.Extra)
		n := st.elementNode("output."+out.Kind, e, out.DeclRange)
		if n == nil {
			continue
		}
		n.Output = out
		if !st.addNode(n) {
			continue
		}
		comp := busNodes[out.Bus]
		if comp == nil {
			continue
		}
		n.Format, n.Size = comp.Format, comp.Size
		g.AddEdge(&Edge{From: comp.ID, To: n.ID, Capacity: outputQueue, Policy: "drop", Format: comp.Format})
	}
}

// elementNode is the node that show element e (of the registry's element
// name elem: "bus", "output.record") lowers to, as the kind that declares
// it in its From says; nil, reported at rng, when no kind does.
func (st *state) elementNode(elem string, e *nodes.Element, rng hcl.Range) *Node {
	if c := st.Options.Target.Chains[elem]; c.Refuse != "" {
		st.errorf(&rng, "Element cannot run on this backend", "%s is a %s: %s", e.Address, elem, c.Refuse)
		return nil
	}
	k, ok := nodes.For(elem)
	if !ok {
		st.errorf(&rng, "Unknown node kind", "%s is a %s, which no node kind in nodes/ lowers (Kind.From).", e.Address, elem)
		return nil
	}
	return &Node{ID: e.Address + "/" + k.Name, Kind: k.Name, Address: e.Address, Group: e.Address, Range: rng, Params: lower(k, e)}
}

// extraAttrs adds to attrs the attributes of an element of block type typ
// and kind that the show language holds in no field of its own (Extra):
// those a new kind reads in its lowering. Paths become relative to the
// show's directory, as every path in a plan is.
func (st *state) extraAttrs(attrs map[string]any, typ, kind string, extra map[string]any) {
	for name, v := range extra {
		if p, isStr := v.(string); isStr && lang.IsPath(typ, kind, name) {
			v = st.Show.Rel(p)
		}
		attrs[name] = v
	}
}

// lower is the params a node of kind k takes from element e.
func lower(k *nodes.Kind, e *nodes.Element) map[string]any {
	if k.Lower == nil {
		return map[string]any{}
	}
	return k.Lower(e)
}

// addNode attaches the kind's declaration and adds the node; an unknown
// kind is reported at the node's range.
func (st *state) addNode(n *Node) bool { return st.addNodeAt(n, nil) }

// addNodeAt is addNode; with old set, n takes old's place in node order.
func (st *state) addNodeAt(n, old *Node) bool {
	k, ok := nodes.Lookup(n.Kind)
	if !ok {
		rng := n.Range
		st.errorf(&rng, "Unknown node kind", "%s needs node kind %q, which is not registered in nodes/.", n.Address, n.Kind)
		return false
	}
	n.Decl = k
	if n.Domain == "" {
		n.Domain = k.Traits.Domain
	}
	if old != nil {
		st.Graph.Replace(old, n)
	} else {
		st.Graph.AddNode(n)
	}
	return true
}

// chain adds nodes in a line and returns the last one's id.
func (st *state) chain(ns ...*Node) (string, bool) {
	prev := ""
	for _, n := range ns {
		if !st.addNode(n) {
			return "", false
		}
		if prev != "" {
			p := st.Graph.Node(prev)
			if n.Format == "" {
				n.Format = p.Format
			}
			if n.Domain == "" {
				n.Domain = p.Domain
			}
			if n.Size == (lang.Size{}) {
				n.Size = p.Size
			}
			st.Graph.AddEdge(&Edge{From: prev, To: n.ID, Capacity: queueFor(p), Policy: "block", Format: p.Format})
		}
		prev = n.ID
	}
	return prev, true
}

func queueFor(from *Node) int {
	switch {
	case from.Format == nodes.FormatPackets || from.Format == nodes.FormatDMABUF:
		return packetQueue
	case from.Decl.Traits.Roles.Has(nodes.Pacer):
		return pacedQueue
	}
	return frameQueue
}

func buildSource(st *state, src *lang.Source) (string, bool) {
	addr := src.Address()
	size := src.Size
	if size == (lang.Size{}) {
		size = st.Show.Size
	}
	e := st.sourceElement(src)
	target := st.Options.Target
	rng := src.DeclRange
	chain, known := target.Chains[src.Kind]
	switch {
	case !known:
		st.errorf(&rng, "Unknown source kind", "%s has kind %q; the %s backend knows %s.", addr, src.Kind, target.Backend, strings.Join(sortedKeys(target.Chains), ", "))
		return "", false
	case chain.Refuse != "":
		st.errorf(&rng, "Source cannot run on this backend", "%s is a %s source: %s", addr, src.Kind, chain.Refuse)
		return "", false
	}
	ns := make([]*Node, 0, len(chain.Links))
	for _, l := range chain.Links {
		n := &Node{ID: addr + "/" + l.Kind, Kind: l.Kind, Address: addr, Group: addr, Source: src, Range: src.DeclRange, Params: map[string]any{}, Size: size}
		if k, ok := nodes.Lookup(l.Kind); ok { // else addNode reports it
			n.Params, n.Format = lower(k, e), k.FormatOf(e)
		}
		for k, v := range l.Params {
			n.Params[k] = v
		}
		if l.Host || target.Domain == nodes.Host {
			n.Domain = nodes.Host
		}
		ns = append(ns, n)
	}
	return st.chain(ns...)
}

// sourceElement is what the kinds of src's chain see of it: the show's
// size, rate and format where src gives none, paths resolved, colour tags
// with their format's defaults.
func (st *state) sourceElement(src *lang.Source) *nodes.Element {
	show := st.Show
	format := string(src.Format)
	if format == "" {
		format = string(lang.NV12)
	}
	size := src.Size
	if size == (lang.Size{}) {
		size = show.Size
	}
	rate := src.FrameRate
	if rate.Den == 0 {
		rate = show.FrameRate
	}
	attrs := map[string]any{}
	if src.Socket != "" {
		attrs["socket"] = show.Rel(src.Socket)
	}
	for name, v := range map[string]string{"key": src.Keying, "pattern": src.Pattern} {
		if v != "" {
			attrs[name] = v
		}
	}
	st.extraAttrs(attrs, "source", src.Kind, src.Extra)
	return &nodes.Element{Kind: src.Kind, Address: src.Address(), Path: show.Rel(src.Path), Loop: src.Loop, Format: format,
		Size: sizeString(size), Rate: ratString(rate), Colour: colourString(src.Colour, lang.PixelFormat(format)),
		OnError: src.OnError, Codec: src.Codec(), Streams: max(1, src.Streams), Canvas: show.Canvas.Settings, Attrs: attrs}
}

// sourcesOfScenes returns the sources the scenes use, in show order.
func sourcesOfScenes(all []*lang.Source, scenes []*lang.Scene) []*lang.Source {
	used := map[*lang.Source]bool{}
	for _, sc := range scenes {
		for _, l := range sc.Layers {
			if l.Source != nil {
				used[l.Source] = true
			}
		}
	}
	var out []*lang.Source
	for _, s := range all {
		if used[s] {
			out = append(out, s)
		}
	}
	return out
}

func sizeString(s lang.Size) string { return strconv.Itoa(s.W) + "x" + strconv.Itoa(s.H) }

func ratString(r lang.Rational) string {
	if r.Den == 0 {
		return "0"
	}
	if r.Den == 1 {
		return strconv.FormatInt(r.Num, 10)
	}
	return strconv.FormatInt(r.Num, 10) + "/" + strconv.FormatInt(r.Den, 10)
}

func fps(r lang.Rational) float64 {
	if r.Den == 0 {
		return 0
	}
	return float64(r.Num) / float64(r.Den)
}

// colourString renders the tags a source stamps, with the defaults of its
// format for tags the show left out.
func colourString(c lang.Colour, f lang.PixelFormat) string {
	def := lang.Colour{Primaries: "bt709", Transfer: "bt709", Matrix: "bt709", Range: "limited"}
	if f == lang.P010 {
		def = lang.Colour{Primaries: "bt2020", Transfer: "pq", Matrix: "bt2020nc", Range: "limited"}
	}
	pick := func(a, b string) string {
		if a != "" {
			return a
		}
		return b
	}
	return fmt.Sprintf("%s/%s/%s/%s", pick(c.Primaries, def.Primaries), pick(c.Transfer, def.Transfer), pick(c.Matrix, def.Matrix), pick(c.Range, def.Range))
}

func rangePtr(r hcl.Range) *hcl.Range {
	if r.Filename == "" && r.Start.Line == 0 {
		return nil
	}
	return &r
}
