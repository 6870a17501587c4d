package lang

import (
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/internal/value"
)

// ValueType is the type of an attribute as the schema declares it. The
// decoder converts and checks values by it; the docs print its name.
type ValueType int

const (
	TypeString     ValueType = iota // any string
	TypeInt                         // a whole number
	TypeNumber                      // any number
	TypeBool                        // true | false
	TypeSize                        // "WxH", both positive and even
	TypeRate                        // exact rational: "30", "30000/1001"
	TypeRect                        // [x, y, w, h] in canvas pixels
	TypeEnum                        // one string of Attr.Enum
	TypePath                        // a file path, relative to the show file's directory
	TypeStringList                  // list of strings
	TypeEnumList                    // list of strings, each one of Attr.Enum
	TypeSourceRef                   // a reference to one source instance: source.cam[0]
	TypeSceneRef                    // a reference to one scene instance: scene.quad
	TypeBusRef                      // a reference to one bus instance: bus.a
	TypeRouteList                   // a list of source and scene references (a whole source or scene block takes every instance)
	TypeAny                         // any value (variable defaults, locals)
	TypeTypeExpr                    // a type constraint: string, number, list(string), ...
	TypeTraversal                   // an address, not evaluated: source.a, source.cam[3]
)

var typeNames = map[ValueType]string{
	TypeString: "string", TypeInt: "integer", TypeNumber: "number", TypeBool: "bool",
	TypeSize: "size", TypeRate: "frame rate", TypeRect: "rect", TypeEnum: "enum",
	TypePath: "path", TypeStringList: "list(string)", TypeEnumList: "list(enum)",
	TypeSourceRef: "source reference", TypeSceneRef: "scene reference", TypeBusRef: "bus reference", TypeRouteList: "list of source and scene references",
	TypeAny: "any", TypeTypeExpr: "type", TypeTraversal: "address",
}

// String is the type's name as the docs print it.
func (t ValueType) String() string { return typeNames[t] }

// Attr declares one attribute of a block.
type Attr struct {
	Name     string
	Type     ValueType
	Required bool
	// Default is the typed value taken when the attribute is absent: string,
	// int, float64, bool, Size, Rational or []string. nil with DefaultDoc set
	// means the default is derived (e.g. the show's size).
	Default    any
	DefaultDoc string
	Enum       []string  // TypeEnum, TypeEnumList: the allowed values
	Range      *[2]int64 // TypeInt, TypeNumber: inclusive bounds
	Doc        string
}

// Block declares one block type, or one kind of a labelled block type.
type Block struct {
	Type   string   // "source"
	Kind   string   // "hevc_file" for kinds of source, bus and output; "" otherwise
	Labels []string // label names as the docs show them: KIND, NAME
	Doc    string
	Attrs  []Attr
	Blocks []*Block // nested blocks (colour, layer, validation)
	// Many says the block may appear more than once in its parent.
	Many bool
	// Expand says the block takes count or for_each.
	Expand bool
	// Dynamic says the block may be generated with a dynamic block.
	Dynamic bool
	// OneOf lists groups of attributes of which exactly one must be set.
	OneOf [][]string
	// Free says the block takes any attribute names (locals).
	Free bool

	schema *hcl.BodySchema // bodySchemaRequired, built once in init
}

// Attr returns the named attribute's declaration, or nil.
func (b *Block) Attr(name string) *Attr {
	for i := range b.Attrs {
		if b.Attrs[i].Name == name {
			return &b.Attrs[i]
		}
	}
	return nil
}

// Block returns the named nested block's declaration, or nil.
func (b *Block) Block(name string) *Block {
	for _, c := range b.Blocks {
		if c.Type == name {
			return c
		}
	}
	return nil
}

// bodySchema is the hcl schema of the block's body: its attributes, nested
// blocks and, when it expands, count and for_each.
func (b *Block) bodySchema() *hcl.BodySchema {
	s := &hcl.BodySchema{}
	if b.Expand {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: "count"}, hcl.AttributeSchema{Name: "for_each"})
	}
	for _, a := range b.Attrs {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: a.Name})
	}
	for _, c := range b.Blocks {
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: c.Type, LabelNames: labelNames(c)})
	}
	return s
}

func labelNames(b *Block) []string {
	var out []string
	for _, l := range b.Labels {
		out = append(out, strings.ToLower(l))
	}
	return out
}

func rng(lo, hi int64) *[2]int64 { return &[2]int64{lo, hi} }

