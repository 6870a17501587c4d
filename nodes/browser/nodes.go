package browser

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/nodes/media/ipc"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

// ---- ipc_dmabuf_source ----

// source receives a producer's frames on its own thread (the receiver's
// Serve) and hands each on as a token frame that carries its handle. A
// frame its edge has no room for is finished at once (it goes to the
// return queue): a browser frame that waits is worth nothing.
type source[F show.Frame] struct {
	be     *Backend[F]
	st     *show.SourceState
	bs     *show.BrowserState
	cfg    ipc.ReceiverConfig
	rcv    *ipc.Receiver
	polled bool // served by the backend's shared poller
}

func (be *Backend[F]) newSource(st *show.State, n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	prm, err := show.Params[struct {
		Socket         string `param:"socket"`
		ReturnQueue    int    `param:"return_queue"`
		FramesInFlight int    `param:"frames_in_flight"`
		SocketMode     string `param:"socket_mode"`
		Peer           string `param:"peer"`
	}](&n)
	if err != nil {
		return nil, err
	}
	if prm.Socket == "" {
		return nil, fmt.Errorf("node %s: no socket: set the browser source's socket", n.ID)
	}
	if len(ctx.Outputs) != 1 {
		return nil, fmt.Errorf("node %s: a browser source has one output, the plan gives it %d", n.ID, len(ctx.Outputs))
	}
	src := st.Source(n.Address)
	if src == nil {
		return nil, fmt.Errorf("node %s: no source %s in the show's state", n.ID, n.Address)
	}
	mode, err := strconv.ParseUint(prm.SocketMode, 8, 32)
	if err != nil || mode&^0o777 != 0 {
		return nil, fmt.Errorf("node %s: socket_mode %q: an octal file mode, such as 0600", n.ID, prm.SocketMode)
	}
	var peers []int
	if prm.Peer != "any" {
		peers = []int{os.Getuid()}
	}
	// The source's declared size bounds what a producer may announce:
	// larger pictures are refused, not scaled (nodes/browser's doc says why).
	_, w, h, _, err := st.Video(&n)
	if err != nil {
		return nil, err
	}
	bs := src.Browser()
	return &source[F]{be: be, st: src, bs: bs, cfg: ipc.ReceiverConfig{
		Path: st.Resolve(prm.Socket), Mode: os.FileMode(mode), PeerUIDs: peers, MaxWidth: w, MaxHeight: h,
		ReturnQueue: prm.ReturnQueue, FramesInFlight: prm.FramesInFlight,
		Memories: be.Memories, Counters: &bs.Counters, Log: ctx.Log, Now: st.Clock,
	}}, nil
}

func (s *source[F]) Start(ctx *runtime.NodeContext[F]) error {
	cfg := s.cfg
	cfg.OnPanic = ctx.Fail // a panic serving the socket fails this source
	rcv, err := ipc.Listen(cfg)
	if err != nil {
		s.st.Fail(err)
		return fmt.Errorf("node %s: %w", ctx.ID(), err)
	}
	s.rcv = rcv
	s.st.ClearErr()
	ctx.Log.Info("waiting for a producer", "socket", s.cfg.Path, "return_queue", s.cfg.ReturnQueue,
		"try", "onair producer -socket "+s.cfg.Path)
	out := ctx.Outputs[0]
	deliver := func(f *ipc.Frame) {
		// On the receivers' shared thread: a panic fails this source only.
		defer panics.Catch("handing on a producer's frame", nil, ctx.Fail)
		tok, err := s.be.wrap(f)
		if err != nil {
			f.Release()
			s.bs.Dropped.Add(1)
			return
		}
		if ok, _ := out.TryPut(tok); !ok {
			tok.Release()
			f.Release()
			s.bs.Dropped.Add(1)
			ctx.Stats.Drops.Add(1)
			return
		}
		ctx.Stats.Out.Add(1)
		s.st.Produced.Add(1)
	}
	p, err := s.be.acquirePoller()
	if err != nil {
		rcv.Close()
		return fmt.Errorf("node %s: %w", ctx.ID(), err)
	}
	if err := p.Serve(rcv, deliver); err != nil {
		s.be.releasePoller()
		rcv.Close()
		return fmt.Errorf("node %s: %w", ctx.ID(), err)
	}
	s.polled = true
	return nil
}

// wrap makes the token frame that carries f's handle to the import.
func (be *Backend[F]) wrap(f *ipc.Frame) (F, error) {
	tok, err := be.Token()
	if err != nil {
		return tok, err
	}
	m := tok.Metadata()
	m.Source, m.SourceFrame = tokenSource, int64(f.Handle())
	m.PTS, m.TimeBase = f.Timestamp, frame.Rational{Num: 1, Den: 1_000_000_000}
	return tok, nil
}

// Stop retires the connection: every buffer back, then DRAIN.
func (s *source[F]) Stop() {
	if s.rcv != nil {
		s.rcv.Close() // returns once the poller has let go of it
	}
	if s.polled {
		s.polled = false
		s.be.releasePoller()
	}
}

