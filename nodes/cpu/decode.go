package cpu

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/es"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

func init() {
	kinds.Add("ffmpeg_decode", newFFmpegDecode)
	for _, source := range []string{"hevc_file", "h264_file"} {
		Lowering.Lower(source, nodes.Chain{Links: []nodes.Link{nodes.L("ffmpeg_decode"), nodes.L("realtime"), nodes.L("one_to_many")}})
	}
}

// ffmpegDecode plays an HEVC or H.264 file (Annex B or MPEG-TS) on a thread
// of its own: media.Decoder reads the file into access units, an ffmpeg
// process decodes them, and the raw frames come back over a pipe straight
// into pooled frames, which the node puts on its edge (blocking, so the
// pacer sets the pace and ffmpeg waits on its pipe).
//
// Like raw_file_cpu, trouble never stops the show: a file that is missing,
// is not the declared codec, size or format, or whose decoder fails is
// reported and the source shows black (or, with on_error = "hold", its last
// good frame) while it tries again every second. What ffmpeg conceals (a
// corrupt or truncated picture) and a change of size inside the stream
// (refused: the stream plays up to it) are reported while the frames go on.
type ffmpegDecode struct {
	st   *show.SourceState
	cfg  media.DecodeConfig
	id   string
	pool *frame.Pool
	rate frame.Rational
	col  frame.Colour
	fb   *show.Fallback // black or hold, and the retries
	last *frame.Frame
	keys frame.StampSet // the moments the show asked for (decode_time)

	mu      sync.Mutex
	dec     *media.Decoder
	stopped bool

	// The file's sound track, decoded by an ffmpeg of its own beside the
	// pictures' (run's goroutine only), made by Start.
	cadence audio.Cadence
	snd     *media.FileSound
}

func newFFmpegDecode(b *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	f, w, h, rate, err := b.Video(&n)
	if err != nil {
		return nil, err
	}
	prm, err := show.Params[struct {
		Path    string       `param:"path"`
		Loop    bool         `param:"loop"`
		Codec   string       `param:"codec"`
		Colour  frame.Colour `param:"colour"`
		OnError string       `param:"on_error"`
		Threads int          `param:"threads"`
		Keys    []string     `param:"timestamp_keys"`
	}](&n)
	if err != nil {
		return nil, err
	}
	keys, err := frame.StampSetOf(prm.Keys)
	if err != nil {
		return nil, fmt.Errorf("node %s: %v", n.ID, err)
	}
	path := b.Resolve(prm.Path)
	if path == "" {
		return nil, fmt.Errorf("node %s: no path", n.ID)
	}
	codec, err := es.ParseCodec(prm.Codec)
	if err != nil {
		return nil, fmt.Errorf("node %s: %v", n.ID, err)
	}
	pool, cad, err := decodeInto(&n, f, w, h, rate)
	if err != nil {
		return nil, err
	}
	return &ffmpegDecode{cadence: cad,
		st: b.Source(n.Address), id: n.Address, pool: pool, rate: rate, col: prm.Colour.Or(frame.BT709),
		fb: show.NewFallback(b.Source(n.Address), prm.OnError, "its file can be decoded"), keys: keys,
		cfg: media.DecodeConfig{Path: path, Codec: codec, Format: f, Width: w, Height: h, Loop: prm.Loop, Threads: prm.Threads},
	}, nil
}

// decodeInto makes what a CPU decoder of node n writes into: a pool of
// host frames of the source's format and size, and the cadence of its
// sound at the source's rate.
func decodeInto(n *plan.Node, f frame.Format, w, h int, rate frame.Rational) (*frame.Pool, audio.Cadence, error) {
	pool, err := frame.NewPool(f, w, h, 0)
	if err != nil {
		return nil, audio.Cadence{}, err
	}
	cad, err := audio.NewCadence(rate.Num, rate.Den)
	if err != nil {
		return nil, audio.Cadence{}, fmt.Errorf("node %s: %v", n.ID, err)
	}
	return pool, cad, nil
}

