package show

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

// sink is the shape every output shares: a thread that takes frames from
// its one input and hands their host pictures to write. A write that
// returns errDropped has not written the frame and carries on (the output
// reported why); any other error fails the node. A sink without write
// (output_null: nothing blocks, nothing leaves the backend) runs as a
// handler on the event loop the plan placed it on, as the plan counts it,
// instead of a thread of its own.
type sink[F Frame] struct {
	st     *OutputState
	toHost func(F) (*frame.Frame, func(), error)
	write  func(*frame.Frame) error
	close  func() error
	// delivered, if set, is how many frames the output has delivered (an
	// ffmpeg output's frames its processes encoded), which the
	// output's frame count then reads instead of counting writes.
	delivered func() uint64
}

func (s *sink[F]) Start(ctx *runtime.NodeContext[F]) error {
	if s.write == nil && ctx.Loop() != nil {
		_, err := ctx.Watch(ctx.Inputs[0].Produced(), func(r *runtime.Registration) {
			for {
				f, ok := ctx.Get(0)
				if !ok {
					break
				}
				s.writeOne(f) // no write: cannot fail
			}
			r.Rearm()
		})
		return err
	}
	ctx.Go(func() error {
		// The thread that writes closes: Stop runs before this returns.
		defer s.closeOutput()
		for !ctx.Stopping() {
			f, ok := ctx.Take(0, -1)
			if !ok {
				continue
			}
			if err := s.writeOne(f); err != nil {
				return err // fails the node: the runtime restarts its group
			}
		}
		// A show that stops writes what its bus already handed over.
		for {
			f, ok := ctx.Get(0)
			if !ok {
				return nil
			}
			if err := s.writeOne(f); err != nil {
				s.st.Drops.Add(1)
			}
		}
	})
	return nil
}

func (s *sink[F]) writeOne(f F) error {
	var err error
	if s.write != nil {
		var host *frame.Frame
		var done func()
		if host, done, err = s.toHost(f); err == nil {
			err = s.write(host)
			done()
		}
	}
	f.Release()
	if errors.Is(err, errDropped) {
		s.st.Drops.Add(1)
		return nil
	}
	if err != nil {
		s.st.fail(err)
		return err
	}
	if s.delivered != nil {
		s.st.Written.Store(s.delivered())
	} else {
		s.st.Written.Add(1)
	}
	return nil
}

func (s *sink[F]) Stop() {}

func (s *sink[F]) closeOutput() {
	if s.close != nil {
		if err := s.close(); err != nil {
			s.st.fail(err)
		}
	}
	if s.delivered != nil {
		s.st.Written.Store(s.delivered()) // what the stop wrote
	}
}

// busVideo is the format, size and rate of the bus feeding an output.
func busVideo[F Frame](b *State, n plan.Node, ctx *runtime.NodeContext[F]) (frame.Format, int, int, frame.Rational, error) {
	if len(ctx.Inputs) != 1 {
		return 0, 0, 0, frame.Rational{}, fmt.Errorf("node %s: an output takes one bus, the plan gives it %d inputs", n.ID, len(ctx.Inputs))
	}
	from, ok := b.nodeMap()[ctx.Inputs[0].Config().From]
	if !ok {
		return 0, 0, 0, frame.Rational{}, fmt.Errorf("node %s: its input comes from %s, which is not in the plan", n.ID, ctx.Inputs[0].Config().From)
	}
	return b.Video(from)
}

// newRecordOutput writes the bus to a Y4M file through the output's
// recorder, which outlives the node: a restart continues the file (see
// recorder).
func newRecordOutput[F Frame](b *State, be *Backend[F], n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	f, w, h, rate, err := busVideo(b, n, ctx)
	if err != nil {
		return nil, err
	}
	prm, err := Params[struct {
		Path string `param:"path"`
	}](&n)
	if err != nil {
		return nil, err
	}
	path := b.Resolve(prm.Path)
	if path == "" {
		return nil, fmt.Errorf("node %s: no path to record to", n.ID)
	}
	st := b.outputs[n.Address]
	if st.recorder == nil {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("node %s: %v", n.ID, err)
		}
		open := b.opts.OpenFile
		if open == nil {
			open = media.OpenOSFile
		}
		st.recorder = &recorder{path: path, format: f, width: w, height: h, rate: rate, rng: b.colourOfInput(n.ID).Range, st: st, open: open, now: time.Now, wavPath: WAVPath(path)}
	}
	rec := st.recorder
	if err := rec.start(ctx.Log); err != nil {
		return nil, fmt.Errorf("node %s: %v", n.ID, err)
	}
	return &sink[F]{st: st, toHost: be.ToHost, write: rec.write, close: rec.close}, nil
}

func newNullOutput[F Frame](b *State, be *Backend[F], n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	return &sink[F]{st: b.outputs[n.Address]}, nil // discards on the backend: no host copy
}

// newFFmpegOutput pipes the bus to an ffmpeg process, which media.FFmpeg
// restarts with backoff when it exits or stalls; writing never blocks.
func newFFmpegOutput[F Frame](b *State, be *Backend[F], n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	prm, err := Params[struct {
		Args  []string `param:"args"`
		Audio bool     `param:"audio"`
	}](&n)
	if err != nil {
		return nil, err
	}
	return ffmpegSink(b, be, n, ctx, media.FFmpegConfig{Args: prm.Args, Audio: prm.Audio}, nil)
}

