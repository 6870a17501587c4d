package compiler

import (
	"time"

	"github.com/onairhq/onair/delivery"
	"github.com/onairhq/onair/lang"
)

// deliveryParams writes an output "stream", "file" or "hls" into its
// node's params: the destination (a path relative to the show file, where
// ffmpeg runs), the encoding settings with their defaults filled in, and
// args, the ffmpeg arguments they make (package delivery), so that the
// plan shows the command line the output runs. With encoder = "auto" the
// args name the software encoder; a machine whose GPU has NVENC runs the
// same settings on it (the node says which at start).
func (st *state) deliveryParams(n *Node, out *lang.Output) {
	o := *out.Delivery
	switch o.Kind {
	case "stream":
		n.Params["url"] = o.Dest
	case "file":
		o.Dest = st.Show.Rel(o.Dest)
		n.Params["path"] = o.Dest
		if o.Segment > 0 {
			n.Params["segment_s"] = int(o.Segment / time.Second)
		}
	case "hls":
		o.Dest = st.Show.Rel(o.Dest)
		n.Params["dir"] = o.Dest
		n.Params["segment_s"] = int(o.Segment / time.Second)
		n.Params["list_size"] = o.ListSize
		if out.Serve {
			n.Params["serve"] = true
		}
	}
	if o.Video.GOP == 0 { // two seconds of frames, rounded up
		r := st.Show.FrameRate
		o.Video.GOP = int((2*r.Num + r.Den - 1) / r.Den)
	}
	v := o.Video
	n.Params["codec"], n.Params["encoder"], n.Params["bitrate"], n.Params["gop"] = v.Codec, v.Encoder, v.Bitrate, v.GOP
	if v.Preset != "" {
		n.Params["preset"] = v.Preset
	}
	if v.Profile != "" {
		n.Params["profile"] = v.Profile
	}
	n.Params["audio_codec"], n.Params["audio_bitrate"] = o.Audio.Codec, o.Audio.Bitrate
	n.Params["args"] = delivery.Args(o, delivery.PlannedEncoder(v), false)
}
