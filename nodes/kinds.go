package nodes

// The built-in kinds. Each declaration is the whole truth about its kind:
// the compiler's rules read the traits, its build reads how a show element
// lowers to the kind (Lower, From) and its fusion passes what the kind
// fuses into (Fuses); each backend's table of constructors (nodes/show,
// nodes/cpu, nodes/cuda) builds its nodes, and `onair nodes` prints this
// file's contents as the reference.

func ptr(n int) *int { return &n }

var (
	pathParam     = Param{Name: "path", Type: String, Doc: "The file to read, as resolved from the show."}
	loopParam     = Param{Name: "loop", Type: Bool, Default: false, Doc: "Start again at the end of the file; timestamps count on."}
	colourParam   = Param{Name: "colour", Type: String, Doc: "Colour tags stamped on every frame: primaries/transfer/matrix/range, e.g. bt709/bt709/bt709/limited."}
	formatParam   = Param{Name: "format", Type: Enum, Enum: []string{"nv12", "p010"}, Default: "nv12", Doc: "Pixel format of the frames: nv12 (8-bit) or p010 (10-bit)."}
	sizeParam     = Param{Name: "size", Type: String, Doc: "Frame size, WIDTHxHEIGHT."}
	rateParam     = Param{Name: "frame_rate", Type: Rational, Doc: "Frames per second as a fraction, \"30/1\", \"30000/1001\"."}
	onErrorParam  = Param{Name: "on_error", Type: Enum, Enum: []string{"black", "hold"}, Default: "black", Doc: "What a raw source sends while its file is missing or unreadable: black frames, or its last good frame again."}
	codecParam    = Param{Name: "codec", Type: Enum, Enum: []string{"hevc", "h264"}, Default: "hevc", Doc: "What the file holds; in a transport stream, the first stream of this codec is played."}
	decodeOnError = Param{Name: "on_error", Type: Enum, Enum: []string{"black", "hold"}, Default: "black", Doc: "What the source sends while its file is missing or cannot be decoded: black frames, or its last good frame again."}
	patternParam  = Param{Name: "pattern", Type: Enum, Enum: []string{"bars", "ramp", "solid", "checker"}, Default: "bars", Doc: "The picture."}
	tsKeys        = Param{Name: "timestamp_keys", Type: Strings, Doc: "Timestamp keys stamped on each frame; the frame_metadata fusion prunes the ones nobody reads."}
	frameFmts     = []string{FormatNV12, FormatP010}
)

// patternParams are the params of a test pattern's kinds (test_pattern,
// test_pattern_cuda).
func patternParams() []Param {
	return []Param{
		patternParam,
		formatParam, sizeParam, colourParam,
		{Name: "tone_hz", Type: Int, Default: 1000, Min: ptr(0), Max: ptr(20000), Doc: "The line-up tone each frame carries (48 kHz stereo), with a one-frame blip 12 dB louder on the frame that flashes each second (a white box in the middle of the picture); 0: silent, no flash."},
		{Name: "tone_dbfs", Type: Int, Default: -18, Min: ptr(-60), Max: ptr(0), Doc: "The tone's level, dBFS (peak)."},
	}
}

// patternLower is a test pattern's lowering.
func patternLower(e *Element) map[string]any {
	p := map[string]any{"pattern": orDefault(e.String("pattern"), patternParam), "format": e.Format, "size": e.Size, "colour": e.Colour}
	for _, a := range []string{"tone_hz", "tone_dbfs"} {
		if v, ok := e.Attr(a); ok {
			p[a] = v
		}
	}
	return p
}

// pacerLower is a pacer's lowering: it counts in the pacers' unit at the
// element's rate.
func pacerLower(e *Element) map[string]any {
	return map[string]any{"time_base": TimeBase, "frame_rate": e.Rate}
}

// TimeBase is the pacers' unit: exact for every supported rate.
const TimeBase = "1/120000"

// fileFrames are the params of a node that reads a file's frames itself.
func fileFrames(e *Element) map[string]any {
	return map[string]any{"path": e.Path, "loop": e.Loop, "format": e.Format, "size": e.Size, "colour": e.Colour, "on_error": orDefault(e.OnError, decodeOnError)}
}

