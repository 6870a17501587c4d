package compiler

// build makes the naive node graph.
//
// Needs: the show (expanded, references resolved) and the backend.
// Leaves: st.Graph with one chain per source, exactly as PRODUCT.md draws it
// before any fusion (file sources keep input_rec → demux, raw files the
// hwupload chain, every fan-out its own thread), one compositor per bus fed
// through each source's fan-out, and one sink per output. Every node
// carries its kind declaration, its group and the show range that made it.

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

// The timestamp keys (lang.FrameMetadataKeys) the naive graph has each
// stamping node stamp; the frame metadata fusion prunes those the show's
// frame_metadata does not list.
var (
	readerTimestampKeys  = []string{"input_rec_time", "pts_wallclock"}
	decoderTimestampKeys = []string{"decode_time", "demux_time"}
	ffmpegTimestampKeys  = []string{"decode_time"} // ffmpeg reads the file: only the pictures' moment is onair's to see
)

// onErrorOf is what a source sends while it cannot play its file.
func onErrorOf(src *lang.Source) string {
	if src.OnError == "" {
		return "black"
	}
	return src.OnError
}

// fileCodecs is the coding of each encoded file source kind.
var fileCodecs = map[string]string{"hevc_file": "hevc", "h264_file": "h264"}

// TimeBase is the pacers' unit: exact for every supported rate.
const TimeBase = "1/120000"

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
	for _, bus := range show.Buses {
		comp := &Node{
			ID: bus.Address() + "/compositor", Kind: "compositor", Address: bus.Address(), Group: bus.Address(),
			Format: string(show.Format), Size: show.Size, Bus: bus, Range: bus.DeclRange,
			Params: map[string]any{
				"bus":        bus.Kind,
				"format":     string(show.Format),
				"size":       sizeString(show.Size),
				"frame_rate": ratString(show.FrameRate),
				"colour":     colourString(show.Colour, show.Format),
			},
		}
		poll := show.Canvas.Int("input_poll_ms")
		if bus.Kind == "aux" {
			poll = show.Canvas.Int("aux_input_poll_ms")
		}
		comp.Params["input_poll_ms"] = poll
		if tc := show.Canvas.String("timecode_start"); tc != "" { // else the registry's default, the time of day
			comp.Params["timecode_start"] = tc
		}
		comp.Domain = st.Options.Target.Domain
		var inputs []*lang.Source
		var scenes []string
		switch {
		case bus.Kind == "aux" && len(bus.Routes) > 0:
			scenes, inputs = auxRoutes(show.Sources, bus)
			comp.Params["scene"] = scenes[0]
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
		if bus.Scene != nil && comp.Params["scene"] == nil {
			comp.Params["scene"] = bus.Scene.Address()
		}
		if scenes != nil {
			comp.Params["scenes"] = scenes
		}
		st.addNode(comp)
		for _, src := range inputs {
			from, ok := fanOut[src]
			if !ok {
				continue
			}
			g.AddEdge(&Edge{From: from, To: comp.ID, Capacity: sourceQueue, Policy: "drop", Format: g.Node(from).Format})
		}
	}
	for _, out := range show.Outputs {
		kind := "output_" + out.Kind
		n := &Node{ID: out.Address() + "/" + kind, Kind: kind, Address: out.Address(), Group: out.Address(),
			Output: out, Range: out.DeclRange, Params: map[string]any{}}
		switch out.Kind {
		case "record":
			n.Params["path"] = st.Show.Rel(out.Path)
		case "ffmpeg":
			n.Params["args"] = append([]string{}, out.Args...)
		case "preview":
			if out.IntervalMs > 0 {
				n.Params["interval_ms"] = out.IntervalMs
			}
			if out.Quality > 0 {
				n.Params["quality"] = out.Quality
			}
		}
		if !st.addNode(n) {
			continue
		}
		if out.Bus == nil {
			continue
		}
		comp := g.Node(out.Bus.Address() + "/compositor")
		if comp == nil {
			continue
		}
		n.Format, n.Size = comp.Format, comp.Size
		g.AddEdge(&Edge{From: comp.ID, To: n.ID, Capacity: outputQueue, Policy: "drop", Format: comp.Format})
	}
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
	format := string(src.Format)
	if format == "" {
		format = string(lang.NV12)
	}
	size := src.Size
	if size == (lang.Size{}) {
		size = st.Show.Size
	}
	rate := src.FrameRate
	if rate.Den == 0 {
		rate = st.Show.FrameRate
	}
	mk := func(kind string, params map[string]any) *Node {
		if params == nil {
			params = map[string]any{}
		}
		return &Node{ID: addr + "/" + kind, Kind: kind, Address: addr, Group: addr, Source: src, Range: src.DeclRange, Params: params, Size: size}
	}
	colour := colourString(src.Colour, lang.PixelFormat(format))
	streams := src.Streams
	if streams <= 0 {
		streams = 1
	}
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
		n := mk(l.Kind, sourceParams(st, src, l.Kind, format, size, rate, colour, streams))
		for k, v := range l.Params {
			n.Params[k] = v
		}
		switch l.Kind {
		case "input_rec", "demux":
			n.Format = nodes.FormatPackets
		case "ipc_dmabuf_source":
			n.Format = nodes.FormatDMABUF
		case "dec_video", "gpu_import", "test_pattern", "raw_file_cpu", "ffmpeg_decode":
			n.Format = format
		}
		if l.Host || target.Domain == nodes.Host {
			n.Domain = nodes.Host
		}
		ns = append(ns, n)
	}
	return st.chain(ns...)
}

