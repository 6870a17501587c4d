package show

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/onairhq/onair/delivery"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

// deliveryStall is how long a frame may wait for a delivery output's
// ffmpeg before the process counts as stalled: long enough for a stream
// to connect (SRT and RTMP open their destination once the first frame
// is encoded) and for a busy machine's encoder to catch up.
const deliveryStall = 15 * time.Second

// newDeliveryOutput runs an output "stream", "file" or "hls": the plan's
// settings, the encoder they resolve to on this machine ("auto": NVENC
// where the GPU has it), and the ffmpeg arguments package delivery makes
// of them, the plan's own args where the encoder is the one the plan
// names. An encoder this machine's ffmpeg lacks fails the output alone:
// it reports why (status, log, output_error event) and drops the bus's
// frames while the show stays on air.
func newDeliveryOutput[F Frame](b *State, be *Backend[F], n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	prm, err := Params[struct {
		Codec        string   `param:"codec"`
		Encoder      string   `param:"encoder"`
		Bitrate      string   `param:"bitrate"`
		GOP          int      `param:"gop"`
		Preset       string   `param:"preset"`
		Profile      string   `param:"profile"`
		AudioCodec   string   `param:"audio_codec"`
		AudioBitrate string   `param:"audio_bitrate"`
		Args         []string `param:"args"`
	}](&n)
	if err != nil {
		return nil, err
	}
	o := delivery.Output{Kind: strings.TrimPrefix(n.Kind, "output_"),
		Video: delivery.Video{Codec: prm.Codec, Encoder: prm.Encoder, Bitrate: prm.Bitrate, GOP: prm.GOP, Preset: prm.Preset, Profile: prm.Profile},
		Audio: delivery.Audio{Codec: prm.AudioCodec, Bitrate: prm.AudioBitrate}}
	if err := destination(&n, &o); err != nil {
		return nil, err
	}
	st := b.outputs[n.Address]
	fail := func(err error) (runtime.Node[F], error) {
		st.mu.Lock()
		st.failedAlone = true
		st.mu.Unlock()
		b.outputFailed(st, ctx.Log, err)
		return &sink[F]{st: st, toHost: be.ToHost, write: func(*frame.Frame) error { return errDropped }}, nil
	}
	ff, err := delivery.ProbeFFmpeg(b.opts.FFmpeg)
	if err != nil {
		return fail(fmt.Errorf("%s: %v", n.Address, err))
	}
	if err := ff.Check(o.Video, o.Audio); err != nil {
		return fail(fmt.Errorf("%s: %v", n.Address, err))
	}
	switch o.Kind {
	case "file":
		err = os.MkdirAll(filepath.Dir(b.Resolve(o.Dest)), 0o755)
	case "hls":
		err = os.MkdirAll(b.Resolve(o.Dest), 0o755)
		if serve, _ := n.Params["serve"].(bool); serve && err == nil {
			st.mu.Lock()
			st.served = b.Resolve(o.Dest)
			st.mu.Unlock()
		}
	}
	if err != nil {
		return fail(fmt.Errorf("%s: %v", n.Address, err))
	}
	args := prm.Args
	if enc := ff.Resolve(o.Video); enc != delivery.PlannedEncoder(o.Video) {
		args = delivery.Args(o, enc, true)
	}
	redact := func(s string) string { return s }
	if o.Kind == "stream" {
		redact = func(s string) string { return delivery.Redact(s, o.Dest) }
	}
	ctx.Log.Info("ffmpeg output", "output", n.Address, "ffmpeg", ff.Path, "args", redact(strings.Join(args, " ")))
	_, _, _, rate, err := busVideo(b, n, ctx)
	if err != nil {
		return nil, err
	}
	// A second of frames waits for the encoder at most: its start, a
	// reconnect and an encoder's lookahead take that much, not 8 frames.
	// The bus's sound is ffmpeg's input 1 (media.FFmpegConfig.Audio: each
	// frame's block on a pipe of its own), which args map and encode.
	cfg := media.FFmpegConfig{Args: args, StallTimeout: deliveryStall, Queue: max(8, int((rate.Num+rate.Den-1)/rate.Den)), Audio: true}
	switch {
	case o.Kind == "file" && o.Segment == 0:
		cfg.Prepare = func(args []string) []string { return b.freshFile(ctx.Log, args) }
	case o.Kind == "file":
		cfg.Prepare = func(args []string) []string { return b.freshSegments(o.Dest, args) }
	}
	return ffmpegSink(b, be, n, ctx, cfg, redact)
}

// freshFile makes a recording's process write a file of its own: the
// plan's (its last argument), overwritten only while it is empty (the
// output lock made it, or a process died before writing), else the next
// NAME-1.EXT, NAME-2.EXT, ... that is: a restart, or a show started again,
// never overwrites what was recorded.
func (b *State) freshFile(log *slog.Logger, args []string) []string {
	dest := args[len(args)-1]
	ext := filepath.Ext(dest)
	name := dest
	for i := 1; ; i++ {
		fi, err := os.Stat(b.Resolve(name))
		if err != nil || fi.Size() == 0 {
			break
		}
		name = strings.TrimSuffix(dest, ext) + "-" + strconv.Itoa(i) + ext
	}
	if name != dest {
		log.Warn("recording goes on in a new file", "path", name, "kept", dest)
	}
	args[len(args)-1] = name
	return append([]string{"-y"}, args...)
}

// destination reads where a delivery output goes, by its kind's params.
func destination(n *plan.Node, o *delivery.Output) error {
	switch o.Kind {
	case "stream":
		p, err := Params[struct {
			URL string `param:"url"`
		}](n)
		o.Dest = p.URL
		return err
	case "file":
		p, err := Params[struct {
			Path     string `param:"path"`
			SegmentS int    `param:"segment_s"`
		}](n)
		o.Dest, o.Segment = p.Path, time.Duration(p.SegmentS)*time.Second
		return err
	}
	p, err := Params[struct {
		Dir      string `param:"dir"`
		SegmentS int    `param:"segment_s"`
		ListSize int    `param:"list_size"`
	}](n)
	o.Dest, o.Segment, o.ListSize = p.Dir, time.Duration(p.SegmentS)*time.Second, p.ListSize
	return err
}

// HLSDir is the directory of an HLS output whose show says serve = true,
// for the status server's GET /hls/{output}/{file}.
func (b *State) HLSDir(output string) (string, bool) {
	st, ok := b.outputs[withPrefix("output.", output)]
	if !ok {
		return "", false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.served, st.served != ""
}

// freshSegments names a rolled recording's segments for the process about
// to start: PATH-YYYYMMDD-HHMMSS-NNN.EXT from its start time (with -2,
// -3, ... after the time when a process of the same second wrote some),
// so that a restart never overwrites a segment.
func (b *State) freshSegments(path string, args []string) []string {
	start := time.Now().Format("20060102-150405")
	for i := 2; ; i++ {
		taken, _ := filepath.Glob(strings.ReplaceAll(b.Resolve(delivery.SegmentPattern(path, start)), "%03d", "*"))
		if len(taken) == 0 {
			break
		}
		start = time.Now().Format("20060102-150405") + "-" + strconv.Itoa(i)
	}
	args[len(args)-1] = delivery.SegmentPattern(path, start)
	return args
}

// HLSDir implements control.HLSServer.
func (s *Show[F]) HLSDir(output string) (string, bool) { return s.State.HLSDir(output) }