// fromCanvas sets each of params of kind from the canvas setting that
// feeds it (Param.Canvas) when that differs from the param's default
// (plans say only what differs).
func fromCanvas(p map[string]any, e *Element, kind string, params ...string) {
	for _, param := range params {
		if v := canvasFeed(e, kind, param, 0); v != nil && v != "" && v != paramDefault(kind, param) {
			p[param] = v
		}
	}
}

// canvasFeed is the value of the i-th canvas setting that feeds param of
// kind (Param.Canvas), nil when the show's canvas has none.
func canvasFeed(e *Element, kind, param string, i int) any {
	k, ok := Lookup(kind)
	if !ok {
		return nil
	}
	if p, ok := k.Param(param); ok && i < len(p.Canvas) {
		return e.Canvas[p.Canvas[i]]
	}
	return nil
}

// canvasInt is canvasFeed as a whole number.
func canvasInt(e *Element, kind, param string, i int) int {
	n, _ := asInt(canvasFeed(e, kind, param, i))
	return n
}

// paramDefault is the default of a kind's param, as it declares it.
func paramDefault(kind, name string) any {
	if k, ok := Lookup(kind); ok {
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
// liveTransports are the live source kinds, each a transport.
var liveTransports = []string{"srt", "udp", "stream", "rtmp"}

// liveParams are what every live source's receiver takes (live_decode on
// the CPU, live_nvdec on the GPU): its transport's settings, the picture
// it declares, its loss handling.
func liveParams() []Param {
	return []Param{
		{Name: "transport", Type: Enum, Enum: liveTransports, Default: "udp", Doc: "How the stream arrives (the source's kind)."},
		{Name: "mode", Type: Enum, Enum: []string{"caller", "listener"}, Default: "listener", Doc: "SRT: dial the sender, or wait for it."},
		{Name: "address", Type: String, Doc: "Where a listener binds (\"\" is loopback) or a caller dials; a UDP multicast group is joined."},
		{Name: "port", Type: Int, Default: 0, Min: ptr(0), Max: ptr(65535), Doc: "The UDP port (SRT and UDP), or RTMP's TCP port."},
		{Name: "latency_ms", Type: Int, Default: 120, Min: ptr(20), Max: ptr(8000), Doc: "SRT's receive latency."},
		{Name: "passphrase_env", Type: String, Doc: "SRT: the environment variable holding the passphrase, read at start (the passphrase is never in a plan)."},
		{Name: "stream_id", Type: String, Doc: "SRT: sent by a caller; the one a listener takes."},
		{Name: "interface", Type: String, Doc: "UDP: the interface a multicast group is joined on."},
		{Name: "rtp", Type: Bool, Default: false, Doc: "UDP: datagrams are RTP packets."},
		{Name: "url", Type: String, Doc: "stream: what ffmpeg opens."},
		{Name: "key", Type: String, Doc: "RTMP: the stream key a publisher must push to."},
		{Name: "loss_timeout_ms", Type: Int, Default: 1000, Min: ptr(50), Max: ptr(60000), Doc: "How long the stream may bring nothing before the source counts as lost."},
		formatParam, sizeParam, colourParam,
		{Name: "on_error", Type: Enum, Enum: []string{"black", "hold"}, Default: "black", Doc: "What the source sends while its stream is lost: black frames, or its last good frame again."},
	}
}

// liveLower is a live source's receiver's params from its element.
func liveLower(e *Element) map[string]any {
	p := map[string]any{"transport": e.Kind, "format": e.Format, "size": e.Size, "colour": e.Colour, "on_error": orDefault(e.OnError, decodeOnError)}
	for _, name := range []string{"mode", "address", "port", "latency_ms", "passphrase_env", "stream_id", "interface", "rtp", "url", "key", "loss_timeout_ms"} {
		if v, ok := e.Attr(name); ok {
			p[name] = v
		}
	}
	return p
}

func BrowserReturnQueue(queue int) int {
	return max(0, min(browserReturnFrames, queue-browserMixerFrames))
}

func init() {
	for _, k := range builtin {
		Register(k)
	}
}

var builtin = []*Kind{
	{
		Name: "input_rec",
		Doc:  "Reads a media file in packets on its own thread, with a read timeout. With input_routing = \"input\" it hands a one-stream file's video straight to the decoder.",
		Params: []Param{pathParam, loopParam,
			{Name: "format", Type: Enum, Enum: []string{"nv12", "p010"}, Doc: "A raw file's pixel format (raw files only: an encoded file says its own)."},
			{Name: "codec", Type: Enum, Enum: []string{"hevc", "h264"}, Doc: "An encoded file's coding (HEVC and H.264 files only): the reader splits the stream into its access units."},
			{Name: "size", Type: String, Doc: "A raw file's picture size, WIDTHxHEIGHT (raw files only)."},
			onErrorParam,
			{Name: "streams", Type: Int, Default: 1, Min: ptr(1), Max: ptr(16), Doc: "Streams in the file."},
			{Name: "read_timeout_ms", Type: Int, Default: 5000, Min: ptr(1), Doc: "A read that takes longer stops the source with an error."},
			tsKeys, colourParam},
		Traits: Traits{Blocking: true, Roles: Source, Domain: Host, Emits: []string{FormatPackets}, MaxOutputs: 1},
		Lower: func(e *Element) map[string]any {
			p := map[string]any{"path": e.Path, "loop": e.Loop, "streams": e.Streams, "timestamp_keys": []string{"input_rec_time", "pts_wallclock"}, "colour": e.Colour}
			if e.Codec != "" {
				p["codec"] = e.Codec
			} else { // raw pictures say nothing of themselves
				p["format"], p["size"] = e.Format, e.Size
				if e.OnError != "" {
					p["on_error"] = e.OnError
				}
			}
			return p
		},
		Readiness: "the file is open and a first packet has been read",
	},
	{
		Name: "demux",
		Doc:  "Splits a container's packets into one output per offered stream, on its own thread. Every stream it offers must have exactly one consumer.",
		Params: []Param{
			{Name: "streams", Type: Int, Default: 1, Min: ptr(1), Max: ptr(16), Doc: "Streams in the container."},
			{Name: "offers", Type: Int, Default: 1, Min: ptr(1), Max: ptr(16), Doc: "Streams offered to consumers, one output edge each; the others are discarded. Every routing kind declares offers."},
		},
		Traits:    Traits{Blocking: true, Roles: Routing, Domain: Host, Takes: []string{FormatPackets}, Emits: []string{FormatPackets}, MaxOutputs: 16},
		Lower:     func(e *Element) map[string]any { return map[string]any{"streams": e.Streams, "offers": 1} },
		Readiness: "every offered stream has carried a packet",
	},
	{
		Name: "dec_video",
		Doc:  "Decodes video packets into frames on its own thread: on NVDEC (mode nvdec, frames in device memory) or by wrapping raw packets as frames (mode rawvideo, host memory).",
		Params: []Param{
			{Name: "mode", Type: Enum, Enum: []string{"nvdec", "rawvideo"}, Default: "nvdec", Doc: "nvdec decodes HEVC/H.264 on the GPU; rawvideo wraps raw NV12/P010 packets."},
			{Name: "surfaces", Type: Int, Default: 8, Min: ptr(1), Max: ptr(32), Doc: "NVDEC decode surfaces held in VRAM (nvdec only)."},
			codecParam, formatParam, sizeParam, colourParam, decodeOnError, tsKeys,
		},
		Traits: Traits{Blocking: true, Roles: Decoder, Domain: Device, Takes: []string{FormatPackets}, Emits: frameFmts, MaxOutputs: 1},
		Lower: func(e *Element) map[string]any {
			p := map[string]any{"format": e.Format, "size": e.Size, "timestamp_keys": []string{"decode_time", "demux_time"}}
			if e.Codec != "" {
				p["codec"], p["colour"], p["on_error"] = e.Codec, e.Colour, orDefault(e.OnError, decodeOnError)
			}
			return p
		},
		Fuses:     Fuses{DecodeLoopWhen: map[string][]string{"mode": {"nvdec"}}, WithReader: "nvdec_file"},
		Readiness: "a first frame has been decoded",
	},
	{
		Name: "upload",
		Doc:  "Copies host frames to device memory on its own thread: hwupload makes pageable memory transferable on every frame (it missed 69 % of Program deadlines at 60 fps with 17 raw sources); pinned copies through a page-locked staging block on its own CUDA stream.",
		Params: []Param{
			{Name: "mode", Type: Enum, Enum: []string{"hwupload", "pinned"}, Default: "hwupload", Doc: "hwupload (pageable) or pinned (page-locked staging)."},
		},
		Traits:    Traits{Blocking: true, Roles: Uploader, Domain: Device, Takes: frameFmts, Emits: frameFmts, MaxOutputs: 1},
		Fuses:     Fuses{WithChain: "raw_video_file_cuda"},
		Readiness: "a first frame has reached device memory",
	},
	{
		Name: "raw_video_file_cuda",
		Doc:  "Reads raw NV12/P010 frames with pread() straight into page-locked memory and has the GPU fetch them: one copy, no demux, decoder or upload, and no thread of its own: it runs on its source's pacing loop. direct holds one frame of page-locked memory and hands its reads to a pool of reader threads shared by every direct source; resident holds the whole file (pinned, unswappable), reads each picture once and queues later transfers from the loop.",
		Params: []Param{
			{Name: "mode", Type: Enum, Enum: []string{"direct", "resident"}, Default: "direct", Doc: "direct: one page-locked frame; resident: a page-locked block the size of the file."},
			pathParam, loopParam, formatParam, sizeParam, colourParam, onErrorParam,
			{Name: "write_combined", Type: Bool, Default: false, Doc: "Allocate the block write-combined (measured: no difference; stays off)."},
		},
		Traits: Traits{Blocking: true, LoopWhen: map[string][]string{"mode": {"direct", "resident"}},
			Pool: &Pool{Name: "raw readers", Threads: 4}, PoolWhen: map[string][]string{"mode": {"direct"}},
			Roles: Source | Uploader, Domain: Device, Emits: frameFmts, MaxOutputs: 1},
		Lower: func(e *Element) map[string]any {
			p := map[string]any{"mode": e.Canvas.String("raw_upload"), "path": e.Path, "loop": e.Loop, "format": e.Format, "size": e.Size, "colour": e.Colour}
			if e.OnError != "" {
				p["on_error"] = e.OnError
			}
			return p
		},
		Readiness: "a first frame has been transferred to device memory",
	},
	{
		Name: "ipc_dmabuf_source",
		Doc:  "Receives a producer's buffers (a browser window's DMA-BUFs on the GPU, sealed memfds on the CPU) as file descriptors over a Unix socket (docs/PRODUCER-PROTOCOL.md), on the one thread every browser source's receiver shares, and gives one finished buffer back per arriving frame from its return queue; a retired connection gets every buffer back before its drain marker.",
		Params: []Param{
			{Name: "socket", Type: String, Doc: "The Unix socket the browser service connects to."},
			{Name: "return_queue", Type: Int, Default: 0, Min: ptr(0), Max: ptr(64), Doc: "Finished frames held back and returned one per arriving frame; 0 returns every frame at once."},
			{Name: "frames_in_flight", Type: Int, Default: 9, Min: ptr(1), Max: ptr(9), Canvas: []string{"browser_frame_queue"}, Doc: "Frames a window may have out of the browser."},
			{Name: "socket_mode", Type: Enum, Enum: []string{"0600", "0660", "0666"}, Default: "0600", Canvas: []string{"browser_socket_mode"}, Doc: "The socket's mode, whatever the umask."},
			{Name: "peer", Type: Enum, Enum: []string{"same_user", "any"}, Default: "same_user", Canvas: []string{"browser_peer"}, Doc: "same_user refuses producers of another user (SO_PEERCRED); any takes whoever the mode lets connect."},
			{Name: "size", Type: String, Doc: "The source's picture size, WIDTHxHEIGHT: a producer announcing a larger picture is refused (ERROR, format)."}, colourParam,
		},
		Traits: Traits{Roles: Source, Domain: Device, Emits: []string{FormatDMABUF}, MaxOutputs: 1,
			Pool: &Pool{Name: "browser receivers", Threads: 1}},
		Lower: func(e *Element) map[string]any {
			q := canvasInt(e, "ipc_dmabuf_source", "frames_in_flight", 0)
			p := map[string]any{"socket": e.String("socket"), "return_queue": BrowserReturnQueue(q), "frames_in_flight": q, "size": e.Size, "colour": e.Colour}
			fromCanvas(p, e, "ipc_dmabuf_source", "socket_mode", "peer")
			return p
		},
		Readiness: "the browser has connected and sent a first buffer",
	},
	{
		Name: "gpu_import",
		Doc:  "Imports each received buffer once (on the GPU the producer's exported CUDA memory, mapped with cuMemImportFromShareableHandle, or a memfd mapped and page-locked; on the CPU a memfd mapped), keeps it until unused for import_ttl_ms, and converts its pictures (BGRA/RGBA with straight or premultiplied alpha, or NV12) to the canvas format in BT.709 limited range, keeping the alpha of pictures that have it (an alpha plane beside the colour, premultiplied over black) so that the compositor keys them over the scene; releases run on a thread of their own (on the GPU a release holds a lock every CUDA call in the process needs).",
		Params: []Param{
			{Name: "import_ttl_ms", Type: Int, Default: 10000, Min: ptr(0), Max: ptr(3600000), Live: true, Canvas: []string{"import_ttl_ms"}, Doc: "How long an unused import is kept; under 10 s re-imports pages that are still live."},
			{Name: "purge_idle", Type: Bool, Default: false, Doc: "As the show goes on air, release the imports start-up went through and left unused for 500 ms (shows set it; buffers the producer destroyed are released either way)."},
			formatParam,
			{Name: "key", Type: Enum, Enum: []string{"alpha", "none"}, Default: "alpha", Doc: "What a picture's alpha does: alpha keys it over the scene (each pixel's alpha times the layer's opacity, the scene seen through transparent pixels); none composites it over black, as an opaque picture (no alpha plane is allocated)."},
			{Name: "convert_on", Type: Enum, Enum: []string{"thread", "loop"}, Default: "thread", Doc: "Where pictures are imported and converted: a thread of the node's own, or its source's pacing loop (a GPU conversion is a kernel and a short wait: the CUDA backend's lowering picks loop; a CPU conversion takes milliseconds and keeps its thread)."},
		},
		Traits: Traits{Blocking: true, LoopWhen: map[string][]string{"convert_on": {"loop"}},
			Roles: Importer, Domain: Device, Takes: []string{FormatDMABUF}, Emits: frameFmts, MaxOutputs: 1},
		Lower: func(e *Element) map[string]any {
			// The mixer purges what start-up left idle as it goes on air (seed 003).
			p := map[string]any{"import_ttl_ms": canvasInt(e, "gpu_import", "import_ttl_ms", 0), "purge_idle": true, "format": e.Format}
			if k := e.String("key"); k != "" && k != paramDefault("gpu_import", "key") { // plans say only what differs from the kind's default
				p["key"] = k
			}
			return p
		},
		Readiness: "a first buffer has been imported",
	},
	{
		Name: "realtime",
		Doc:  "Paces a file source's frames on the show's clock, on its source's pacing loop. Counts in a rational time base (1/120000 s) and treats a release time inside the clock's current millisecond as due.",
		Params: []Param{
			{Name: "time_base", Type: Rational, Default: "1/120000", Doc: "The unit it counts and stamps in."},
			{Name: "tick_period", Type: Rational, Doc: "Older spelling: the period of one clock tick. A node takes time_base or tick_period, never both."},
			rateParam,
		},
		Exclusive: [][]string{{"time_base", "tick_period"}},
		Traits:    Traits{Roles: Pacer, Takes: frameFmts, Emits: frameFmts, MaxOutputs: 1},
		Lower:     pacerLower,
		Readiness: "a first frame has been released on time",
	},
	{
		Name: "smooth_timestamps",
		Doc:  "Paces a browser source: re-times the frames a window paints unevenly onto the show's frame grid, on its source's pacing loop.",
		Params: []Param{
			{Name: "time_base", Type: Rational, Doc: "The unit it counts and stamps in, \"1/120000\"."},
			rateParam,
		},
		Traits:    Traits{Roles: Pacer, Takes: frameFmts, Emits: frameFmts, MaxOutputs: 1},
		Lower:     pacerLower,
		Readiness: "a first frame has been released on time",
	},
	{
		Name: "one_to_many",
		Doc:  "Hands each frame of one source to every compositor that may show it, on a thread of its own.",
		Params: []Param{
			{Name: "outputs", Type: Int, Default: 1, Min: ptr(1), Max: ptr(64), Doc: "Consumers fed."},
		},
		Traits:    Traits{Blocking: true, Roles: FanOut, Takes: frameFmts, Emits: frameFmts, MaxOutputs: 64},
		Fuses:     Fuses{OnLoop: "one_to_many_nb"},
		Readiness: "every edge leaving it has carried a frame",
	},
	{
		Name: "one_to_many_nb",
		Doc:  "The fan-out without a thread: runs on the pacing loop that paces its source (source_fan_out = \"event_loop\").",
		Params: []Param{
			{Name: "outputs", Type: Int, Default: 1, Min: ptr(1), Max: ptr(64), Doc: "Consumers fed."},
		},
		Traits:    Traits{Roles: FanOut, Takes: frameFmts, Emits: frameFmts, MaxOutputs: 64},
		Readiness: "every edge leaving it has carried a frame",
	},
	{
		Name: "compositor",
		Doc:  "Draws one bus at each tick's deadline from the frames of the inputs that signalled, looking at most every input_poll_ms (at once for a cut). A Program compositor has a thread of its own; an AUX compositor is paced by the default loop.",
		Params: []Param{
			{Name: "bus", Type: Enum, Enum: []string{"program", "aux"}, Default: "program", Doc: "program may cut to any scene; aux shows one source or one scene."},
			{Name: "input_poll_ms", Type: Int, Default: 8, Min: ptr(0), Max: ptr(1000), Live: true, Canvas: []string{"input_poll_ms", "aux_input_poll_ms"}, Doc: "Longest wait between looks at the inputs; 0 wakes for every arriving frame."},
			{Name: "scenes", Type: Strings, Live: true, Doc: "Scenes the bus may show; adding or removing one changes the bus in place, without going off air."},
			{Name: "scene", Type: String, Live: true, Doc: "The scene on air at start."},
			{Name: "colour", Type: String, Doc: "The show's colour tags, stamped on every picture the bus draws: primaries/transfer/matrix/range."},
			{Name: "timecode_start", Type: String, Default: "", Canvas: []string{"timecode_start"}, Doc: "The timecode of tick 0, HH:MM:SS:FF; empty: the time of day when the show starts."},
			{Name: "audio_strips", Type: Strings, Live: true, Doc: "The bus's mix, a strip per source that is not at its defaults: \"source.NAME gain_db=-6 mode=follow|always|off mute=true pan=-1..1\" (a source with none follows video at 0 dB)."},
			{Name: "audio_master_db", Type: String, Default: "0", Live: true, Doc: "The bus's master fader, dB (-120 to 12)."},
			{Name: "audio_mix_minus", Type: String, Default: "", Live: true, Doc: "A source the bus's mix leaves out (mix-minus), or empty."},
			formatParam, sizeParam, rateParam,
		},
		Traits: Traits{Blocking: true, LoopWhen: map[string][]string{"bus": {"aux"}}, Roles: Compositor, Takes: frameFmts, Emits: frameFmts, MaxOutputs: 32},
		From:   []string{"bus"},
		Lower: func(e *Element) map[string]any {
			feed := 0 // a Program bus's input_poll_ms; an AUX bus's is the second setting
			if e.Kind == "aux" {
				feed = 1
			}
			p := map[string]any{"bus": e.Kind, "format": e.Format, "size": e.Size, "frame_rate": e.Rate, "colour": e.Colour, "input_poll_ms": canvasInt(e, "compositor", "input_poll_ms", feed)}
			fromCanvas(p, e, "compositor", "timecode_start") // else the registry's default, the time of day
			for _, a := range []string{"scene", "scenes", "audio_strips", "audio_master_db", "audio_mix_minus"} {
				if v, ok := e.Attr(a); ok {
					p[a] = v
				}
			}
			return p
		},
		Readiness: "a first tick has been drawn",
	},
	{
		Name:      "output_record",
		Doc:       "Writes a bus to a Y4M file, on its own thread.",
		Params:    []Param{pathParam},
		Traits:    Traits{Blocking: true, Roles: Sink, Takes: frameFmts},
		From:      []string{"output.record"},
		Lower:     func(e *Element) map[string]any { return map[string]any{"path": e.Path} },
		Readiness: "the file is open and a first frame has been written",
	},
	{
		Name:      "output_null",
		Doc:       "Takes a bus's frames and discards them (for measuring).",
		Traits:    Traits{Roles: Sink, Takes: frameFmts},
		From:      []string{"output.null"},
		Readiness: "a first frame has been taken",
	},
	{
		Name: "output_ffmpeg",
		Doc:  "Pipes a bus's raw frames to an external ffmpeg process (libx264, or h264_nvenc where the GPU has NVENC).",
		Params: []Param{
			{Name: "args", Type: Strings, Doc: "ffmpeg arguments after the input options."},
			{Name: "audio", Type: Bool, Default: false, Doc: "Give ffmpeg the bus's sound as input 1 (48 kHz stereo float on its own pipe), for args to map and encode: \"-map\", \"0:v\", \"-map\", \"1:a\", \"-c:a\", \"aac\"."},
		},
		Traits: Traits{Blocking: true, Roles: Sink, Takes: frameFmts},
		From:   []string{"output.ffmpeg"},
		Lower: func(e *Element) map[string]any {
			list, _ := e.Attrs["args"].([]string)
			p := map[string]any{"args": append([]string{}, list...)}
			if v, ok := e.Attr("audio"); ok {
				p["audio"] = v
			}
			return p
		},
		Readiness: "ffmpeg has started and accepted a first frame",
	},
	{
		Name: "output_preview",
		Doc:  "Keeps JPEG snapshots of a bus for the status server.",
		Params: []Param{
			{Name: "interval_ms", Type: Int, Default: 1000, Min: ptr(40), Max: ptr(60000), Live: true, Doc: "Time between snapshots."},
			{Name: "quality", Type: Int, Default: 80, Min: ptr(1), Max: ptr(100), Live: true, Doc: "JPEG quality."},
		},
		Traits: Traits{Roles: Sink, Takes: frameFmts},
		From:   []string{"output.preview"},
		Lower: func(e *Element) map[string]any {
			p := map[string]any{}
			for _, a := range []string{"interval_ms", "quality"} {
				if n := e.Int(a); n > 0 {
					p[a] = n
				}
			}
			return p
		},
		Readiness: "a first snapshot has been taken",
	},
	{
		Name:      "test_pattern",
		Doc:       "Generates frames in host memory (bars, ramp, solid, checker) on its own thread, a frame or two ahead of its pacer, so that drawing (up to a millisecond at 1080p) never delays a pacing loop; the CPU backend's test_pattern (the CUDA backend's is test_pattern_cuda).",
		Params:    patternParams(),
		Traits:    Traits{Blocking: true, Roles: Source, Domain: Host, Emits: frameFmts, MaxOutputs: 1},
		Lower:     patternLower,
		Readiness: "a first frame has been generated",
	},
	{
		Name:      "test_pattern_cuda",
		Doc:       "Makes test_pattern's pictures, byte for byte, in device memory without drawing them on the CPU: the pattern's art (its first picture twice as wide, or for checker two squares larger, and the ink of the stamp and the flash) is drawn once and kept on the GPU, shared by the sources of one pattern, format and size, and each frame is cut from it by one launch of the copy kernel (the background at the frame's offset, the stamp's 48 blocks), a second on a frame that flashes. No thread of its own: it runs on its source's pacing loop, makes a picture whenever its edge has room, and never waits for the GPU. The CUDA backend's test_pattern.",
		Params:    patternParams(),
		Traits:    Traits{Roles: Source, Domain: Device, Emits: frameFmts, MaxOutputs: 1},
		Lower:     patternLower,
		Readiness: "a first frame has been queued in device memory",
	},
	{
		Name: "ffmpeg_decode",
		Doc:  "Decodes an HEVC or H.264 file (Annex B elementary stream or MPEG-TS) into host memory on its own thread: onair splits the file into access units and checks them against the source's size and format, an ffmpeg process decodes them, and the raw NV12/P010 frames come back over a pipe into pooled frames. The CPU backend's hevc_file and h264_file; the frames are byte for byte NVDEC's.",
		Params: []Param{pathParam, loopParam,
			codecParam, formatParam, sizeParam, colourParam,
			decodeOnError, tsKeys,
			{Name: "threads", Type: Int, Default: 1, Min: ptr(1), Max: ptr(64), Doc: "ffmpeg's decoding threads for this source."}},
		Traits: Traits{Blocking: true, Roles: Source | Decoder, Domain: Host, Emits: frameFmts, MaxOutputs: 1},
		Lower: func(e *Element) map[string]any {
			p := fileFrames(e)
			if e.Codec != "" {
				p["codec"], p["timestamp_keys"] = e.Codec, []string{"decode_time"} // ffmpeg reads the file: only the pictures' moment is onair's to see
			}
			return p
		},
		Readiness: "a first frame has been decoded",
	},
	{
		Name: "live_decode",
		Doc:  "Receives a live source's MPEG-TS (SRT through libsrt, UDP or RTP, or anything ffmpeg reads remuxed by one ffmpeg process) or an RTMP publisher's stream (remuxed to MPEG-TS with its AAC sound) and decodes its H.264 or HEVC on the CPU with ffmpeg on a thread of its own, from the stream's first sequence parameter set, and its first sound track with an ffmpeg of its own on the pictures' clock (each picture waits up to 500 ms for its samples; why a stream's sound is not on air is its live.sound_error). The frame synchroniser's half (show.FrameSync): a decoded frame that arrives while more than one has waited for the pacer for a whole second is dropped (the source runs ahead of the show's clock; one behind it is repeated by the pacer, an underrun), counted, so its latency stays within a frame of one frame period; a stream that brings nothing for loss_timeout_ms is lost, shown as its on_error picture at the source's rate while a caller reconnects with backoff and a listener waits for its next connection. The CPU backend's srt, udp, stream and rtmp sources.",
		Params: append(liveParams(),
			Param{Name: "threads", Type: Int, Default: 1, Min: ptr(1), Max: ptr(64), Doc: "ffmpeg's decoding threads for this source."}),
		Traits:    Traits{Blocking: true, Roles: Source | Decoder, Domain: Host, Emits: frameFmts, MaxOutputs: 1},
		Lower:     liveLower,
		Readiness: "a first frame has been decoded (or its on_error picture sent)",
	},
	{
		Name: "live_nvdec",
		Doc:  "Receives a live source's MPEG-TS or RTMP stream as live_decode does (the same transports, on a goroutine of its own), splits it into access units (package es) and decodes them on NVDEC, on a decode loop it shares with the show's other decoders, as nvdec_file decodes a file's: one decoder a connection, from its first sequence parameter set, its pictures copied into device frames. The frame synchroniser's half, as live_decode's (show.FrameSync, counted); a stream that brings nothing for loss_timeout_ms is lost and shown as its on_error picture. The CUDA backend's srt, udp, stream and rtmp sources.",
		Params: append(liveParams(),
			Param{Name: "surfaces", Type: Int, Default: 8, Min: ptr(1), Max: ptr(32), Doc: "NVDEC decode surfaces held in VRAM beyond the stream's own."}),
		Traits:    Traits{Blocking: true, Roles: Source | Decoder, Domain: Device, Emits: frameFmts, MaxOutputs: 1},
		Lower:     liveLower,
		Fuses:     Fuses{DecodeLoopWhen: map[string][]string{"transport": liveTransports}},
		Readiness: "a first frame has been decoded (or its on_error picture sent)",
	},
	{
		Name: "nvdec_file",
		Doc:  "Reads an HEVC or H.264 file (Annex B elementary stream or MPEG-TS) and decodes it on NVDEC, on a decode loop it shares with other decoders: the loop reads each access unit from the file and hands it straight to the engine, maps the pictures that come out and copies them into device frames. input_rec and dec_video fused (input_routing = \"input\", decoder_placement = \"decode_loops\").",
		Params: []Param{pathParam, loopParam, codecParam, formatParam, sizeParam, colourParam,
			decodeOnError,
			{Name: "surfaces", Type: Int, Default: 8, Min: ptr(1), Max: ptr(32), Doc: "NVDEC decode surfaces held in VRAM beyond the stream's own."},
			{Name: "parser", Type: Enum, Enum: []string{"nvidia", "onair"}, Default: "nvidia", Canvas: []string{"nvdec_parser"}, Doc: "Which parser reads an HEVC file's access units: NVIDIA's, or onair's own (cuda/hevc), which fills NVDEC's picture parameters itself; H.264 always takes NVIDIA's."},
			tsKeys},
		Traits: Traits{Roles: Source | Decoder, Domain: Device, Emits: frameFmts, MaxOutputs: 1},
		Lower: func(e *Element) map[string]any {
			p := fileFrames(e)
			p["codec"] = e.Codec
			if e.Codec == "hevc" {
				fromCanvas(p, e, "nvdec_file", "parser")
			}
			return p
		},
		Readiness: "a first frame has been decoded",
	},
	{
		Name: "raw_file_cpu",
		Doc:  "Reads raw NV12/P010 frames with pread() into host memory on its own thread: the raw source of the CPU backend.",
		Params: []Param{pathParam, loopParam, formatParam, sizeParam, colourParam,
			onErrorParam},
		Traits:    Traits{Blocking: true, Roles: Source, Domain: Host, Emits: frameFmts, MaxOutputs: 1},
		Lower:     fileFrames,
		Readiness: "a first frame has been read",
	},
}
