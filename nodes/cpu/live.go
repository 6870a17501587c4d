package cpu

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/live"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

func init() {
	kinds.Add("live_decode", newLiveDecode)
	for _, transport := range []string{"srt", "udp", "stream", "rtmp"} {
		Lowering.Lower(transport, nodes.Chain{Links: liveChain(transport)})
	}
}

// liveChain is a live source's: received and decoded by live_decode, whose
// newest frame the pacer releases on the show's clock (the frame
// synchroniser: drops at the decoder's edge, repeats as the pacer's
// underruns).
func liveChain(transport string) []nodes.Link {
	return []nodes.Link{nodes.L("live_decode", "transport", transport), nodes.L("realtime"), nodes.L("one_to_many")}
}

// liveDecode is live_decode: a live source's transport (package live)
// received and decoded by ffmpeg on one goroutine, and the source's frames
// sent on another at the source's own pace. The second is the frame
// synchroniser's source half: decoded frames wait (syncDepth of them)
// for room on the edge to the pacer, which takes one a period; one that
// finds the wait full drops the oldest (the source runs ahead of the
// show's clock: counted as a sync drop), and while the stream brings
// nothing for loss_timeout_ms the source is lost: reported (an event), and
// its on_error picture sent once a frame period until frames come again
// (after the last frames of the connection that ended, so none comes
// after the picture).
type liveDecode struct {
	st     *show.SourceState
	ls     *show.LiveState
	id     string
	what   string // the transport, for logs and errors (never its passphrase)
	open   func() (live.Input, error)
	cfg    media.DecodeConfig
	pool   *frame.Pool
	rate   frame.Rational
	col    frame.Colour
	fb     *show.Fallback
	sync   *show.FrameSync // the frame synchroniser (the send goroutine's)
	loss   time.Duration
	period time.Duration
	last   *frame.Frame
	// sound: the transport stream's first sound track is decoded beside
	// its pictures (media.LiveAudio; an RTMP publisher's AAC is remuxed
	// into its transport stream), each picture held until its samples come.
	cadence audio.Cadence

	frames chan *frame.Frame // decoded, toward the sending goroutine
	// decoding is set while a connection's frames are being decoded: its
	// end comes after the last of them (the decoder's reordered pictures).
	decoding atomic.Bool
	stop     chan struct{}
	once     sync.Once

	mu  sync.Mutex
	in  live.Input
	dec *media.Decoder
}

func newLiveDecode(b *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	f, w, h, rate, err := b.Video(&n)
	if err != nil {
		return nil, err
	}
	prm, err := show.Params[struct {
		Transport string       `param:"transport"`
		Colour    frame.Colour `param:"colour"`
		OnError   string       `param:"on_error"`
		Threads   int          `param:"threads"`
	}](&n)
	if err != nil {
		return nil, err
	}
	tr, err := show.LiveTransportOf(&n)
	if err != nil {
		return nil, err
	}
	pool, cad, err := decodeInto(&n, f, w, h, rate)
	if err != nil {
		return nil, err
	}
	d := &liveDecode{st: b.Source(n.Address), ls: b.Source(n.Address).Live(), id: n.Address, pool: pool, rate: rate,
		col: prm.Colour.Or(frame.BT709), loss: tr.Loss, period: time.Duration(int64(time.Second) * int64(rate.Den) / int64(rate.Num)),
		fb: show.NewFallback(b.Source(n.Address), prm.OnError, "its stream arrives"), sync: show.NewFrameSync(rate), cadence: cad,
		frames: make(chan *frame.Frame, 1), stop: make(chan struct{}), what: tr.What, open: tr.Open}
	d.cfg = media.DecodeConfig{Path: d.what, Format: f, Width: w, Height: h, Threads: prm.Threads}
	return d, nil
}