// FrameMetadataKeys are the timestamp keys a decoded frame may carry.
var FrameMetadataKeys = []string{"input_rec_time", "demux_time", "decode_time", "upload_time", "pace_time", "composite_time", "output_time", "pts_wallclock"}

// stripAttrs are a source's channel on a bus's mixer, as a source's
// audio block sets them for every bus and a bus's strip block for one.
func stripAttrs() []Attr {
	return []Attr{
		{Name: "gain_db", Type: TypeNumber, Default: 0.0, Range: rng(-120, 12), Doc: "The fader, in dB; -120 is silent."},
		{Name: "mute", Type: TypeBool, Default: false, Doc: "Muted: not heard on the bus."},
		{Name: "pan", Type: TypeNumber, Default: 0.0, Range: rng(-1, 1), Doc: "Balance: -1 left only, 0 both at unity, 1 right only."},
		{Name: "delay_ms", Type: TypeInt, Default: 0, Range: rng(0, 1000), Doc: "Holds the source's sound back this long, to trim the lip sync of a source whose sound leads its picture."},
		{Name: "mode", Type: TypeEnum, Enum: []string{"follow", "always", "off"}, Default: "follow", Doc: "follow: heard while the source is visible in the scene on air, crossfading with the transition (a cut ramps over 5 ms); always: heard whatever is on air (a presenter's microphone); off: never heard on the bus."},
	}
}

var sourceAudioBlock = &Block{
	Type:  "audio",
	Doc:   "The source's sound on every bus it is on (a bus's audio block may set its own strip for it). Without one: following video at 0 dB.",
	Attrs: stripAttrs(),
}

var busAudioBlock = &Block{
	Type: "audio",
	Doc:  "The bus's mix: its master fader, a mix-minus, and strips that set a source's channel on this bus alone.",
	Attrs: []Attr{
		{Name: "master_db", Type: TypeNumber, Default: 0.0, Range: rng(-120, 12), Doc: "The master fader, in dB."},
		{Name: "mix_minus_of", Type: TypeSourceRef, Doc: "A source on the bus that the mix leaves out (its own sound, for a remote guest's return feed): source.NAME."},
	},
	Blocks: []*Block{{
		Type: "strip", Many: true,
		Doc: "One source's channel on this bus, over the source's own audio block.",
		Attrs: append([]Attr{
			{Name: "source", Type: TypeSourceRef, Required: true, Doc: "The source: source.NAME."},
		}, stripAttrs()...),
	}},
}

var colourBlock = &Block{
	Type: "colour",
	Doc:  "The colour tags the source stamps on its frames. Every key is optional; an absent colour block means BT.709, limited range, which is what HD broadcast sources carry.",
	Attrs: []Attr{
		{Name: "primaries", Type: TypeEnum, Enum: value.ColourPrimaries, Default: "bt709", Doc: "Colour primaries."},
		{Name: "transfer", Type: TypeEnum, Enum: value.ColourTransfers, Default: "bt709", Doc: "Transfer characteristic."},
		{Name: "matrix", Type: TypeEnum, Enum: value.ColourMatrices, Default: "bt709", Doc: "YUV matrix coefficients."},
		{Name: "range", Type: TypeEnum, Enum: value.ColourRanges, Default: "limited", Doc: "Quantisation range."},
	},
}

// showColourBlock is the show's colour, declared once: every bus's
// pictures carry it, the outputs tell ffmpeg and JPEG viewers about it,
// and every source must carry the same (the compositor mixes samples as
// they are and converts no colour).
var showColourBlock = &Block{
	Type:  "colour",
	Doc:   "The colour of the show's pictures: the tags every bus stamps and every output passes on (ffmpeg's -color_range, -colorspace, -color_primaries, -color_trc; the preview's JPEG levels). Every source must carry the same tags, since the compositor converts no colour. Every key is optional; an absent block means BT.709, limited range.",
	Attrs: colourBlock.Attrs,
}

func sizeAttr() Attr {
	return Attr{Name: "size", Type: TypeSize, DefaultDoc: "the show's size", Doc: "Frame size of the source."}
}
func rateAttr() Attr {
	return Attr{Name: "frame_rate", Type: TypeRate, DefaultDoc: "the show's frame rate", Doc: "Frame rate of the source."}
}
func loopAttr() Attr {
	return Attr{Name: "loop", Type: TypeBool, Default: true, Doc: "Start again at the end of the file."}
}

