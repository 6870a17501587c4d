package nodes

import "github.com/onairhq/onair/internal/value"

// Element is what a kind's lowering sees of the show element a node is
// made for (a source, a bus, an output): the compiler fills it from the
// show, this package never reads the show language. Paths are resolved
// (relative to the show's directory), and what the element leaves out the
// show supplies: its size, rate and format, and colour tags with the
// defaults of the format.
type Element struct {
	// Kind is the element's kind as the show writes it: hevc_file,
	// raw_file, browser; program, aux; record, preview.
	Kind    string
	Address string
	Path    string // the file it reads or writes, resolved; "" when none
	Loop    bool
	Format  string // nv12 | p010
	Size    string // WIDTHxHEIGHT
	Rate    string // frames per second, "30000/1001"
	Colour  string // primaries/transfer/matrix/range
	OnError string // black | hold as written; "" when the show left it out
	// Codec is what an encoded file holds (hevc, h264); "" for raw
	// pictures and elements that read no file.
	Codec   string
	Streams int // streams in the file, at least 1
	// Canvas is the show's canvas settings.
	Canvas value.Settings
	// Attrs are the element's other attributes by name, as the show gave
	// them (a browser's socket and key, a pattern, an ffmpeg output's args,
	// a preview's interval_ms and quality, a bus's scene and scenes):
	// absent when the show left one out. A new kind reads its own here.
	Attrs map[string]any
}

// Attr returns attribute name of the element.
func (e *Element) Attr(name string) (any, bool) {
	v, ok := e.Attrs[name]
	return v, ok
}

// String is attribute name as a string ("" when absent).
func (e *Element) String(name string) string {
	s, _ := e.Attrs[name].(string)
	return s
}

// Int is attribute name as a whole number (0 when absent).
func (e *Element) Int(name string) int {
	n, _ := asInt(e.Attrs[name])
	return n
}

// Lower is how a show element becomes a node of a kind: the params the
// node takes from the element. A backend's chain may fix more (a
// decoder's mode); what neither gives is the param's default.
type Lower func(e *Element) map[string]any

// Fuses is what the compiler's fusion passes may make of a node of a kind,
// as data: the passes read it and name no kind. Every kind named here is
// registered.
type Fuses struct {
	// OnLoop is the kind that does this one's work without a thread, on
	// its source's pacing loop (canvas source_fan_out = "event_loop").
	OnLoop string
	// DecodeLoopWhen lists the params under which a node of the kind, in
	// device memory, decodes on one of the show's shared decode loops
	// (canvas decoder_placement = "decode_loops").
	DecodeLoopWhen map[string][]string
	// WithReader is the kind that a node on a decode loop and the source
	// reader feeding it directly become together (input_routing = "input").
	WithReader string
	// WithChain is the kind that a raw file's whole chain, up to and with
	// a node of this kind fed by its decoder, becomes when canvas
	// raw_upload reads frames straight into page-locked memory.
	WithChain string
}

// Fused is the params of a node of kind k made from nodes (in chain
// order) for element e: k's lowering, then, for each param k declares and
// the lowering left out, the first of the nodes' values. timestamp_keys
// are every node's, in order.
func (k *Kind) Fused(e *Element, params ...map[string]any) map[string]any {
	out := map[string]any{}
	if k.Lower != nil {
		out = k.Lower(e)
	}
	var keys []string
	stamped := false
	for _, p := range params {
		for name, v := range p {
			if name == "timestamp_keys" {
				ks, _ := v.([]string)
				keys, stamped = append(keys, ks...), true
				continue
			}
			if _, declared := k.Param(name); !declared {
				continue
			}
			if _, set := out[name]; !set {
				out[name] = v
			}
		}
	}
	if _, declared := k.Param("timestamp_keys"); declared && stamped {
		out["timestamp_keys"] = append([]string{}, keys...)
	}
	return out
}

// FormatOf is the format a node of kind k made for an element emits: the
// one its traits fix (packets, foreign buffers), else the element's
// frames'.
func (k *Kind) FormatOf(e *Element) string {
	if len(k.Traits.Emits) == 1 && (k.Traits.Emits[0] == FormatPackets || k.Traits.Emits[0] == FormatDMABUF) {
		return k.Traits.Emits[0]
	}
	return e.Format
}

// For returns the kind every backend lowers show element elem to ("bus",
// "output.record"), as the kinds declare it (Kind.From).
func For(elem string) (*Kind, bool) {
	mu.RLock()
	defer mu.RUnlock()
	k, ok := from[elem]
	return k, ok
}

// orDefault is s, or the default the param declares when s is empty.
func orDefault(s string, p Param) string {
	if s == "" {
		d, _ := p.Default.(string)
		return d
	}
	return s
}