func (d *liveDecode) Start(ctx *runtime.NodeContext[Frame]) error {
	in, err := d.open()
	if err != nil {
		return fmt.Errorf("source %s: %w", d.id, err)
	}
	d.mu.Lock()
	d.in = in
	d.mu.Unlock()
	d.ls.SetInput(in.Stats())
	ctx.Go(func() error { return d.receive(ctx, in) })
	ctx.Go(func() error { return d.send(ctx) })
	return nil
}

// receive takes connection after connection and decodes each to its end.
func (d *liveDecode) receive(ctx *runtime.NodeContext[Frame], in live.Input) error {
	for !d.stopping() {
		in.Stats().ResetStamps()
		conn, err := in.Connect()
		if err != nil {
			if d.stopping() || errors.Is(err, live.ErrClosed) {
				return nil
			}
			in.Stats().SetErr(err)
			select { // a listener's failed accept: not again at once
			case <-d.stop:
				return nil
			case <-time.After(show.RetryEvery):
			}
			continue
		}
		cfg := d.cfg
		var aud *media.LiveAudio
		aud, cfg.Live = media.TapAudio(conn, d.what, d.cadence)
		dec, err := media.OpenDecoder(cfg)
		if err != nil {
			conn.Close()
			aud.Close()
			if in.Stats().Err() == "" { // what the transport said of this connection (garbage, nothing sent) says more
				in.Stats().SetErr(err)
			}
			continue
		}
		d.mu.Lock()
		d.dec = dec
		d.mu.Unlock()
		d.decoding.Store(true)
		d.decodeConn(ctx, in, dec, aud)
		d.decoding.Store(false)
		d.mu.Lock()
		d.dec = nil
		d.mu.Unlock()
		dec.Close()
		conn.Close()
	}
	return nil
}

// decodeConn decodes a connection's pictures to its end, each with its
// sound (aud), and hands them to send.
func (d *liveDecode) decodeConn(ctx *runtime.NodeContext[Frame], in live.Input, dec *media.Decoder, aud *media.LiveAudio) {
	put := func(f *frame.Frame, b []float32) {
		f.Audio = b
		select {
		case d.frames <- f:
		case <-d.stop:
			f.Release()
		}
	}
	warned := false
	d.ls.SetSound(nil)
	defer func() {
		if n := aud.Dropped(); n > 0 {
			ctx.Log.Warn("the sound's decoder fell behind: bytes of the stream left out of it", "source", d.id, "bytes", n)
		}
		aud.Close()
	}()
	aud.Start("", dec.Start()) // its error is aud.Err's
	q := media.NewSoundQueue[*frame.Frame](aud, d.period)
	defer q.Flush(put)
	for {
		f, err := d.pool.Get()
		if err != nil {
			return
		}
		if err := dec.Next(f); err != nil {
			f.Release()
			if !d.stopping() {
				in.Stats().SetErr(err)
			}
			return
		}
		if err := aud.Err(); err != nil && !warned {
			warned = true // once a connection, before the picture that shows it is on air: the pictures go on
			d.ls.SetSound(err)
		}
		f.SentAt = 0
		if s, ok := in.Stats().NextStamp(); ok { // pictures come in presentation order: the lowest PTS stamped, due when it was sent plus its reordering
			f.SentAt = s.Presented()
		}
		q.Push(f)
		for {
			f, b, ok := q.Pop()
			if !ok {
				break
			}
			put(f, b)
		}
	}
}