// ---- gpu_import ----

// KeyNone is gpu_import's key param that composites pictures with alpha
// over black instead of keying them over the scene (its default, "alpha").
const KeyNone = "none"

// sweepEvery is the longest the import waits between looks at its
// imports' ages when no frame comes.
const sweepEvery = 250 * time.Millisecond

// importer takes token frames on its own thread, imports each buffer once
// (Imports), converts the picture, finishes the frame (its buffer goes to
// the return queue) and hands the converted frame on. Releases run on a
// goroutine of their own, which holds no thread while it waits: releases
// are rare, and a show of 40 browser sources keeps 40 threads fewer.
type importer[F show.Frame] struct {
	be       *Backend[F]
	loop     *importLoop[F]
	format   frame.Format
	key      bool // pictures with alpha are keyed over the scene (key = "alpha")
	queue    chan Released
	released chan struct{} // closed once every release is done and the importer closed
	onLoop   bool          // runs on its source's pacing loop (convert_on = "loop")
}

func (be *Backend[F]) newImport(st *show.State, n plan.Node, ctx *runtime.NodeContext[F]) (runtime.Node[F], error) {
	prm, err := show.Params[struct {
		TTL    int          `param:"import_ttl_ms"`
		Purge  bool         `param:"purge_idle"`
		Format frame.Format `param:"format"`
		Key    string       `param:"key"`
	}](&n)
	if err != nil {
		return nil, err
	}
	f := prm.Format
	if len(ctx.Inputs) != 1 || len(ctx.Outputs) != 1 {
		return nil, fmt.Errorf("node %s: gpu_import has one input and one output, the plan gives it %d and %d", n.ID, len(ctx.Inputs), len(ctx.Outputs))
	}
	src := st.Source(n.Address)
	if src == nil {
		return nil, fmt.Errorf("node %s: no source %s in the show's state", n.ID, n.Address)
	}
	src.Browser().InitImportTTL(prm.TTL)
	return &importer[F]{be: be, format: f, key: prm.Key != KeyNone, loop: &importLoop[F]{
		imports: NewImports(), ttl: time.Duration(prm.TTL) * time.Millisecond, purge: prm.Purge,
		src: src, bs: src.Browser(), address: n.Address, onAir: st.OnAir, clock: st.Clock, log: ctx.Log,
	}}, nil
}

func (im *importer[F]) Start(ctx *runtime.NodeContext[F]) error {
	imp, err := im.be.NewImporter(im.format, im.key, ctx.Log)
	if err != nil {
		return fmt.Errorf("node %s: %w", ctx.ID(), err)
	}
	l := im.loop
	l.imp = imp
	// Releases wait here for the release thread: never more than the
	// imports a source can hold, so the node's thread does not block.
	im.queue = make(chan Released, ipc.MaxBuffers*2)
	l.release = func(r Released) { im.queue <- r }
	im.startReleases(ctx, imp)
	if ctx.Loop() != nil {
		im.onLoop = true
		return im.startOnLoop(ctx)
	}
	ctx.Go(func() error {
		defer close(im.queue)
		defer l.stop()
		for !ctx.Stopping() {
			tok, ok := ctx.Take(0, sweepEvery)
			now := l.now()
			if ok {
				out, ok, err := l.frame(tok, now)
				if err != nil {
					if errors.Is(err, errNotToken) {
						return err // a wiring mistake: fail the group
					}
					ctx.Stats.Errors.Add(1)
				}
				if ok {
					if sent, _ := ctx.Put(0, out); !sent {
						out.Release()
					}
				}
			}
			l.sweep(now)
		}
		return nil
	})
	return nil
}

// startReleases runs the releases on a goroutine of their own.
func (im *importer[F]) startReleases(ctx *runtime.NodeContext[F], imp Importer[F]) {
	im.released = make(chan struct{})
	go func() {
		defer close(im.released)
		defer imp.Close()
		for r := range im.queue {
			im.giveBack(ctx, imp, r)
		}
	}()
}

// giveBack gives one import back. A panic in it fails the node (its group
// restarts) and the releases go on, so that nothing waits on the queue.
func (im *importer[F]) giveBack(ctx *runtime.NodeContext[F], imp Importer[F], r Released) {
	defer im.loop.bs.Live.Add(-1)
	defer panics.Catch("releasing an import", nil, ctx.Fail)
	if err := imp.Release(r.Mapping); err != nil {
		ctx.Log.Error("releasing an import failed", "buffer", r.Buffer.ID, "reason", r.Reason.String(), "error", err)
	}
}

