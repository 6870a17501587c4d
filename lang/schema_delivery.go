package lang

// The delivery outputs: a bus encoded by ffmpeg and sent to a stream, a
// file or an HLS directory, with the encoding declared once in video and
// audio blocks (package delivery generates the command line).

var videoBlock = &Block{
	Type: "video",
	Doc:  "How the output encodes the picture. Every key is optional; an absent block is H.264 at 6 Mbit/s with a keyframe every two seconds.",
	Attrs: []Attr{
		{Name: "codec", Type: TypeEnum, Enum: []string{"h264", "hevc", "av1"}, Default: "h264", Doc: "The video coding."},
		{Name: "encoder", Type: TypeString, Default: "auto", Doc: "\"auto\": NVENC (h264_nvenc, hevc_nvenc, av1_nvenc) where the machine's GPU has it, else libx264, libx265 or libsvtav1; or the name of an encoder the ffmpeg has (`ffmpeg -encoders`), checked by validate and plan."},
		{Name: "bitrate", Type: TypeString, Default: "6M", Doc: "Bits per second, e.g. \"6M\", \"800k\" (16k to 1G); also the peak rate, with a buffer of two seconds' worth."},
		{Name: "gop", Type: TypeInt, DefaultDoc: "two seconds of frames", Range: rng(1, 1000), Doc: "Frames from one keyframe to the next (fixed: a file segment or HLS segment cuts on them)."},
		{Name: "preset", Type: TypeString, DefaultDoc: "veryfast (libx264, libx265), 10 (libsvtav1), p4 (NVENC)", Doc: "The encoder's speed/quality preset, as the encoder names them."},
		{Name: "profile", Type: TypeString, DefaultDoc: "the encoder's", Doc: "The codec profile, e.g. \"high\", \"main10\"."},
	},
}

var audioBlock = &Block{
	Type: "audio",
	Doc:  "How the output encodes the bus's sound, when the bus has sound. Every key is optional.",
	Attrs: []Attr{
		{Name: "codec", Type: TypeEnum, Enum: []string{"aac", "opus", "mp2"}, Default: "aac", Doc: "The audio coding."},
		{Name: "bitrate", Type: TypeString, Default: "128k", Doc: "Bits per second, e.g. \"128k\"."},
	},
}

// allowOutsideAttr lets a file or HLS output write outside the show
// file's directory (an absolute path, or one through ".."): refused
// otherwise, so that a show copied from elsewhere cannot write over
// files it does not own.
func allowOutsideAttr() Attr {
	return Attr{Name: "allow_outside", Type: TypeBool, Default: false, Doc: "Let path or dir lie outside the show file's directory (an absolute path, or one through \"..\"); without it such a path is an error."}
}

var streamOutput = &Block{
	Type: "output", Kind: "stream", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
	Doc: "Encodes a bus and sends it as a live stream: MPEG-TS over SRT, UDP or RIST, or FLV over RTMP(S). A destination that is down or refuses is tried again with backoff while the show stays on air.",
	Attrs: []Attr{
		busAttr(),
		{Name: "url", Type: TypeString, Required: true, Doc: "srt://HOST:PORT (caller by default; ?mode=listener to wait for a receiver), udp://HOST:PORT, rist://HOST:PORT, rtmp://HOST/APP/KEY or rtmps://..."},
	},
	Blocks: []*Block{videoBlock, audioBlock},
}

var fileOutput = &Block{
	Type: "output", Kind: "file", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
	Doc: "Encodes a bus into a recording that is never truncated: fragmented MP4 or MOV, Matroska or MPEG-TS, each playable up to its last fragment if onair is killed; a stop finishes the file.",
	Attrs: []Attr{
		busAttr(),
		{Name: "path", Type: TypePath, Required: true, Doc: "The file to write, ending in .mp4, .mov, .mkv or .ts (the ending names the container); relative to the show file's directory, and inside it unless allow_outside is set."},
		allowOutsideAttr(),
		{Name: "segment", Type: TypeString, DefaultDoc: "one file", Doc: "Roll to a new file this often, e.g. \"1h\", \"30m\": each file is named PATH-YYYYMMDD-HHMMSS.EXT and starts on a keyframe."},
	},
	Blocks: []*Block{videoBlock, audioBlock},
}

var hlsOutput = &Block{
	Type: "output", Kind: "hls", Labels: []string{"KIND", "NAME"}, Many: true, Expand: true,
	Doc: "Encodes a bus into an HLS directory: MPEG-TS segments and a live playlist, index.m3u8, that keeps the newest segments (older ones are deleted). ffmpeg's HLS muxer writes no partial segments, so low latency is short segments.",
	Attrs: []Attr{
		busAttr(),
		{Name: "dir", Type: TypePath, Required: true, Doc: "The directory of segments and playlist; relative to the show file's directory, and inside it unless allow_outside is set; made if missing."},
		allowOutsideAttr(),
		{Name: "segment", Type: TypeString, Default: "2s", Doc: "Segment length (a whole number of seconds, at least the GOP), e.g. \"2s\"."},
		{Name: "list_size", Type: TypeInt, Default: 6, Range: rng(1, 1000), Doc: "Segments the playlist lists."},
		{Name: "serve", Type: TypeBool, Default: false, Doc: "Serve the directory from the status server too: GET /hls/NAME/index.m3u8 and its segments."},
	},
	Blocks: []*Block{videoBlock, audioBlock},
}