func (d *ffmpegDecode) Start(ctx *runtime.NodeContext[Frame]) error {
	d.snd = media.NewFileSound(d.cfg.Path, d.cadence, &d.st.SoundLate, func(msg string) { d.warn(ctx, msg) })
	ctx.Go(func() error { return d.run(ctx) })
	return nil
}

// open starts a decoder, unless the node is stopping.
func (d *ffmpegDecode) open() (*media.Decoder, error) {
	dec, err := media.OpenDecoder(d.cfg)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		dec.Close()
		return nil, errors.New("stopping")
	}
	d.dec = dec
	return dec, nil
}

func (d *ffmpegDecode) close() {
	d.mu.Lock()
	dec := d.dec
	d.dec = nil
	d.mu.Unlock()
	if dec != nil {
		dec.Close()
	}
}

func (d *ffmpegDecode) run(ctx *runtime.NodeContext[Frame]) error {
	defer d.close()
	defer d.snd.Close()
	var dec *media.Decoder
	n := int64(d.st.Produced.Load())
	for !ctx.Stopping() {
		if dec == nil && d.fb.Due() {
			var err error
			if dec, err = d.open(); err != nil {
				if ctx.Stopping() {
					return nil
				}
				d.fb.Fail(ctx.Log, ctx.Stats, err)
			} else {
				d.fb.Recovered()
				d.snd.Open()
			}
		}
		f, err := d.pool.Get()
		if err != nil {
			return err
		}
		if dec != nil {
			err = dec.Next(f)
			for _, w := range dec.Warnings() {
				d.warn(ctx, w)
			}
			if errors.Is(err, io.EOF) { // a file that does not loop has ended
				f.Release()
				ctx.Log.Info("file ended", "path", d.cfg.Path, "frames", n)
				ctx.Done().Wait(ctx.Stopping, -1)
				return nil
			}
			if err != nil {
				if ctx.Stopping() {
					f.Release()
					return nil
				}
				d.fb.Fail(ctx.Log, ctx.Stats, err)
				d.close()
				dec = nil
			}
		} else {
			// Nothing to decode: a frame period of black (or the held
			// frame) at a time, paced by the edge as the frames are.
			err = errNoFile
		}
		switch {
		case err != nil && d.fb.Hold && d.last != nil:
			f.CopyFrom(d.last)
		case err != nil:
			f.Fill()
		case d.fb.Hold:
			if d.last == nil {
				d.last, _ = frame.New(f.Format, f.Width, f.Height)
			}
			d.last.CopyFrom(f)
		}
		f.PTS, f.TimeBase, f.SourceFrame = n, d.rate.Inverse(), n
		f.Colour, f.Source, f.Stamps = d.col, d.id, frame.Stamps{}
		if err == nil {
			f.Audio = d.snd.FrameWait(n, dec.PassPictures()) // its own thread: the sound decoded ahead, waited for when late
			d.st.Audio.Add(f.Audio)
		}
		if err == nil && d.keys.Has(frame.DecodeTime) {
			f.Stamps.Stamp(frame.DecodeTime, time.Now().UnixNano())
		}
		n++
		d.st.Produced.Add(1)
		if ok, err := ctx.Put(0, f); !ok {
			f.Release()
			if err != nil {
				return nil // stopping
			}
		}
	}
	return nil
}

var errNoFile = errors.New("no decoder")

// warn reports what went wrong while the frames go on.
func (d *ffmpegDecode) warn(ctx *runtime.NodeContext[Frame], msg string) {
	ctx.Stats.Errors.Add(1)
	if d.st.Fail(errors.New(msg)) {
		ctx.Log.Warn("decoding goes on", "warning", msg)
	}
}

// Stop ends ffmpeg, so a thread blocked on its pipe returns.
func (d *ffmpegDecode) Stop() {
	d.mu.Lock()
	d.stopped = true
	dec := d.dec
	d.mu.Unlock()
	if dec != nil {
		dec.Kill()
	}
}