// onErrorAttr is what a file source shows while its file is unusable.
func onErrorAttr() Attr {
	return Attr{Name: "on_error", Type: TypeEnum, Enum: []string{"black", "hold"}, Default: "black",
		Doc: "What the source shows while its file is missing or unreadable: black, or its last good frame (hold). The error is reported either way, the file is tried again every second, and the show keeps its deadlines."}
}

// liveAttrs are what every live source takes besides its transport's.
func liveAttrs() []Attr {
	return []Attr{
		sizeAttr(), rateAttr(),
		{Name: "format", Type: TypeEnum, Enum: []string{"nv12", "p010"}, Default: "nv12", Doc: "Decoded pixel format: nv12 for 8-bit streams, p010 for 10-bit."},
		{Name: "on_error", Type: TypeEnum, Enum: []string{"black", "hold"}, Default: "black",
			Doc: "What the source shows while its stream is lost: black, or its last good frame (hold). Lost and restored are reported as events either way, and the show keeps its deadlines."},
		{Name: "loss_timeout_ms", Type: TypeInt, Default: 1000, Range: rng(50, 60000), Doc: "How long the stream may bring nothing before the source counts as lost."},
	}
}
func mediaPath(doc string) Attr {
	return Attr{Name: "path", Type: TypePath, Required: true, Doc: doc + " Relative paths are relative to the show file's directory; a path that does not exist is a warning."}
}
func busAttr() Attr {
	return Attr{Name: "bus", Type: TypeBusRef, Required: true, Doc: "The bus whose frames this output takes: bus.NAME."}
}