// sourceParams derives a chain node's params from its source; a chain's
// Link may fix more (a decoder's or an upload's mode).
func sourceParams(st *state, src *lang.Source, kind, format string, size lang.Size, rate lang.Rational, colour string, streams int) map[string]any {
	path := st.Show.Rel(src.Path)
	switch kind {
	case "input_rec":
		p := map[string]any{"path": path, "loop": src.Loop, "streams": streams, "timestamp_keys": readerTimestampKeys, "colour": colour}
		if c, ok := fileCodecs[src.Kind]; ok {
			p["codec"] = c
		}
		if src.Kind == "raw_file" { // raw pictures say nothing of themselves
			p["format"], p["size"] = format, sizeString(size)
			if src.OnError != "" {
				p["on_error"] = src.OnError
			}
		}
		return p
	case "demux":
		return map[string]any{"streams": streams, "offers": 1}
	case "dec_video":
		p := map[string]any{"format": format, "size": sizeString(size), "timestamp_keys": decoderTimestampKeys}
		if c, ok := fileCodecs[src.Kind]; ok {
			p["codec"], p["colour"], p["on_error"] = c, colour, onErrorOf(src)
		}
		return p
	case "raw_file_cpu", "ffmpeg_decode":
		p := map[string]any{"path": path, "loop": src.Loop, "format": format, "size": sizeString(size), "colour": colour, "on_error": onErrorOf(src)}
		if c, ok := fileCodecs[src.Kind]; ok && kind == "ffmpeg_decode" {
			p["codec"], p["timestamp_keys"] = c, ffmpegTimestampKeys
		}
		return p
	case "ipc_dmabuf_source":
		q := st.Show.Canvas.Int("browser_frame_queue")
		p := map[string]any{"socket": st.Show.Rel(src.Socket), "return_queue": BrowserReturnQueue(q), "frames_in_flight": q, "size": sizeString(size), "colour": colour}
		for param, canvas := range map[string]string{"socket_mode": "browser_socket_mode", "peer": "browser_peer"} {
			if v := st.Show.Canvas.String(canvas); v != "" && v != paramDefault(kind, param) { // plans say only what differs
				p[param] = v
			}
		}
		return p
	case "gpu_import":
		// The mixer purges what start-up left idle as it goes on air (seed 003).
		p := map[string]any{"import_ttl_ms": st.Show.Canvas.Int("import_ttl_ms"), "purge_idle": true, "format": format}
		if src.Keying != "" && src.Keying != paramDefault(kind, "key") { // plans say only what differs from the kind's default
			p["key"] = src.Keying
		}
		return p
	case "realtime", "smooth_timestamps":
		return map[string]any{"time_base": TimeBase, "frame_rate": ratString(rate)}
	case "test_pattern":
		pattern := src.Pattern
		if pattern == "" {
			pattern = "bars"
		}
		return map[string]any{"pattern": pattern, "format": format, "size": sizeString(size), "colour": colour}
	}
	return map[string]any{}
}

// paramDefault is the default of a kind's param, as nodes declares it.
func paramDefault(kind, name string) any {
	if k, ok := nodes.Lookup(kind); ok {
		if p, ok := k.Param(name); ok {
			return p.Default
		}
	}
	return nil
}

// The browser frame queue (seed 003): of the frames a window may have out,
// the mixer keeps browserMixerFrames for itself first, and up to
// browserReturnFrames of the rest are the return queue; 9 is six in use
// and three returning, and a queue of three or fewer has no return queue.
const (
	browserMixerFrames  = 3
	browserReturnFrames = 3
)

// BrowserReturnQueue is the return queue of a browser source whose window
// may have queue frames out (browser_frame_queue).
func BrowserReturnQueue(queue int) int {
	return max(0, min(browserReturnFrames, queue-browserMixerFrames))
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