// startOnLoop converts on the source's pacing loop: every token that
// arrives is imported (once a buffer), converted and handed on at once; a
// converted frame its edge has no room for is dropped, as a browser frame
// that waits is worth nothing. The imports' ages are swept every
// sweepEvery by a timer.
func (im *importer[F]) startOnLoop(ctx *runtime.NodeContext[F]) error {
	l := im.loop
	if _, err := ctx.Watch(ctx.Inputs[0].Produced(), func(r *runtime.Registration) {
		now := l.now()
		for {
			tok, ok := ctx.Get(0)
			if !ok {
				break
			}
			out, ok, err := l.frame(tok, now)
			if errors.Is(err, errNotToken) {
				ctx.Fail(err) // a wiring mistake: fail the group
				return
			}
			if err != nil {
				ctx.Stats.Errors.Add(1)
			}
			if ok {
				if sent, _ := ctx.Put(0, out); !sent {
					out.Release()
					l.bs.Dropped.Add(1)
				}
			}
		}
		r.Rearm()
	}); err != nil {
		return err
	}
	var t *runtime.Timer
	t, err := ctx.AddTimer(runtime.Now()+int64(sweepEvery), func() {
		l.sweep(l.now())
		t.Reset(runtime.Now() + int64(sweepEvery))
	})
	return err
}

// Stop waits for the releases. On a thread, the thread, stopping, has
// released every import and closed the queue; on a loop Stop does it.
func (im *importer[F]) Stop() {
	if im.onLoop {
		im.onLoop = false
		im.loop.stop()
		close(im.queue)
	}
	if im.released != nil {
		<-im.released
	}
}

// importLoop is gpu_import's work on its thread, apart from the runtime so
// that tests drive it with their own clock.
type importLoop[F show.Frame] struct {
	imp     Importer[F]
	imports *Imports
	ttl     time.Duration
	purge   bool
	purged  bool
	src     *show.SourceState
	bs      *show.BrowserState
	address string
	onAir   func() (int64, bool)
	release func(Released) // to the release thread
	clock   func() int64   // nil: the runtime's monotonic clock
	log     *slog.Logger
}

var errNotToken = errors.New("gpu_import's input carries pictures, not the handles ipc_dmabuf_source sends: the plan wires something else into it")

func (l *importLoop[F]) now() int64 {
	if l.clock != nil {
		return l.clock()
	}
	return runtime.Now()
}

// frame turns one token into a converted frame. ok is false when there is
// nothing to hand on (a stale token, an import or conversion that failed:
// reported on the source).
func (l *importLoop[F]) frame(tok F, now int64) (out F, ok bool, err error) {
	m := tok.Metadata()
	h, isToken := uint64(m.SourceFrame), m.Source == tokenSource
	tok.Release()
	if !isToken {
		return out, false, errNotToken
	}
	f, claimed := ipc.Claim(h)
	if !claimed {
		l.bs.Stale.Add(1)
		return out, false, nil
	}
	defer f.Release() // finished: the buffer goes to the return queue
	mp, have := l.imports.Get(f.Buffer, now)
	if !have {
		if mp, err = l.imp.Import(f.Buffer); err != nil {
			l.report(err)
			// The producer is told too, and its connection retired:
			// every frame of the buffer would fail the same way.
			f.Refuse(ipc.CodeImport, fmt.Sprintf("onair could not import buffer %d: %v", f.Buffer.ID, err))
			return out, false, err
		}
		l.imports.Put(f.Buffer, mp, now)
		l.bs.Imports.Add(1)
		l.bs.Live.Add(1)
	}
	out, err = l.imp.Convert(mp, f.Buffer)
	if err != nil {
		l.report(err)
		return out, false, err
	}
	om := out.Metadata()
	om.PTS, om.TimeBase = f.Timestamp, frame.Rational{Num: 1, Den: 1_000_000_000}
	om.Source, om.SourceFrame, om.Colour = l.address, int64(f.Sequence), frame.BT709
	l.bs.Converted.Add(1)
	l.src.ClearErr()
	return out, true, nil
}

func (l *importLoop[F]) report(err error) {
	if l.src.Fail(err) && l.log != nil {
		l.log.Error("a browser buffer could not be shown", "error", err)
	}
}

// sweep releases what the policy says is due: dead buffers' imports and
// imports unused for the TTL; with purge_idle, once, as the show goes on
// air, what start-up left unused for PurgeIdleAfter.
func (l *importLoop[F]) sweep(now int64) {
	ttl := l.ttl
	if d, ok := l.bs.ImportTTL(); ok { // onair apply may have changed it
		ttl = d
	}
	for _, r := range l.imports.Sweep(now, ttl) {
		if r.Reason == ReasonDead {
			l.bs.Dead.Add(1)
		} else {
			l.bs.Expired.Add(1)
		}
		l.release(r)
	}
	if l.purge && !l.purged {
		if _, on := l.onAir(); on {
			l.purged = true
			for _, r := range l.imports.Purge(now, PurgeIdleAfter) {
				l.bs.Purged.Add(1)
				l.release(r)
			}
		}
	}
}

// stop releases every import.
func (l *importLoop[F]) stop() {
	for _, r := range l.imports.All() {
		l.bs.Stopped.Add(1)
		l.release(r)
	}
}