// Schema is the whole show language: every top-level block, and one entry
// per kind for source, bus and output.
var Schema = []*Block{
	{
		Type: "show",
		Doc:  "Names the show and sets its canvas: the size, rate and pixel format every bus composites in. Exactly one per show.",
		Attrs: []Attr{
			{Name: "name", Type: TypeString, Required: true, Doc: "The show's name."},
			{Name: "size", Type: TypeSize, Required: true, Doc: "Canvas size, \"WIDTHxHEIGHT\"; both positive and even."},
			{Name: "frame_rate", Type: TypeRate, Required: true, Doc: "Canvas frame rate as an exact rational: \"25\", \"30\", \"30000/1001\", \"50\", \"60\"."},
			{Name: "format", Type: TypeEnum, Enum: []string{"nv12", "p010"}, Default: "nv12", Doc: "Working pixel format of the canvas: nv12 (8 bit) or p010 (10 bit)."},
			{Name: "profile", Type: TypeString, DefaultDoc: "none", Doc: "Capacity profile the checks use, e.g. \"nvidia_l4\"."},
		},
		Blocks: []*Block{showColourBlock},
	},
	{
		Type: "canvas",
		Doc:  "How frames travel between sources, buses and outputs. Optional, at most one; every key has a default.",
		Attrs: []Attr{
			{Name: "raw_upload", Type: TypeEnum, Enum: []string{"hwupload", "pinned", "direct", "resident"}, Default: "direct", Doc: "How raw files reach the GPU: hwupload (pageable copy), pinned (pinned staging), direct (read straight into page-locked memory), resident (the whole file pinned in host memory)."},
			{Name: "input_routing", Type: TypeEnum, Enum: []string{"input", "demux"}, Default: "input", Doc: "input lets a one-stream file's reader feed the decoder directly; demux keeps a separate demux node."},
			{Name: "source_fan_out", Type: TypeEnum, Enum: []string{"thread", "event_loop"}, Default: "event_loop", Doc: "Run each source's fan-out on its own thread or on the pacing loop that paces the source."},
			{Name: "input_poll_ms", Type: TypeInt, Default: 8, Range: rng(0, 1000), Doc: "How often a Program compositor looks at its inputs, in ms; 0 wakes for every arriving frame."},
			{Name: "aux_input_poll_ms", Type: TypeInt, Default: 8, Range: rng(0, 1000), Doc: "The same for AUX compositors."},
			{Name: "pacing_loops", Type: TypeInt, Default: 4, Range: rng(1, 64), Doc: "Number of source pacing loops; each source paces on the loop its address picks, so adding or removing a source moves no other."},
			{Name: "gpus", Type: TypeInt, Default: 1, Range: rng(1, 8), Doc: "How many GPUs of the host the show runs on (devices 0 to gpus-1). Above 1 the compiler places each source's chain and each bus's compositor on a GPU from the estimates per GPU, keeping a bus's sources on its GPU where they fit; a frame a bus on another GPU needs is a peer copy once per tick (the plan's cross_gpu edges, counted in its estimate). Adding a source moves no other while every GPU has room. The CUDA backend runs each node on its GPU and copies a frame once to each other GPU whose buses draw it (peer copies in /status and /metrics); ONAIR_GPU_STANDIN=1 runs the GPUs after the first as contexts on GPU 0."},
			{Name: "decoder_placement", Type: TypeEnum, Enum: []string{"decode_loops", "thread"}, Default: "decode_loops", Doc: "Where NVDEC decoders run: decode_loops shares a few decode loops (decode_loops) among every decoder of the show; thread gives each decoder a thread of its own, as the seeds' mixer did."},
			{Name: "decode_loops", Type: TypeInt, Default: 0, Range: rng(0, 64), Doc: "Number of NVDEC decode loops; each decoder decodes on the loop its source's address picks, so adding or removing a source moves no other decoder. 0 takes the GPU profile's decode_loops."},
			{Name: "nvdec_parser", Type: TypeEnum, Enum: []string{"nvidia", "onair"}, Default: "nvidia", Doc: "Which parser reads HEVC files for NVDEC: nvidia is NVIDIA's parser (libnvcuvid); onair is onair's own (cuda/hevc), which fills NVDEC's picture parameters itself, checked byte-exact against ffmpeg and field by field against NVIDIA's parameters on the H200. Only nvdec_file sources take it (input_routing = \"input\" on decode loops): H.264, and HEVC whose access units reach a dec_video over an edge (input_routing = \"demux\" or decoder_placement = \"thread\"), always use NVIDIA's parser."},
			{Name: "browser_frame_queue", Type: TypeInt, Default: 9, Range: rng(1, 9), Doc: "Buffers per browser source; three of nine are the return queue, so 3 or less leaves none."},
			{Name: "browser_ring_size", Type: TypeInt, Range: rng(1, 1<<20), DefaultDoc: "none", Doc: "The earlier spelling of browser_frame_queue, still read: above 9 means 9. Write browser_frame_queue instead (lint browser-ring-size)."},
			{Name: "browser_socket_mode", Type: TypeEnum, Enum: []string{"0600", "0660", "0666"}, Default: "0600", Doc: "Mode of every browser source's socket, whatever the umask: 0600 lets only the show's user (and root) connect, 0660 its group too, 0666 every local user. Whoever can connect can put pictures on the source (README, Security)."},
			{Name: "browser_peer", Type: TypeEnum, Enum: []string{"same_user", "any"}, Default: "same_user", Doc: "Which producers a browser source takes: same_user refuses (ERROR) a connection whose peer (SO_PEERCRED) is not the show's user, root's included; any takes whoever the socket's mode lets connect."},
			{Name: "import_ttl_ms", Type: TypeInt, Default: 10000, Range: rng(0, 3600000), Doc: "How long an imported browser buffer stays mapped, in ms; under 10000 is legal but lint warns (re-imports still page)."},
			{Name: "go_procs", Type: TypeInt, Default: 0, Range: rng(0, 1024), Doc: "How many processors Go's scheduler runs the show's goroutines and loops on (GOMAXPROCS), set when the show starts; 0 is Go's default (the machine's cores, or fewer where the process's CPU is limited). Go keeps about one OS thread for each processor it has used, so fewer means fewer threads; too few and loops wait for each other (above 30 fps, lint go-procs-narrow warns when it is under the plan's thread count). The environment variable GOMAXPROCS, when set, wins."},
			{Name: "timecode_start", Type: TypeString, Default: "", DefaultDoc: "the time of day", Doc: "The SMPTE timecode of the show's first tick, HH:MM:SS:FF (HH:MM:SS;FF: drop-frame, which the rate decides: 30000/1001 and 60000/1001 count drop-frame, every other rate non-drop). Every bus stamps its ticks' timecode from it; /status, /events, the operator's page and the as-run log report it, and onair cut -at and -cue take it. Left out, the show counts from the time of day (the machine's local time) when it starts."},
			{Name: "frame_metadata", Type: TypeEnumList, Enum: FrameMetadataKeys, Default: []string{}, Doc: "Timestamp keys stamped on decoded frames; keys nobody reads are pruned."},
		},
	},
	{
		Type:   "variable",
		Labels: []string{"NAME"},
		Many:   true,
		Doc:    "An input of the show, referenced as var.NAME and set with -var NAME=VALUE, -var-file FILE or the environment variable ONAIR_VAR_NAME (in rising precedence: environment, var files, -var).",
		Attrs: []Attr{
			{Name: "type", Type: TypeTypeExpr, DefaultDoc: "any", Doc: "Type constraint: string, number, bool, list(T), set(T), map(T), object({...}), tuple([...]), any."},
			{Name: "default", Type: TypeAny, DefaultDoc: "none (the variable must be set)", Doc: "Value when none is given."},
			{Name: "description", Type: TypeString, Doc: "What the variable is for."},
			{Name: "sensitive", Type: TypeBool, Default: false, Doc: "Hide the value in output."},
		},
		Blocks: []*Block{{
			Type: "validation",
			Many: true,
			Doc:  "A rule the value must satisfy; may reference only this variable.",
			Attrs: []Attr{
				{Name: "condition", Type: TypeBool, Required: true, Doc: "true when the value is acceptable."},
				{Name: "error_message", Type: TypeString, Required: true, Doc: "What to tell the user when it is not."},
			},
		}},
	},
	{
		Type: "locals",
		Many: true,
		Free: true,
		Doc:  "Named values, referenced as local.NAME. Any attribute name; a local may use variables, other locals, sources, scenes and buses (e.g. concat(source.cam, source.vt)).",
	},
	{
		Type: "source", Kind: "hevc_file", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "An HEVC elementary stream or MPEG-TS file decoded on NVDEC.",
		Attrs: []Attr{
			mediaPath("The media file."),
			loopAttr(), onErrorAttr(),
			sizeAttr(), rateAttr(),
			{Name: "format", Type: TypeEnum, Enum: []string{"nv12", "p010"}, Default: "nv12", Doc: "Decoded pixel format."},
			{Name: "streams", Type: TypeInt, Default: 1, Range: rng(1, 16), Doc: "Streams in the file; with 1, input routing may skip the demux."},
		},
		Blocks: []*Block{colourBlock, sourceAudioBlock},
	},
	{
		Type: "source", Kind: "srt", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "An SRT stream (MPEG-TS carrying H.264 or HEVC) from a camera, an encoder or onair send: onair calls it or listens for it (libsrt, loaded at run time). From onair send (which stamps each video frame's send time on PID 0x1FF0, a PID no PMT lists, so other receivers drop it; -stamp=false leaves the stamps out) the source reports its end-to-end latency, on air less when the frame was due at the sender (its send time plus its PTS less its DTS, the B-frames' reordering): now, p50, p99 and max in /status and onair status, the histogram onair_live_latency_seconds on /metrics, and onair bench's live latency line. Both are wall clocks: across hosts they must be synchronised (NTP, PTP), which is yours to do; a frame on air before it was sent is counted as clock skew, not reported. On the CPU backend at latency_ms 120 and 30 fps, a 640x360 HEVC stream with B-frames reads about 330 to 400 ms: SRT's 120, about 200 in the CPU decoding path (the TS reader and ffmpeg each hold an access unit until the next begins, and the decoder's reordering), and one to two frames of the frame synchroniser and the pacer.",
		Attrs: append([]Attr{
			{Name: "mode", Type: TypeEnum, Enum: []string{"caller", "listener"}, Default: "listener", Doc: "listener waits for the sender on address:port (and takes its next connection after a loss); caller dials the sender's listener, again with backoff after each failure or loss."},
			{Name: "address", Type: TypeString, DefaultDoc: "127.0.0.1 for a listener", Doc: "Where a listener binds (nothing off this machine reaches it unless the show names an address, 0.0.0.0 for all), or where a caller dials."},
			{Name: "port", Type: TypeInt, Required: true, Range: rng(1, 65535), Doc: "The UDP port."},
			{Name: "latency_ms", Type: TypeInt, Default: 120, Range: rng(20, 8000), Doc: "SRT's receive latency: the time it has to recover lost packets."},
			{Name: "passphrase_env", Type: TypeString, Doc: "The environment variable holding the AES passphrase (10 to 79 characters), read as the source starts: the passphrase itself is never in the show's plan, nor in a log or an error."},
			{Name: "stream_id", Type: TypeString, Doc: "A caller sends it; a listener takes only callers that send it."},
		}, liveAttrs()...),
	},
	{
		Type: "source", Kind: "udp", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "MPEG-TS (H.264 or HEVC) over UDP, unicast or multicast, plain or RTP-wrapped. From onair send, its end-to-end latency is reported as an srt source's is.",
		Attrs: append([]Attr{
			{Name: "address", Type: TypeString, DefaultDoc: "127.0.0.1", Doc: "The address to receive on: a multicast group (239.1.1.1) is joined; a unicast address is bound (nothing off this machine reaches it unless the show names an address)."},
			{Name: "port", Type: TypeInt, Required: true, Range: rng(1, 65535), Doc: "The UDP port."},
			{Name: "interface", Type: TypeString, Doc: "The network interface a multicast group is joined on (eth0); the system's choice when left out."},
			{Name: "rtp", Type: TypeBool, Default: false, Doc: "Each datagram is an RTP packet (RFC 2250): put back in sequence order, losses counted."},
		}, liveAttrs()...),
	},
	{
		Type: "source", Kind: "rtmp", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "An RTMP listener that an encoder (OBS, ffmpeg, a hardware encoder) publishes H.264 (or Enhanced RTMP's HEVC) to, at rtmp://ADDRESS:PORT/live/KEY; a publisher with another key, or a second one while the key is taken, is refused and reported. Its AAC sound is carried: onair remuxes the publisher's stream to MPEG-TS and decodes and mixes the sound as an srt source's, in step with the pictures on the publisher's timestamps (whole milliseconds: within 1 ms). Sound in another codec (MP3, Speex, Opus...) is left out while the pictures go on, and the source says why: live.sound_error in /status, its last error and a source_error event. An encoder must send its AAC sequence header before its first picture, as OBS and ffmpeg do.",
		Attrs: append([]Attr{
			{Name: "address", Type: TypeString, DefaultDoc: "127.0.0.1", Doc: "Where the listener binds (nothing off this machine reaches it unless the show names an address, 0.0.0.0 for all)."},
			{Name: "port", Type: TypeInt, Required: true, Range: rng(1, 65535), Doc: "The TCP port (RTMP's own is 1935)."},
			{Name: "key", Type: TypeString, Required: true, Doc: "The stream key: the last part of the URL the encoder pushes to (in OBS: Settings, Stream, Service Custom, Server rtmp://ADDRESS:PORT/live, Stream Key this)."},
		}, liveAttrs()...),
	},
	{
		Type: "source", Kind: "stream", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "Anything ffmpeg reads by URL or path (RTSP cameras, HLS, RIST, MP4/MOV/MKV files), its H.264 or HEVC video remuxed without re-encoding to MPEG-TS by one ffmpeg process per source; a file plays at its own rate, once.",
		Attrs: append([]Attr{
			{Name: "url", Type: TypeString, Required: true, Doc: "What ffmpeg opens: rtsp://camera/stream, https://host/live.m3u8, clip.mp4 (relative to where onair runs)."},
		}, liveAttrs()...),
	},
	{
		Type: "source", Kind: "h264_file", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "An H.264 elementary stream or MPEG-TS file decoded on NVDEC.",
		Attrs: []Attr{
			mediaPath("The media file."),
			loopAttr(), onErrorAttr(),
			sizeAttr(), rateAttr(),
			{Name: "format", Type: TypeEnum, Enum: []string{"nv12"}, Default: "nv12", Doc: "Decoded pixel format (H.264 decodes to nv12 only)."},
			{Name: "streams", Type: TypeInt, Default: 1, Range: rng(1, 16), Doc: "Streams in the file; with 1, input routing may skip the demux."},
		},
		Blocks: []*Block{colourBlock, sourceAudioBlock},
	},
	{
		Type: "source", Kind: "raw_file", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "A file of raw NV12 or P010 frames, uploaded to the GPU as canvas.raw_upload says.",
		Attrs: []Attr{
			mediaPath("The raw frame file."),
			{Name: "format", Type: TypeEnum, Enum: []string{"nv12", "p010"}, DefaultDoc: "the show's format", Doc: "Pixel format of the frames in the file."},
			sizeAttr(), rateAttr(),
			loopAttr(), onErrorAttr(),
		},
		Blocks: []*Block{colourBlock, sourceAudioBlock},
	},
	{
		Type: "source", Kind: "browser", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "A browser window that hands over GPU buffers as file descriptors over a Unix socket.",
		Attrs: []Attr{
			{Name: "socket", Type: TypePath, Required: true, Doc: "Unix socket path the browser connects to; relative paths are relative to the show file's directory."},
			{Name: "key", Type: TypeEnum, Enum: []string{"alpha", "none"}, Default: "alpha", Doc: "What the page's alpha does: alpha keys it over the scene beneath its layer (transparent pixels show the scene, partial alpha blends with it); none composites it over black, as an opaque picture."},
			sizeAttr(), rateAttr(),
		},
		Blocks: []*Block{colourBlock, sourceAudioBlock},
	},
	{
		Type: "source", Kind: "test_pattern", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "A generated test pattern; needs no media.",
		Attrs: []Attr{
			{Name: "pattern", Type: TypeEnum, Enum: []string{"bars", "ramp", "solid", "checker"}, Default: "bars", Doc: "Which pattern."},
			{Name: "tone_hz", Type: TypeInt, Default: 1000, Range: rng(0, 20000), Doc: "The line-up tone the pattern sounds (48 kHz stereo), with a one-frame blip 12 dB louder on the frame that flashes each second (a white box in the middle of the picture), for lip-sync checks; 0: silent, and no flash."},
			{Name: "tone_dbfs", Type: TypeInt, Default: -18, Range: rng(-60, 0), Doc: "The tone's level in dBFS (peak); EBU's line-up level is -18."},
			sizeAttr(), rateAttr(),
			{Name: "format", Type: TypeEnum, Enum: []string{"nv12", "p010"}, DefaultDoc: "the show's format", Doc: "Pixel format generated."},
		},
		Blocks: []*Block{colourBlock, sourceAudioBlock},
	},
	{
		Type: "scene", Labels: []string{"NAME"}, Many: true, Expand: true,
		Doc: "A composition of layers, referenced as scene.NAME. Layers are drawn in z order, bottom first; ties keep declaration order.",
		Blocks: []*Block{{
			Type: "layer", Many: true, Dynamic: true,
			Doc: "Places one source on the canvas. May be generated with dynamic \"layer\" { for_each = ...; content { ... } }.",
			Attrs: []Attr{
				{Name: "source", Type: TypeSourceRef, Required: true, Doc: "The source instance shown: source.NAME, source.NAME[0] or source.NAME[\"key\"]."},
				{Name: "rect", Type: TypeRect, DefaultDoc: "the whole canvas", Doc: "[x, y, width, height] on the canvas in pixels; width and height positive, reaching at most rect_reach past the canvas (Geometry limits)."},
				{Name: "fit", Type: TypeEnum, Enum: []string{"stretch", "contain", "cover"}, Default: "stretch", Doc: "How the source fills the rect."},
				{Name: "crop", Type: TypeRect, DefaultDoc: "none (the whole source)", Doc: "[x, y, width, height] region of the source to use, inside the source's size (crop_reach)."},
				{Name: "opacity", Type: TypeNumber, Default: 1.0, Range: rng(0, 1), Doc: "0 transparent .. 1 opaque."},
				{Name: "z", Type: TypeInt, Default: 0, Doc: "Stacking order; higher is on top."},
			},
		}},
	},
	{
		Type: "bus", Kind: "program", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "A Program bus: composites the scene on air, cut, fade and wipe between scenes.",
		Attrs: []Attr{
			{Name: "scene", Type: TypeSceneRef, Required: true, Doc: "The scene on air at start: scene.NAME."},
		},
		Blocks: []*Block{busAudioBlock},
	},
	{
		Type: "bus", Kind: "aux", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc:   "An AUX bus: shows one source or one scene (exactly one of source and scene).",
		OneOf: [][]string{{"source", "scene"}},
		Attrs: []Attr{
			{Name: "source", Type: TypeSourceRef, Doc: "The source shown: source.NAME[...]."},
			{Name: "scene", Type: TypeSceneRef, Doc: "The scene shown: scene.NAME."},
			{Name: "routes", Type: TypeRouteList, DefaultDoc: "none: the bus shows only what it starts with", Doc: "What an operator may switch the bus to on air (cut, fade, wipe), besides what it starts with: sources (drawn over the whole canvas) and scenes; source.NAME takes every instance. Each source routed, or drawn by a scene routed, feeds the bus's compositor: an edge each in the plan."},
		},
		Blocks: []*Block{busAudioBlock},
	},
	{
		Type: "output", Kind: "record", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "Writes a bus to a Y4M file.",
		Attrs: []Attr{
			busAttr(),
			{Name: "path", Type: TypePath, Required: true, Doc: "The .y4m file to write; relative to the show file's directory."},
		},
	},
	{
		Type: "output", Kind: "null", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc:   "Takes a bus's frames and drops them (for measurement).",
		Attrs: []Attr{busAttr()},
	},
	{
		Type: "output", Kind: "ffmpeg", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "Pipes a bus's raw frames to an external ffmpeg process.",
		Attrs: []Attr{
			busAttr(),
			{Name: "args", Type: TypeStringList, Required: true, Doc: "ffmpeg arguments after the input options, e.g. [\"-c:v\", \"libx264\", \"out.mp4\"]."},
			{Name: "audio", Type: TypeBool, Default: false, Doc: "Give ffmpeg the bus's sound as input 1 (48 kHz stereo float on a pipe of its own), for args to map and encode: [\"-map\", \"0:v\", \"-map\", \"1:a\", \"-c:a\", \"aac\", ...]."},
		},
	},
	streamOutput, fileOutput, hlsOutput, // schema_delivery.go
	{
		Type: "output", Kind: "preview", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
		Doc: "JPEG snapshots of a bus served by the status server.",
		Attrs: []Attr{
			busAttr(),
			{Name: "interval_ms", Type: TypeInt, Default: 1000, Range: rng(40, 60000), Doc: "Time between snapshots in ms."},
			{Name: "quality", Type: TypeInt, Default: 80, Range: rng(1, 100), Doc: "JPEG quality."},
		},
	},
	{
		Type: "tally", Kind: "tsl5", Labels: []string{"KIND", "NAME"}, Many: true,
		Doc: "Sends tally as TSL UMD 5.0 to a tally controller, a multiviewer or a monitor's under-monitor display: a display per source (index: the source's place in the sorted list /status gives; text: the source's name as the show writes it, cam[0]), red on every lamp while the source is visible in a Program bus's picture (a layer, a PiP, a keyed graphic), green while on a preview, off otherwise; on every change of the tally and once a second. A destination that cannot be reached is tried again on the next send and logged once per error.",
		Attrs: []Attr{
			{Name: "address", Type: TypeString, Required: true, Doc: "The receiver's host name or IP address."},
			{Name: "port", Type: TypeInt, Required: true, Range: rng(1, 65535), Doc: "The receiver's port."},
			{Name: "transport", Type: TypeEnum, Enum: []string{"udp", "tcp"}, Default: "udp", Doc: "udp sends each packet as a datagram; tcp wraps each in TSL 5.0's DLE/STX framing over one connection, dialled again after a loss."},
			{Name: "screen", Type: TypeInt, Default: 0, Range: rng(0, 65534), Doc: "The TSL 5.0 screen the displays belong to."},
		},
	},
	{
		Type: "moved", Many: true,
		Doc: "Records a rename so that a plan diff updates the element in place instead of replacing it. The addresses are not evaluated.",
		Attrs: []Attr{
			{Name: "from", Type: TypeTraversal, Required: true, Doc: "The old address: source.a, source.cam[3], scene.x, bus.y, output.z."},
			{Name: "to", Type: TypeTraversal, Required: true, Doc: "The new address."},
		},
	},
}

