package nodes

import (
	"slices"
	"time"

	"github.com/onairhq/onair/delivery"
)

// The delivery outputs' kinds: a bus encoded by an ffmpeg process whose
// arguments their lowering generates (package delivery) and the plan
// shows.

// lowerDelivery writes an output "stream", "file" or "hls" into its node's
// params: the destination (a path relative to the show file, where ffmpeg
// runs), the encoding settings with their defaults filled in, and args,
// the ffmpeg arguments they make, so that the plan shows the command line
// the output runs. With encoder = "auto" the args name the software
// encoder; a machine whose GPU has NVENC runs the same settings on it (the
// node says which at start). The show language hands the settings over
// decoded and checked, as Attrs["delivery"].
func lowerDelivery(e *Element) map[string]any {
	o, _ := e.Attrs["delivery"].(delivery.Output)
	p := map[string]any{}
	switch o.Kind {
	case "stream":
		p["url"] = o.Dest
	case "file":
		o.Dest = e.Path
		p["path"] = o.Dest
		if o.Segment > 0 {
			p["segment_s"] = int(o.Segment / time.Second)
		}
	case "hls":
		o.Dest = e.Path
		p["dir"] = o.Dest
		p["segment_s"] = int(o.Segment / time.Second)
		p["list_size"] = o.ListSize
		if o.Serve {
			p["serve"] = true
		}
	}
	v := o.Video
	p["codec"], p["encoder"], p["bitrate"], p["gop"] = v.Codec, v.Encoder, v.Bitrate, v.GOP
	if v.Preset != "" {
		p["preset"] = v.Preset
	}
	if v.Profile != "" {
		p["profile"] = v.Profile
	}
	p["audio_codec"], p["audio_bitrate"] = o.Audio.Codec, o.Audio.Bitrate
	p["args"] = delivery.Args(o, delivery.PlannedEncoder(v), true) // every bus has sound: its mix is input 1
	return p
}

// deliveryFrom are the show blocks the delivery kinds are made from.
var deliveryFrom = []string{"output.stream", "output.file", "output.hls"}

// IsDelivery says whether k is a delivery output's kind (output_stream,
// output_file, output_hls): an ffmpeg encode the plan estimates.
func IsDelivery(k *Kind) bool {
	return k != nil && len(k.From) == 1 && slices.Contains(deliveryFrom, k.From[0])
}

func init() {
	encoding := []Param{
		{Name: "codec", Type: Enum, Enum: []string{"h264", "hevc", "av1"}, Default: "h264", Doc: "The video coding."},
		{Name: "encoder", Type: String, Default: "auto", Doc: "\"auto\" (NVENC where the GPU has it, else the codec's software encoder) or an ffmpeg encoder."},
		{Name: "bitrate", Type: String, Default: "6M", Doc: "Video bits per second."},
		{Name: "gop", Type: Int, Min: ptr(1), Max: ptr(1000), Doc: "Frames between keyframes."},
		{Name: "preset", Type: String, Doc: "The encoder's preset; absent, the encoder's live default."},
		{Name: "profile", Type: String, Doc: "The codec profile; absent, the encoder's."},
		{Name: "audio_codec", Type: Enum, Enum: []string{"aac", "opus", "mp2"}, Default: "aac", Doc: "The audio coding, when the bus has sound."},
		{Name: "audio_bitrate", Type: String, Default: "128k", Doc: "Audio bits per second."},
		{Name: "args", Type: Strings, Doc: "The ffmpeg arguments after the raw input, generated from the settings above: what the output runs (with NVENC in place of the software encoder where \"auto\" finds it)."},
	}
	with := func(ps ...Param) []Param { return append(ps, encoding...) }
	segment := Param{Name: "segment_s", Type: Int, Min: ptr(1), Doc: "Seconds per file (file: a new file each time; hls: per segment)."}
	traits := Traits{Blocking: true, Roles: Sink, Takes: frameFmts}
	const ready = "ffmpeg has started and accepted a first frame"
	for _, k := range []*Kind{
		{
			Name:   "output_stream",
			Doc:    "Encodes a bus with ffmpeg and sends it to an SRT, UDP, RIST (MPEG-TS) or RTMP(S) (FLV) URL; a destination that is down is tried again with backoff.",
			Params: with(Param{Name: "url", Type: String, Doc: "Where the stream goes."}),
			Traits: traits, Readiness: ready, From: deliveryFrom[0:1:1], Lower: lowerDelivery,
		},
		{
			Name:   "output_file",
			Doc:    "Encodes a bus with ffmpeg into a fragmented MP4/MOV, Matroska or MPEG-TS file, playable up to its last fragment if onair is killed; rolls to a new file every segment_s when set.",
			Params: with(Param{Name: "path", Type: String, Doc: "The file, relative to the show file's directory."}, segment),
			Traits: traits, Readiness: ready, From: deliveryFrom[1:2:2], Lower: lowerDelivery,
		},
		{
			Name: "output_hls",
			Doc:  "Encodes a bus with ffmpeg into an HLS directory: MPEG-TS segments and a live playlist index.m3u8.",
			Params: with(Param{Name: "dir", Type: String, Doc: "The directory, relative to the show file's directory."}, segment,
				Param{Name: "list_size", Type: Int, Default: 6, Min: ptr(1), Max: ptr(1000), Doc: "Segments the playlist lists."},
				Param{Name: "serve", Type: Bool, Default: false, Doc: "The status server serves the directory: GET /hls/NAME/index.m3u8."}),
			Traits: traits, Readiness: ready, From: deliveryFrom[2:3:3], Lower: lowerDelivery,
		},
	} {
		Register(k)
	}
}
