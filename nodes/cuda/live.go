package cuda

// Live sources on the GPU (live_nvdec: srt, udp, stream, rtmp). A
// goroutine of the source's own receives its transport (package live),
// splits each connection's stream into access units (es.NewLive, from its
// first sequence parameter set) and queues them; the source decodes them
// as nvdec_file decodes a file's (nvdecSource, on a shared decode loop or
// a loop of its own), one decoder a connection. Between connections, and
// once nothing came for loss_timeout_ms, the source's housekeeping sends
// its on_error picture; a decoded picture that finds the source's wait
// for its pacer full drops the oldest (the source runs ahead of the
// show's clock: counted as a frame-sync drop).

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/es"
	"github.com/onairhq/onair/nodes/media/live"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

func init() {
	kinds.Add("live_nvdec", (*backend).newLiveNVDEC)
	for _, transport := range []string{"srt", "udp", "stream", "rtmp"} {
		Lowering.Lower(transport, nodes.Chain{Links: liveChain(transport)})
	}
}

// liveChain is a live source's: received, split into access units and
// decoded on NVDEC by live_nvdec (on a decode loop), whose newest picture
// the pacer releases on the show's clock.
func liveChain(transport string) []nodes.Link {
	return []nodes.Link{nodes.L("live_nvdec", "transport", transport), nodes.L("realtime"), nodes.L("one_to_many")}
}

// liveSyncDepth is how many decoded pictures of a live source wait for
// room on the edge to its pacer before the oldest is dropped: what
// absorbs a network's and a decoder's bursts.
const liveSyncDepth = 4

// liveQueue is how many access units the receiver may have queued for
// the decoder: about two seconds of a 60 fps stream.
const liveQueue = 128

// liveItem is one thing the receiver hands the decode loop, in order: a
// connection's start (its codec), an access unit, a connection's end.
type liveItem struct {
	begin bool
	codec es.Codec
	pk    *packet
	end   error // a connection's end: io.EOF at its end, else why
}

// liveFeed is a live_nvdec source's receiver.
type liveFeed struct {
	tr     show.LiveTransport
	ls     *show.LiveState
	format frame.Format
	w, h   int
	items  chan liveItem
	pool   packetPool
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	in     live.Input
	sync   *show.FrameSync

	// On the decode loop's thread only:
	next   *liveItem // a connection's start, taken from items, not yet decoded
	lastAt time.Time // when the last picture (or the start) was
}

func (b *backend) newLiveNVDEC(st *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	prm, err := show.Params[nvdecSourceParams](&n)
	if err != nil {
		return nil, err
	}
	tr, err := show.LiveTransportOf(&n)
	if err != nil {
		return nil, err
	}
	f, w, h, rate, err := st.Video(&n)
	if err != nil {
		return nil, err
	}
	src := st.Source(n.Address)
	if src == nil {
		return nil, fmt.Errorf("node %s: no source %s in the show", n.ID, n.Address)
	}
	s := &nvdecSource{b: b, st: src, id: n.Address, rate: rate, col: prm.Colour.Or(frame.BT709),
		fb: show.NewFallback(src, prm.OnError, "its stream arrives"), surfaces: prm.Surfaces, loopName: n.Placement.Loop,
		r:    streamReader{path: tr.What, format: f, w: w, h: h},
		feed: &liveFeed{tr: tr, ls: src.Live(), sync: show.NewFrameSync(rate), format: f, w: w, h: h, items: make(chan liveItem, liveQueue), stop: make(chan struct{}), done: make(chan struct{})}}
	if n.Placement.Thread || s.loopName == "" {
		s.own, s.loopName = true, n.ID
	}
	return s, nil
}

// start opens the transport and starts the receiver.
func (l *liveFeed) start() error {
	in, err := l.tr.Open()
	if err != nil {
		close(l.done)
		return err
	}
	l.in, l.lastAt = in, time.Now()
	l.ls.SetInput(in.Stats())
	go func() {
		defer close(l.done)
		l.receive()
	}()
	return nil
}