// lookupKind returns the schema of a kind of a labelled block type.
func lookupKind(typ, kind string) *Block {
	for _, b := range Schema {
		if b.Type == typ && b.Kind == kind {
			return b
		}
	}
	return nil
}

// kindsOf lists the kinds of a block type in schema order.
func kindsOf(typ string) []string {
	var out []string
	for _, b := range Schema {
		if b.Type == typ && b.Kind != "" {
			out = append(out, b.Kind)
		}
	}
	return out
}

func topBlock(typ string) *Block {
	for _, b := range Schema {
		if b.Type == typ {
			return b
		}
	}
	return nil
}

func init() {
	var walk func(b *Block)
	walk = func(b *Block) {
		b.schema = b.buildSchema()
		for _, c := range b.Blocks {
			walk(c)
		}
	}
	for _, b := range Schema {
		walk(b)
	}
}

// rootSchema is the top-level hcl schema, built from Schema.
var rootSchema = func() *hcl.BodySchema {
	s := &hcl.BodySchema{}
	seen := map[string]bool{}
	for _, b := range Schema {
		if seen[b.Type] {
			continue
		}
		seen[b.Type] = true
		s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: b.Type, LabelNames: labelNames(b)})
	}
	return s
}()

// IsPath reports whether attribute name of the blocks of type typ and
// kind kind ("source", "hevc_file") is a path, which plans carry relative
// to the show's directory.
func IsPath(typ, kind, name string) bool {
	for _, b := range Schema {
		if b.Type == typ && b.Kind == kind {
			a := b.Attr(name)
			return a != nil && a.Type == TypePath
		}
	}
	return false
}
