package ipc

// Receiver is onair's side of the producer protocol.
//
// Invariants:
//   - One producer streams at a time. A HELLO while another producer is
//     connected is refused (ERROR, code busy) and the one streaming goes
//     on: a local program that can reach the socket cannot take a source
//     off air by connecting. A producer whose connection hung up is
//     retired first, so one that crashed is replaced at once.
//   - The socket is created with the config's Mode (0600 unless set),
//     whatever the umask; with PeerUIDs set, a connection from another
//     user (SO_PEERCRED) is answered ERROR at its first message, and
//     nothing it sends is taken.
//   - A buffer's descriptor arrives once, with its first frame; the
//     receiver keeps it (the importer may need it again after an import
//     expired) until the producer FORGETs the buffer or the connection is
//     retired, and closes it once no frame of the buffer is held.
//   - A buffer is held by onair from its FRAME to its RELEASE; the producer
//     may not paint into it or send it again in between.
//   - Each frame that arrives sends the oldest waiting return back; frames
//     finish into the ReturnQueue (Frame.Release).
//   - Retiring a connection gives every buffer back: the frames not yet
//     taken by an import at once, the ones being converted when they finish
//     (a bounded wait), then everything the queue holds, oldest first, then
//     DRAIN. Nothing is sent on the connection after DRAIN.
//   - Every descriptor received is closed exactly once, whatever the
//     producer sends.

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Counters are what a receiver has done; the caller owns them, so they
// outlive a receiver (a source's counters survive its restarts).
type Counters struct {
	Connections   atomic.Uint64 // producers welcomed
	Refused       atomic.Uint64 // connections refused: another version, a malformed or illegal message
	Frames        atomic.Uint64 // frames arrived
	Buffers       atomic.Uint64 // buffers received with their descriptor
	Forgotten     atomic.Uint64 // buffers the producer destroyed (FORGET)
	Returned      atomic.Uint64 // buffers given back (RELEASE)
	ReturnsQueued atomic.Int64  // finished frames waiting in the return queue now: returns_queued
	Drains        atomic.Uint64 // drain markers sent
	Dropped       atomic.Uint64 // frames the source could not hand on, finished at once
	Unreturned    atomic.Uint64 // buffers a retire could not give back (a conversion that never ended)
}

// ReceiverConfig configures a Receiver.
type ReceiverConfig struct {
	// Path is the socket's path; a stale socket file there is replaced,
	// one a live socket of any type holds is refused.
	Path string
	// Mode is the socket file's mode; 0 is DefaultSocketMode (0600).
	Mode os.FileMode
	// PeerUIDs, when not nil, are the users whose producers may connect
	// (the peer's uid, SO_PEERCRED); any other is refused with ERROR
	// (CodePermission).
	PeerUIDs []int
	// ReturnQueue is how many finished frames wait to go back, one per
	// arriving frame (0..MaxReturnQueue); 0 gives every frame back at once.
	ReturnQueue int
	// FramesInFlight is how many frames the producer should have out at
	// once, announced in WELCOME (the show's browser_frame_queue).
	FramesInFlight int
	// MaxWidth and MaxHeight are the source's declared picture size: a
	// HELLO of a larger picture is refused (CodeFormat), so what a
	// producer can make onair map and convert is bounded by what the show
	// declared. 0 bounds only by the protocol's limits.
	MaxWidth, MaxHeight int
	// Memories are the buffer memories the backend can import; a HELLO of
	// another is refused (CodeFormat). Nil: memfds only.
	Memories []Memory
	// Counters, when set, are kept up to date.
	Counters *Counters
	// Log gets connections, refusals and retires; nil discards them.
	Log *slog.Logger
	// Now stamps arrivals (monotonic ns); nil is CLOCK_MONOTONIC.
	Now func() int64
	// RetireWait bounds how long a retire waits for frames being converted;
	// 0 is two seconds.
	RetireWait time.Duration
	// OnRetire, when set, is called after a welcomed connection has been
	// retired (every buffer back, DRAIN sent, descriptors closed that no
	// frame holds), on the goroutine that retired it.
	OnRetire func(connection uint64, reason DrainReason)
	// OnPanic, when set, is told of a panic in the receiver's work on a
	// Poller (its producer's messages, deliver): the receiver is shut
	// down, the poller's other receivers go on, and the owner fails its
	// source with the error (a *panics.Error, its stack in Log).
	OnPanic func(error)
}