// receive takes connection after connection and queues each one's access
// units, checked against what the source declares.
func (l *liveFeed) receive() {
	for !l.stopping() {
		l.in.Stats().ResetStamps()
		conn, err := l.in.Connect()
		if err != nil {
			if l.stopping() || errors.Is(err, live.ErrClosed) {
				return
			}
			l.in.Stats().SetErr(err)
			select { // a listener's failed accept: not again at once
			case <-l.stop:
				return
			case <-time.After(show.RetryEvery):
			}
			continue
		}
		l.connection(conn)
		conn.Close()
	}
}

// connection queues one connection's access units, then its end.
func (l *liveFeed) connection(conn io.Reader) {
	rd, err := es.NewLive(conn, l.tr.What, 0)
	if err == nil {
		info, _ := rd.Info()
		if err = media.CheckStream(l.tr.What, info, l.format, l.w, l.h); err == nil {
			l.units(rd, info)
			return
		}
	}
	if l.in.Stats().Err() == "" { // what the transport said of this connection (garbage, nothing sent) says more
		l.in.Stats().SetErr(err)
	}
}

func (l *liveFeed) units(rd *es.Reader, info es.Info) {
	if !l.put(liveItem{begin: true, codec: rd.Codec()}) {
		return
	}
	for {
		au, err := rd.Next()
		switch {
		case err != nil:
		case au.Info != nil && !au.Info.SameFormat(info):
			err = fmt.Errorf("%s changes from %v to %v at access unit %d: onair refuses a change of size or format inside a stream, and plays the stream up to there", l.tr.What, info, *au.Info, au.Index)
		case au.Info == nil && au.SPSError != nil:
			err = errors.New(media.UnusableSPS(l.tr.What, au))
		}
		if err != nil {
			if err != io.EOF && !l.stopping() {
				l.in.Stats().SetErr(err)
			}
			l.put(liveItem{end: err})
			return
		}
		pk := l.pool.get(au.Data)
		pk.meta.PTS, pk.meta.SourceFrame = au.Index, au.Index
		if !l.put(liveItem{pk: pk}) {
			pk.Release()
			return
		}
	}
}

// put queues it, waiting for room; false once the source stops.
func (l *liveFeed) put(it liveItem) bool {
	select {
	case l.items <- it:
		return true
	case <-l.stop:
		return false
	}
}

func (l *liveFeed) stopping() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// begun reports whether a connection's start is waiting for a decoder,
// dropping what is left of a connection that had none (on the loop).
func (l *liveFeed) begun() bool {
	for l.next == nil {
		select {
		case it := <-l.items:
			if it.begin {
				l.next = &it
			} else if it.pk != nil {
				it.pk.Release()
			}
		default:
			return false
		}
	}
	return true
}

// unit is the decoder's next access unit (on the loop): empty while none
// has arrived, io.EOF at its connection's end (a next connection's start
// is kept for its own decoder).
func (l *liveFeed) unit() (*packet, error) {
	select {
	case it := <-l.items:
		switch {
		case it.pk != nil:
			return it.pk, nil
		case it.begin:
			l.next = &it
			return nil, io.EOF
		case it.end == io.EOF:
			return nil, io.EOF
		default:
			return nil, it.end
		}
	default:
		return nil, nil
	}
}

// lost says why the source counts as lost (nothing for the loss timeout
// since its last picture), or nil (on the loop).
func (l *liveFeed) lost(now time.Time) error {
	if now.Sub(l.lastAt) < l.tr.Loss {
		return nil
	}
	why := l.in.Stats().Err()
	if why == "" {
		why = fmt.Sprintf("nothing for %v", l.tr.Loss)
	}
	return fmt.Errorf("%s lost (%s)", l.tr.What, why)
}

// close ends the receiver and lets go of what it queued.
func (l *liveFeed) close() {
	l.once.Do(func() { close(l.stop) })
	if l.in != nil {
		l.in.Close()
	}
	<-l.done
	for {
		select {
		case it := <-l.items:
			if it.pk != nil {
				it.pk.Release()
			}
		default:
			return
		}
	}
}

// restored notes a decoded picture (on the loop): a source that was lost
// is on air again, its error cleared.
func (l *liveFeed) restored(ctx *runtime.NodeContext[Frame], fb *show.Fallback) {
	l.lastAt = time.Now()
	if fb.Failing() {
		fb.Recovered()
		l.in.Stats().SetErr(nil)
		ctx.Log.Info("live source restored", "input", l.tr.What)
	}
}