// ffmpegSink feeds the bus to the ffmpeg process cfg describes (its Args;
// the bus's format, size, rate and colour, the show's ffmpeg and
// directory are filled in here). A process that exits, stalls or fails to
// start is reported (the output's error, the log, an output_error event)
// and started again with backoff: the output fails alone. The output's
// frames are those its processes encoded (their -progress reports).
// redact, if set, takes secrets out of what it reports.
func ffmpegSink[F Frame](b *State, be *Backend[F], n plan.Node, ctx *runtime.NodeContext[F], cfg media.FFmpegConfig, redact func(string) string) (runtime.Node[F], error) {
	f, w, h, rate, err := busVideo(b, n, ctx)
	if err != nil {
		return nil, err
	}
	st := b.outputs[n.Address]
	cfg.Bin, cfg.Dir, cfg.Format, cfg.Width, cfg.Height, cfg.Rate, cfg.Colour = b.opts.FFmpeg, b.opts.BaseDir, f, w, h, rate, busColour(b, ctx)
	cfg.Timecode = true // -timecode of the first frame, unless args set it
	cfg.OnEvent = func(e media.FFmpegEvent) {
		switch e.Kind {
		case media.FFmpegStarted:
			if e.Restarts > 0 {
				st.mu.Lock()
				st.restart++
				st.mu.Unlock()
				ctx.Log.Warn("ffmpeg restarted", "pid", e.PID, "restarts", e.Restarts)
			}
		default:
			err := fmt.Errorf("ffmpeg %s: %v", e.Kind, e.Err)
			if redact != nil {
				err = errors.New(redact(err.Error()))
			}
			b.outputFailed(st, ctx.Log, err)
			if pe := (*panics.Error)(nil); errors.As(e.Err, &pe) {
				pe.Log(ctx.Log) // feeding the process panicked: its stack
			}
		}
	}
	o, err := media.StartFFmpeg(cfg)
	if err != nil {
		return nil, fmt.Errorf("node %s: %v", n.ID, err)
	}
	st.mu.Lock()
	st.ffmpeg = o
	st.mu.Unlock()
	var dropped int64
	before := st.Written.Load() // a node restarted counts on
	return &sink[F]{st: st, toHost: be.ToHost, write: func(fr *frame.Frame) error {
		if err := o.Write(fr); err != nil {
			return err
		}
		if d := o.Stats().Dropped; d > dropped {
			st.Drops.Add(uint64(d - dropped))
			dropped = d
		}
		return nil
	}, close: o.Close, delivered: func() uint64 { return before + uint64(o.Stats().Encoded) }}, nil
}

// outputFailed reports an output's failure: its last error and count,
// the log, and an output_error event on the show's stream.
func (b *State) outputFailed(st *OutputState, log *slog.Logger, err error) {
	st.fail(err)
	log.Error("output failed", "output", st.Address, "error", err)
	if b.op != nil {
		b.op.hub.Publish("output_error", map[string]any{"output": st.Address, "error": err.Error()})
	}
}

// newPreviewOutput keeps a JPEG snapshot of the bus every interval_ms, for
// the status server's GET /preview/{output}.
func newPreviewOutput[F Frame](b *State, be *Backend[F], n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	prm, err := Params[struct {
		IntervalMs int `param:"interval_ms"`
		Quality    int `param:"quality"`
	}](&n)
	if err != nil {
		return nil, err
	}
	st := b.outputs[n.Address]
	st.previewInterval.CompareAndSwap(0, int64(prm.IntervalMs)) // a change on air (ApplyLive) outlives a restart
	st.previewQuality.CompareAndSwap(0, int64(prm.Quality))
	var last time.Time
	var img *image.YCbCr
	var buf bytes.Buffer
	return &sink[F]{st: st, toHost: be.ToHost, write: func(f *frame.Frame) error {
		if time.Since(last) < time.Duration(st.previewInterval.Load())*time.Millisecond {
			return nil
		}
		last = time.Now()
		img = ToJFIF(f, 0, img) // levels and colour as JPEG viewers expect (snapshot.go)
		buf.Reset()
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: int(st.previewQuality.Load())}); err != nil {
			return err
		}
		st.mu.Lock()
		st.jpeg = append(st.jpeg[:0], buf.Bytes()...)
		st.jpegAt = last
		st.mu.Unlock()
		return nil
	}}, nil
}

// Preview returns the latest JPEG snapshot of a preview output.
func (b *State) Preview(output string) ([]byte, bool) {
	o, ok := b.outputs[withPrefix("output.", output)]
	if !ok || o.Kind != "preview" {
		return nil, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.jpeg == nil {
		return nil, false
	}
	return append([]byte(nil), o.jpeg...), true
}

// colourOfInput is the colour of what node id takes: the colour param of
// the compositor feeding it (the show's), BT.709 limited when none says.
func (b *State) colourOfInput(id string) frame.Colour {
	for _, e := range b.plan.Edges {
		if from := b.nodeMap()[e.From]; e.To == id && from != nil && from.Kind == "compositor" {
			if prm, err := Params[compositorParams](from); err == nil {
				return prm.Colour.Or(frame.BT709)
			}
		}
	}
	return frame.BT709
}