// Buffer is one of a producer's buffers as onair holds it.
type Buffer struct {
	ID         uint32
	Connection uint64 // the connection's number on its socket
	Picture    Picture

	fd   int
	refs atomic.Int32 // the connection's, while it knows the buffer, and one per frame held
	dead atomic.Bool
}

// Fd is the buffer's descriptor. It stays open while the caller holds a
// frame of the buffer; an importer that keeps it longer must dup it.
func (b *Buffer) Fd() int { return b.fd }

// Dead reports that the buffer will never carry a frame again: the
// producer destroyed it, or its connection was retired. Its import can go.
func (b *Buffer) Dead() bool { return b.dead.Load() }

func (b *Buffer) unref() {
	if b.refs.Add(-1) == 0 {
		unix.Close(b.fd)
	}
}

// Frame is one picture that arrived: a buffer onair holds until Release.
type Frame struct {
	Buffer    *Buffer
	Sequence  uint64
	Timestamp int64 // the producer's, ns
	Arrived   int64 // the receiver's clock when it arrived, ns

	conn   *conn
	n      uint64 // arrival order on its connection
	handle uint64
	state  atomic.Int32
}

const (
	stateOut     int32 = iota // handed on, not taken by an import
	stateClaimed              // taken by an import (Claim)
	stateDone                 // finished: released or revoked
)

// Handle names the frame for Claim, so that it can travel as a number
// (in a token frame of a backend's type) from the source to its import.
func (f *Frame) Handle() uint64 { return f.handle }

// The frames handed on and not yet claimed or finished, by handle.
var (
	handles    sync.Map // uint64 → *Frame
	handleNext atomic.Uint64
)

// Claim takes the frame named by h for conversion. It fails when the frame
// was released or its connection retired meanwhile (a stale token: drop
// it). A claimed frame must be Released.
func Claim(h uint64) (*Frame, bool) {
	v, ok := handles.LoadAndDelete(h)
	if !ok {
		return nil, false
	}
	f := v.(*Frame)
	if !f.state.CompareAndSwap(stateOut, stateClaimed) {
		return nil, false
	}
	return f, true
}

// Refuse says onair cannot use the frame's buffer (the backend could not
// import it): the frame is finished, as Release does, and the producer is
// told with ERROR (code, text) and its connection retired, by the
// receiver's thread (a retire waits for frames being converted, such as
// this one). Refusing a frame whose connection is retiring already only
// releases it.
func (f *Frame) Refuse(code ErrorCode, text string) {
	c := f.conn
	c.mu.Lock()
	if c.refusal == nil && !c.closed && !c.retiring {
		c.refusal = &ErrorMsg{Code: code, Text: text}
		wake(c.r.wakeFd)
	}
	c.mu.Unlock()
	f.Release()
}

// takeRefusal returns the refusal a Refuse left for the receiver's thread.
func (c *conn) takeRefusal() *ErrorMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.refusal
	c.refusal = nil
	if c.closed {
		return nil
	}
	return e
}

// Release says onair has finished with the frame: its buffer goes to the
// return queue. Releasing twice, or after the connection's retire gave the
// buffer back, does nothing.
func (f *Frame) Release() {
	if !f.state.CompareAndSwap(stateOut, stateDone) && !f.state.CompareAndSwap(stateClaimed, stateDone) {
		return
	}
	handles.Delete(f.handle)
	c := f.conn
	c.mu.Lock()
	c.finishedLocked(f)
	c.mu.Unlock()
}