// send puts each decoded frame on the edge, and the on_error picture
// once a frame period while the stream is lost.
func (d *liveDecode) send(ctx *runtime.NodeContext[Frame]) error {
	tick := time.NewTicker(d.period)
	defer tick.Stop()
	lastAt := time.Now()
	n := int64(d.st.Produced.Load())
	var soundSeen uint64 // the LiveState's sound calls reported
	var q []*frame.Frame // decoded frames waiting for room on the edge, oldest first
	defer func() {
		for _, f := range q {
			f.Release()
		}
	}()
	flush := func() error { // hand on what the edge takes now
		for len(q) > 0 {
			ok, err := ctx.Outputs[0].TryPut(q[0])
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			q = q[1:]
			ctx.Stats.Out.Add(1)
		}
		return nil
	}
	for {
		var f *frame.Frame
		decoded := false
		select {
		case <-d.stop:
			return nil
		case f = <-d.frames:
			lastAt = time.Now()
			decoded = true
			if d.fb.Failing() {
				d.fb.Recovered()
				d.in.Stats().SetErr(nil)
				ctx.Log.Info("live source restored", "input", d.what)
			}
			if calls, err := d.ls.Sound(); calls != soundSeen { // after the recovery, so that the source's last error says it
				soundSeen = calls
				if err != nil {
					ctx.Stats.Errors.Add(1)
					if d.st.Fail(err) {
						ctx.Log.Warn("the sound is left out", "source", d.id, "error", err)
					}
				}
			}
			if d.fb.Hold {
				if d.last == nil {
					d.last, _ = frame.New(f.Format, f.Width, f.Height)
				}
				d.last.CopyFrom(f)
			}
		case now := <-tick.C:
			// Lost: no frame for the loss timeout once the connection
			// has ended (its last frames out first), or for three while
			// one stays open with nothing to decode.
			if quiet := now.Sub(lastAt); quiet < d.loss || d.decoding.Load() && quiet < 3*d.loss || len(d.frames) > 0 {
				// Not lost: frames that found the edge full go on as it
				// frees, not only when the next one arrives (a stream's
				// last frames would wait for the next connection).
				if err := flush(); err != nil {
					return nil // stopping
				}
				continue
			}
			if !d.fb.Failing() || d.fb.Due() {
				why := d.in.Stats().Err()
				if why == "" {
					why = fmt.Sprintf("nothing for %v", d.loss)
				}
				d.fb.Fail(ctx.Log, ctx.Stats, fmt.Errorf("%s lost (%s)", d.what, why))
			}
			var err error
			if f, err = d.pool.Get(); err != nil {
				return err
			}
			if d.fb.Hold && d.last != nil {
				f.CopyFrom(d.last)
			} else {
				f.Fill()
			}
			f.SentAt = 0 // the on_error picture: nobody sent it
			d.ls.ErrorFrames.Add(1)
		}
		if decoded && d.sync.Arrived(len(q)+ctx.Outputs[0].Len()+1) { // ran ahead of the show's clock
			f.Release()
			d.ls.SyncDrops.Add(1)
			if err := flush(); err != nil {
				return nil // stopping
			}
			continue
		}
		f.PTS, f.TimeBase, f.SourceFrame = n, d.rate.Inverse(), n
		f.Colour, f.Source, f.Stamps = d.col, d.id, frame.Stamps{}
		d.st.Audio.Add(f.Audio)
		n++
		d.st.Produced.Add(1)
		if len(q) == syncDepth { // the source ran ahead of the show's clock by the whole buffer
			q[0].Release()
			q = q[1:]
			d.ls.SyncDrops.Add(1)
		}
		q = append(q, f)
		if err := flush(); err != nil {
			return nil // stopping
		}
	}
}

// syncDepth is how many decoded frames wait for the edge to the pacer
// (beyond the edge's own): what absorbs a network's and a decoder's
// bursts before a frame is dropped as early.
const syncDepth = 4

func (d *liveDecode) stopping() bool {
	select {
	case <-d.stop:
		return true
	default:
		return false
	}
}

// Stop closes the input and ends ffmpeg, so both goroutines return.
func (d *liveDecode) Stop() {
	d.once.Do(func() { close(d.stop) })
	d.mu.Lock()
	in, dec := d.in, d.dec
	d.mu.Unlock()
	if in != nil {
		in.Close()
	}
	if dec != nil {
		dec.Kill()
	}
}