// Receiver listens on a socket for one producer at a time.
type Receiver struct {
	cfg      ReceiverConfig
	counters *Counters
	log      *slog.Logger
	lfd      int
	wakeFd   int
	ino      uint64 // the socket file's inode, so Close removes only its own

	mu      sync.Mutex
	active  *conn
	pending []*conn // connected, no HELLO yet
	nconn   uint64
	closing bool
	shut    bool // shutdown has closed the descriptors
	serving bool
	served  chan struct{}
	once    sync.Once
}

// Listen binds the socket and returns the receiver; Serve runs it.
func Listen(cfg ReceiverConfig) (*Receiver, error) {
	if cfg.ReturnQueue < 0 || cfg.ReturnQueue > MaxReturnQueue {
		return nil, fmt.Errorf("return_queue %d: must be 0 to %d", cfg.ReturnQueue, MaxReturnQueue)
	}
	if cfg.FramesInFlight <= 0 {
		cfg.FramesInFlight = 9
	}
	if cfg.Now == nil {
		cfg.Now = monotonic
	}
	if cfg.RetireWait <= 0 {
		cfg.RetireWait = 2 * time.Second
	}
	r := &Receiver{cfg: cfg, counters: cfg.Counters, log: cfg.Log, served: make(chan struct{})}
	if r.counters == nil {
		r.counters = &Counters{}
	}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	lfd, err := listen(cfg.Path, cfg.Mode)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if unix.Stat(cfg.Path, &st) == nil {
		r.ino = st.Ino
	}
	w, err := newWake()
	if err != nil {
		unix.Close(lfd)
		os.Remove(cfg.Path)
		return nil, fmt.Errorf("socket %s: eventfd: %w", cfg.Path, err)
	}
	r.lfd, r.wakeFd = lfd, w
	return r, nil
}

// Path is the socket's path.
func (r *Receiver) Path() string { return r.cfg.Path }

// accepts reports whether the backend imports buffers of memory m.
func (r *Receiver) accepts(m Memory) bool {
	if r.cfg.Memories == nil {
		return m == MemoryHost
	}
	return slices.Contains(r.cfg.Memories, m)
}

// memories names the memories the backend imports, for a refusal.
func (r *Receiver) memories() string {
	if r.cfg.Memories == nil {
		return MemoryHost.String()
	}
	var s []string
	for _, m := range r.cfg.Memories {
		s = append(s, m.String())
	}
	return strings.Join(s, " or ")
}

// Counters are the receiver's counters.
func (r *Receiver) Counters() *Counters { return r.counters }

// Serve accepts producers and reads their messages until Close, calling
// deliver (on Serve's goroutine) for each frame that arrives; deliver must
// not block, and the frame must be Released (or Claimed and then
// Released) in the end. Serve returns nil after Close, or the error that
// broke the listening socket.
func (r *Receiver) Serve(deliver func(*Frame)) error {
	r.mu.Lock()
	if r.closing || r.serving {
		r.mu.Unlock()
		return nil
	}
	r.serving = true
	r.mu.Unlock()
	defer close(r.served)
	defer r.shutdown()
	var sb serveBuffers
	var pfds []unix.PollFd
	var conns []*conn
	for {
		var closing bool
		if pfds, conns, closing = r.pollSet(pfds[:0], conns[:0]); closing {
			return nil
		}
		if _, err := unix.Poll(pfds, -1); err != nil && err != unix.EINTR {
			return fmt.Errorf("socket %s: poll: %w", r.cfg.Path, err)
		}
		r.dispatch(pfds, conns, &sb, deliver)
	}
}

// serveBuffers are what reading messages needs, reused.
type serveBuffers struct {
	buf, oob []byte
	ready    []*Frame
}

// pollSet appends the descriptors to poll for r (its wake-up, its socket,
// its connections) to pfds, and the connections in that order to conns
// (both reused by the caller: a poll round allocates nothing); closing
// says Close was called (nothing was appended).
func (r *Receiver) pollSet(pfds []unix.PollFd, conns []*conn) ([]unix.PollFd, []*conn, bool) {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return pfds, conns, true
	}
	from := len(conns)
	conns = append(conns, r.pending...)
	if r.active != nil {
		conns = append(conns, r.active)
	}
	r.mu.Unlock()
	pfds = append(pfds, unix.PollFd{Fd: int32(r.wakeFd), Events: unix.POLLIN}, unix.PollFd{Fd: int32(r.lfd), Events: unix.POLLIN})
	for _, c := range conns[from:] {
		ev := int16(unix.POLLIN)
		if c.wantsOut() {
			ev |= unix.POLLOUT
		}
		pfds = append(pfds, unix.PollFd{Fd: int32(c.fd), Events: ev})
	}
	return pfds, conns, false
}

// dispatch acts on what poll said of r's descriptors (pfds, as pollSet
// laid them out): wake-ups, new connections, messages, room to write.
func (r *Receiver) dispatch(pfds []unix.PollFd, conns []*conn, sb *serveBuffers, deliver func(*Frame)) {
	if sb.buf == nil {
		sb.buf, sb.oob = make([]byte, MaxMessage+1), make([]byte, oobSpace)
	}
	if pfds[0].Revents != 0 {
		drainWake(r.wakeFd)
	}
	if pfds[1].Revents&unix.POLLIN != 0 {
		r.accept()
	}
	for i, c := range conns {
		ev := pfds[2+i].Revents
		if c.isClosed() {
			continue // retired earlier in this round: its descriptor is gone
		}
		if ev&unix.POLLOUT != 0 {
			c.flush()
		}
		if ev&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0 {
			sb.ready = r.read(c, sb.buf, sb.oob, sb.ready[:0])
			for _, f := range sb.ready {
				deliver(f)
			}
		}
		if e := c.takeRefusal(); e != nil {
			r.refuse(c, e.Code, e.Text)
		} else if c.broken() {
			r.drop(c, DrainStop, nil)
		}
	}
}

// Close stops Serve, retires the connection (every buffer back, then
// DRAIN), closes the socket and removes its file. Safe to call more than
// once, and from any goroutine.
func (r *Receiver) Close() error {
	r.mu.Lock()
	r.closing = true
	serving := r.serving
	if serving && !r.shut {
		wake(r.wakeFd)
	}
	r.mu.Unlock()
	if serving {
		<-r.served
		return nil
	}
	r.shutdown()
	return nil
}

func (r *Receiver) shutdown() {
	r.once.Do(func() {
		r.mu.Lock()
		active, pending := r.active, r.pending
		r.active, r.pending = nil, nil
		r.mu.Unlock()
		if active != nil {
			active.retire(DrainStop, nil)
		}
		for _, c := range pending {
			c.retire(DrainStop, nil)
		}
		unix.Close(r.lfd)
		var st unix.Stat_t
		if unix.Stat(r.cfg.Path, &st) == nil && st.Ino == r.ino {
			os.Remove(r.cfg.Path)
		}
		r.mu.Lock()
		r.shut = true
		unix.Close(r.wakeFd)
		r.mu.Unlock()
	})
}

// maxPending bounds the connections waiting to say HELLO.
const maxPending = 4

func (r *Receiver) accept() {
	for {
		fd, _, err := unix.Accept4(r.lfd, unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)
		if err != nil {
			return // EAGAIN: no more; anything else: try at the next wake-up
		}
		r.mu.Lock()
		r.nconn++
		c := &conn{r: r, fd: fd, n: r.nconn, buffers: map[uint32]*Buffer{}, out: map[uint32]*Frame{}, returns: NewReturnQueue(r.cfg.ReturnQueue)}
		c.cond = sync.NewCond(&c.mu)
		c.denied = r.peerRefused(fd) // told at its first message: an unread HELLO would reset the connection before the ERROR
		r.pending = append(r.pending, c)
		var evict *conn
		if len(r.pending) > maxPending {
			evict = r.pending[0]
			r.pending = r.pending[1:]
		}
		r.mu.Unlock()
		if evict != nil {
			evict.retire(DrainStop, &ErrorMsg{Code: CodeResource, Text: "too many connections waiting to say HELLO; this one was the oldest"})
		}
	}
}

// peerRefused says why the peer of connection fd may not connect ("" when
// it may): PeerUIDs is set and its uid is not among them.
func (r *Receiver) peerRefused(fd int) string {
	if r.cfg.PeerUIDs == nil {
		return ""
	}
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return fmt.Sprintf("onair cannot tell which user connected (%v), and this source takes producers of user %v only", err, r.cfg.PeerUIDs)
	}
	if slices.Contains(r.cfg.PeerUIDs, int(cred.Uid)) {
		return ""
	}
	return fmt.Sprintf("this source takes producers of user %v only, and this one (pid %d) runs as user %d: run it as the show's user, or set the canvas's browser_peer = \"any\" to let in whoever the socket's mode lets in", r.cfg.PeerUIDs, cred.Pid, cred.Uid)
}

// read takes every message waiting on c and appends the frames that
// arrived to ready.
func (r *Receiver) read(c *conn, buf, oob []byte, ready []*Frame) []*Frame {
	for i := 0; i < 256; i++ {
		n, fds, err := recv(c.fd, buf, oob, true)
		if err == unix.EAGAIN {
			return ready
		}
		if err != nil {
			r.drop(c, DrainError, &ErrorMsg{Code: CodeMalformed, Text: err.Error()})
			return ready
		}
		if n == 0 {
			r.log.Info("producer closed the connection", "socket", r.cfg.Path, "connection", c.n)
			r.drop(c, DrainStop, nil)
			return ready
		}
		f, stop := r.handle(c, buf[:n], fds)
		if f != nil {
			ready = append(ready, f)
		}
		if stop {
			return ready
		}
	}
	return ready
}

// handle acts on one message; stop means the connection is gone.
func (r *Receiver) handle(c *conn, b []byte, fds []int) (f *Frame, stop bool) {
	if c.denied != "" {
		closeAll(fds)
		r.refuse(c, CodePermission, c.denied)
		return nil, true
	}
	m, err := Parse(b)
	if err != nil {
		closeAll(fds)
		code := CodeMalformed
		if errors.Is(err, ErrVersion) {
			code = CodeVersion
		}
		r.refuse(c, code, err.Error())
		return nil, true
	}
	hello, isHello := m.(Hello)
	if c.hello == nil && !isHello {
		closeAll(fds)
		r.refuse(c, CodeProtocol, fmt.Sprintf("the first message must be HELLO, got %v", m.Type()))
		return nil, true
	}
	if _, isFrame := m.(FrameMsg); !isFrame && len(fds) > 0 {
		closeAll(fds)
		r.refuse(c, CodeProtocol, fmt.Sprintf("%v carried a file descriptor; only a FRAME with flag 1 carries one", m.Type()))
		return nil, true
	}
	switch m := m.(type) {
	case Hello:
		if c.hello != nil {
			r.refuse(c, CodeProtocol, "a second HELLO on one connection: connect again to change the picture")
			return nil, true
		}
		if !r.accepts(m.Memory) {
			r.refuse(c, CodeFormat, fmt.Sprintf("this source imports %s buffers, not %v: run the producer with buffers of that kind (onair producer without -gpu for memfd), or run the show where its backend imports %v (onair run -backend cuda)",
				r.memories(), m.Memory, m.Memory))
			return nil, true
		}
		if (r.cfg.MaxWidth > 0 && m.Width > r.cfg.MaxWidth) || (r.cfg.MaxHeight > 0 && m.Height > r.cfg.MaxHeight) {
			r.refuse(c, CodeFormat, fmt.Sprintf("a %dx%d picture is larger than the source's %dx%d: paint at that size or smaller, or declare the source's size larger in the show", m.Width, m.Height, r.cfg.MaxWidth, r.cfg.MaxHeight))
			return nil, true
		}
		r.mu.Lock()
		old := r.active
		r.mu.Unlock()
		if old != nil && old.hungUp() {
			r.log.Info("the producer streaming hung up; a new one takes over", "socket", r.cfg.Path, "old", old.n, "new", c.n)
			r.drop(old, DrainStop, nil)
			old = nil
		}
		if old != nil {
			r.refuse(c, CodeBusy, fmt.Sprintf("another producer (%q, connection %d) is streaming on this socket; one producer streams at a time: stop that one (BYE, or close its connection) before connecting another", old.hello.Name, old.n))
			return nil, true
		}
		c.hello = &hello
		r.mu.Lock()
		r.active = c
		for i, p := range r.pending {
			if p == c {
				r.pending = append(r.pending[:i], r.pending[i+1:]...)
				break
			}
		}
		r.mu.Unlock()
		c.send(Welcome{Version: c.hello.Version, ReturnQueue: uint16(r.cfg.ReturnQueue), FramesInFlight: uint16(r.cfg.FramesInFlight), Connection: c.n}.Append(nil))
		r.counters.Connections.Add(1)
		r.log.Info("producer connected", "socket", r.cfg.Path, "connection", c.n, "name", m.Name,
			"picture", fmt.Sprintf("%v %s %dx%d pitch %d", m.Format, m.Alpha, m.Width, m.Height, m.Pitch))
		return nil, false
	case FrameMsg:
		f, problem := c.arrive(m, fds)
		if problem != "" {
			r.refuse(c, CodeProtocol, problem)
			return nil, true
		}
		return f, false
	case Forget:
		if problem := c.forget(m.Buffer); problem != "" {
			r.refuse(c, CodeProtocol, problem)
			return nil, true
		}
		return nil, false
	case Bye:
		r.log.Info("producer said BYE", "socket", r.cfg.Path, "connection", c.n)
		r.drop(c, DrainBye, nil)
		return nil, true
	default:
		r.refuse(c, CodeProtocol, fmt.Sprintf("%v is onair's message; a producer does not send it", m.Type()))
		return nil, true
	}
}

// refuse reports a producer's mistake to it and retires its connection.
func (r *Receiver) refuse(c *conn, code ErrorCode, text string) {
	r.counters.Refused.Add(1)
	r.log.Warn("producer refused", "socket", r.cfg.Path, "connection", c.n, "error", text)
	r.drop(c, DrainError, &ErrorMsg{Code: code, Text: text})
}

// drop retires c and forgets it.
func (r *Receiver) drop(c *conn, reason DrainReason, e *ErrorMsg) {
	r.mu.Lock()
	if r.active == c {
		r.active = nil
	}
	for i, p := range r.pending {
		if p == c {
			r.pending = append(r.pending[:i], r.pending[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	c.retire(reason, e)
}

// conn is one producer's connection.
type conn struct {
	r     *Receiver
	fd    int
	n     uint64
	hello *Hello // set once by Serve's goroutine
	// denied, when set, is why the peer may not connect (PeerUIDs): its
	// first message is answered with ERROR.
	denied string

	mu       sync.Mutex
	cond     *sync.Cond // a frame finished while retiring
	buffers  map[uint32]*Buffer
	out      map[uint32]*Frame // frames onair holds, by buffer
	arrivals uint64
	returns  *ReturnQueue
	scratch  []Release
	outbox   [][]byte  // messages the socket had no room for
	failed   error     // a send failed: the producer is gone
	refusal  *ErrorMsg // Refuse's, for Serve's goroutine to send
	returned uint32
	retiring bool
	closed   bool
	timedOut bool
}

func (c *conn) wantsOut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.outbox) > 0 && !c.closed
}

// hungUp reports whether the producer has closed its end (it crashed, or
// left without BYE), though Serve has not read that yet.
func (c *conn) hungUp() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.failed != nil {
		return true
	}
	p := []unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(p, 0)
	return err == nil && n > 0 && p[0].Revents&(unix.POLLHUP|unix.POLLRDHUP|unix.POLLERR) != 0
}

func (c *conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *conn) broken() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed != nil && !c.closed
}

// send writes a message now, or queues it for when the socket has room.
func (c *conn) send(b []byte) {
	c.mu.Lock()
	c.sendLocked(b)
	c.mu.Unlock()
}

func (c *conn) sendLocked(b []byte) {
	if c.closed || c.failed != nil {
		return
	}
	if len(c.outbox) == 0 {
		err := send(c.fd, b, -1, true)
		if err == nil {
			return
		}
		if err != unix.EAGAIN {
			c.failed = err
			wake(c.r.wakeFd)
			return
		}
	}
	c.outbox = append(c.outbox, append([]byte(nil), b...))
	wake(c.r.wakeFd) // Serve polls for room
}

// flush sends what the outbox holds, as far as the socket takes it.
func (c *conn) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked()
}

func (c *conn) flushLocked() {
	for len(c.outbox) > 0 && !c.closed && c.failed == nil {
		err := send(c.fd, c.outbox[0], -1, true)
		if err == unix.EAGAIN {
			return
		}
		if err != nil {
			c.failed = err
			return
		}
		c.outbox = c.outbox[1:]
	}
}

// arrive takes a FRAME: a problem is the producer's mistake.
func (c *conn) arrive(m FrameMsg, fds []int) (*Frame, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, known := c.buffers[m.Buffer]
	withFD := m.Flags&FlagFD != 0
	switch {
	case withFD && len(fds) != 1:
		closeAll(fds)
		return nil, fmt.Sprintf("FRAME of buffer %d has flag 1 (descriptor attached) but carried %d descriptors: attach exactly one", m.Buffer, len(fds))
	case !withFD && len(fds) > 0:
		closeAll(fds)
		return nil, fmt.Sprintf("FRAME of buffer %d carried a descriptor without flag 1: set the flag on a buffer's first frame", m.Buffer)
	case withFD && known:
		closeAll(fds)
		return nil, fmt.Sprintf("buffer %d came with a descriptor again: onair has it already; FORGET a buffer before its id names a new one", m.Buffer)
	case !withFD && !known:
		return nil, fmt.Sprintf("FRAME of buffer %d, whose descriptor was never sent: send a buffer's first frame with flag 1 and the descriptor", m.Buffer)
	case known && c.out[m.Buffer] != nil:
		return nil, fmt.Sprintf("buffer %d painted again while onair still holds it (frame %d): wait for its RELEASE", m.Buffer, c.out[m.Buffer].Sequence)
	case withFD && len(c.buffers) >= MaxBuffers:
		closeAll(fds)
		return nil, fmt.Sprintf("buffer %d would be the connection's %d-th: at most %d buffers at once; FORGET buffers the producer destroyed", m.Buffer, len(c.buffers)+1, MaxBuffers)
	}
	if withFD {
		b = &Buffer{ID: m.Buffer, Connection: c.n, Picture: c.hello.Picture, fd: fds[0]}
		b.refs.Store(1)
		c.buffers[m.Buffer] = b
		c.r.counters.Buffers.Add(1)
	}
	// One frame arrived: the oldest waiting return goes back.
	c.sendReleasesLocked(c.returns.Arrived(c.scratch[:0]))
	c.arrivals++
	f := &Frame{Buffer: b, Sequence: m.Sequence, Timestamp: m.Timestamp, Arrived: c.r.cfg.Now(), conn: c, n: c.arrivals, handle: handleNext.Add(1)}
	b.refs.Add(1)
	c.out[m.Buffer] = f
	handles.Store(f.handle, f)
	c.r.counters.Frames.Add(1)
	return f, ""
}

func (c *conn) forget(id uint32) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.buffers[id]
	switch {
	case !ok:
		return fmt.Sprintf("FORGET of buffer %d, which onair does not know", id)
	case c.out[id] != nil:
		return fmt.Sprintf("FORGET of buffer %d while onair still holds it (frame %d): wait for its RELEASE", id, c.out[id].Sequence)
	}
	delete(c.buffers, id)
	b.dead.Store(true)
	b.unref()
	c.r.counters.Forgotten.Add(1)
	return ""
}

// finishedLocked puts a finished frame in the return queue.
func (c *conn) finishedLocked(f *Frame) {
	if c.out[f.Buffer.ID] == f {
		delete(c.out, f.Buffer.ID)
	}
	if !c.closed {
		c.sendReleasesLocked(c.returns.Finished(Release{Buffer: f.Buffer.ID, Sequence: f.Sequence}, c.scratch[:0]))
	}
	f.Buffer.unref()
	if c.retiring {
		c.cond.Broadcast()
	}
}

func (c *conn) sendReleasesLocked(rels []Release) {
	var b [ReleaseSize]byte
	for _, rel := range rels {
		c.sendLocked(rel.Append(b[:0]))
		c.returned++
		c.r.counters.Returned.Add(1)
	}
	c.scratch = rels[:0]
	if !c.closed {
		c.r.counters.ReturnsQueued.Store(int64(c.returns.Len()))
	}
}

// retire gives every buffer back, sends DRAIN (after e, when set) and
// closes the connection.
func (c *conn) retire(reason DrainReason, e *ErrorMsg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if e != nil {
		c.sendLocked(e.Append(nil))
	}
	c.retiring = true
	// Frames no import has taken yet are finished now, in arrival order.
	var waiting []*Frame
	for _, f := range c.out {
		waiting = append(waiting, f)
	}
	sort.Slice(waiting, func(i, j int) bool { return waiting[i].n < waiting[j].n })
	for _, f := range waiting {
		if f.state.CompareAndSwap(stateOut, stateDone) {
			handles.Delete(f.handle)
			c.finishedLocked(f)
		}
	}
	// Frames being converted finish on their import's thread.
	if len(c.out) > 0 {
		t := time.AfterFunc(c.r.cfg.RetireWait, func() {
			c.mu.Lock()
			c.timedOut = true
			c.cond.Broadcast()
			c.mu.Unlock()
		})
		for len(c.out) > 0 && !c.timedOut {
			c.cond.Wait()
		}
		t.Stop()
	}
	unreturned := len(c.out)
	c.sendReleasesLocked(c.returns.Retire(c.scratch[:0]))
	if c.hello != nil {
		c.sendLocked(Drain{Reason: reason, Returned: c.returned, Unreturned: uint32(unreturned)}.Append(nil))
		c.r.counters.Drains.Add(1)
	}
	if unreturned > 0 {
		c.r.counters.Unreturned.Add(uint64(unreturned))
		c.r.log.Error("retired a connection with buffers still held by a conversion", "socket", c.r.cfg.Path, "connection", c.n, "buffers", unreturned)
	}
	// The last messages go out before the socket closes, a bounded wait.
	deadline := time.Now().Add(time.Second)
	for len(c.outbox) > 0 && c.failed == nil && pollOut(c.fd, deadline) {
		c.flushLocked()
	}
	c.closed = true
	c.r.counters.ReturnsQueued.Store(0)
	for id, b := range c.buffers {
		b.dead.Store(true)
		b.unref()
		delete(c.buffers, id)
	}
	unix.Close(c.fd)
	if c.hello != nil {
		c.r.log.Info("connection retired", "socket", c.r.cfg.Path, "connection", c.n, "reason", reason.String(), "returned", c.returned)
		if cb := c.r.cfg.OnRetire; cb != nil {
			c.mu.Unlock()
			cb(c.n, reason)
			c.mu.Lock()
		}
	}
}
