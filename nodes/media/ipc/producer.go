package ipc

// Producer is the other side of the protocol: a program that paints
// pictures into shared buffers and hands them to onair. Tests use it, and
// so do onair's own producers (the headless browser of `onair producer`).
//
// Invariants:
//   - At most min(Buffers, the receiver's frames_in_flight) buffers are out
//     at once; Acquire waits for a RELEASE beyond that.
//   - A buffer's descriptor is sent with its first frame only.
//   - With MaxIdle > 0, a returned buffer that would make more than MaxIdle
//     idle is destroyed (FORGET), as Chromium's capture pool does: a
//     receiver that returns buffers in bunches makes it allocate new ones.
//   - After DRAIN, or when the connection breaks, every buffer is the
//     producer's again; Close frees them all.

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ProducerConfig configures a Producer.
type ProducerConfig struct {
	// Socket is the receiver's socket path.
	Socket string
	// Picture describes every buffer (NewPicture makes a packed one).
	Picture Picture
	// Buffers is the most buffers out at once (the ring); 0 is 9.
	Buffers int
	// MaxIdle, when positive, destroys returned buffers beyond that many
	// idle; 0 keeps every buffer.
	MaxIdle int
	// NewestFirst paints next into the buffer returned last (a LIFO pool);
	// by default the one returned first.
	NewestFirst bool
	// Name names the producer in onair's log.
	Name string
	// OnRelease, when set, is called for each RELEASE, on the producer's
	// reading goroutine, in the order they came.
	OnRelease func(Release)
	// Timeout bounds the wait for WELCOME, and for DRAIN on Close; 0 is
	// five seconds.
	Timeout time.Duration
	// Alloc makes each buffer's memory, of Picture.Size bytes; nil makes
	// sealed memfds (Picture.Memory MemoryHost). A producer of GPU buffers
	// (MemoryCUDA) sets it.
	Alloc func(size int) (BufferMemory, error)
}

// BufferMemory is one buffer's memory as ProducerConfig.Alloc made it.
type BufferMemory struct {
	// Fd is the descriptor sent with the buffer's first frame; Free closes
	// it.
	Fd int
	// Pixels is host memory to paint into; nil for device memory.
	Pixels []byte
	// Device is the allocator's own handle on device memory (what its
	// painter writes into); nil for host memory.
	Device any
	// Free releases the memory and closes Fd, once the buffer is destroyed.
	Free func()
}

// memfdMemory is the default Alloc: a sealed memfd, mapped.
func memfdMemory(id uint32, size int) (BufferMemory, error) {
	fd, mem, err := NewMemfd(fmt.Sprintf("onair-producer-%d", id), size)
	if err != nil {
		return BufferMemory{}, err
	}
	return BufferMemory{Fd: fd, Pixels: mem, Free: func() {
		unix.Munmap(mem)
		unix.Close(fd)
	}}, nil
}

// ProducerBuffer is one shared buffer of a producer.
type ProducerBuffer struct {
	id     uint32
	mem    BufferMemory
	sent   bool // its descriptor went to this connection
	out    bool // onair holds it
	frames uint64
}

// ID is the buffer's id on the connection.
func (b *ProducerBuffer) ID() uint32 { return b.id }

// Pixels is the buffer's host memory: paint the picture here before Send
// (nil for device memory: see Device).
func (b *ProducerBuffer) Pixels() []byte { return b.mem.Pixels }

// Device is the Alloc's handle on the buffer's device memory (nil for a
// memfd): paint there, and finish the GPU's work, before Send.
func (b *ProducerBuffer) Device() any { return b.mem.Device }

// ProducerStats counts what a producer did.
type ProducerStats struct {
	Sent      uint64 // frames sent
	Released  uint64 // RELEASEs received
	Created   uint64 // buffers allocated
	Destroyed uint64 // buffers destroyed (FORGET) to keep MaxIdle
	Out       int    // buffers onair holds now
	Idle      int    // buffers ready to paint
}

// RefusedError is an ERROR from the receiver.
type RefusedError struct {
	Code ErrorCode
	Text string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("onair refused the producer (code %d): %s", e.Code, e.Text)
}

// ErrProducerClosed is returned by a Producer whose connection has ended.
var ErrProducerClosed = errors.New("producer: the connection has ended")

// ErrNoBuffer is returned by Acquire when every buffer stays out until the
// timeout.
var ErrNoBuffer = errors.New("producer: no buffer came back in time")

// Producer is one connection to a receiver.
type Producer struct {
	cfg     ProducerConfig
	fd      int
	welcome Welcome
	done    chan struct{} // the reading goroutine ended

	mu      sync.Mutex
	cond    *sync.Cond
	bufs    map[uint32]*ProducerBuffer
	idle    []*ProducerBuffer // oldest returned first
	nextID  uint32
	stats   ProducerStats
	drain   *Drain
	err     error // why the connection ended
	closing bool
	freed   bool
	sendMu  sync.Mutex
	sendBuf [FrameSize]byte
}

// Dial connects to the receiver at cfg.Socket, says HELLO and waits for
// WELCOME; a receiver that refuses (another version, a picture it cannot
// take) gives a *RefusedError with its words.
func Dial(cfg ProducerConfig) (*Producer, error) {
	if cfg.Buffers <= 0 {
		cfg.Buffers = 9
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if err := cfg.Picture.Check(); err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	if cfg.Picture.Memory != MemoryHost && cfg.Alloc == nil {
		return nil, fmt.Errorf("producer: %v buffers need an Alloc that makes them", cfg.Picture.Memory)
	}
	fd, err := dial(cfg.Socket)
	if err != nil {
		return nil, fmt.Errorf("producer: connect to %s: %w", cfg.Socket, err)
	}
	hello := Hello{Version: Version, Picture: cfg.Picture, Buffers: uint16(min(cfg.Buffers, 0xffff)), Name: cfg.Name}
	if err := send(fd, hello.Append(nil), -1, false); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("producer: send HELLO to %s: %w", cfg.Socket, err)
	}
	tv := unix.NsecToTimeval(cfg.Timeout.Nanoseconds())
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	buf := make([]byte, MaxMessage+1)
	n, fds, err := recv(fd, buf, make([]byte, oobSpace), false)
	closeAll(fds)
	if err != nil || n == 0 {
		unix.Close(fd)
		if err == nil {
			err = errors.New("the receiver closed the connection")
		}
		return nil, fmt.Errorf("producer: no WELCOME from %s: %w", cfg.Socket, err)
	}
	m, err := Parse(buf[:n])
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("producer: %s answered HELLO with a message that does not parse: %w", cfg.Socket, err)
	}
	var w Welcome
	switch m := m.(type) {
	case Welcome:
		if m.Version != hello.Version {
			unix.Close(fd)
			return nil, fmt.Errorf("producer: %s welcomed protocol version %d; this producer said version %d: update one of them", cfg.Socket, m.Version, hello.Version)
		}
		w = m
	case ErrorMsg:
		unix.Close(fd)
		return nil, &RefusedError{Code: m.Code, Text: m.Text}
	default:
		unix.Close(fd)
		return nil, fmt.Errorf("producer: %s answered HELLO with %v, want WELCOME", cfg.Socket, m.Type())
	}
	tv = unix.Timeval{}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	p := &Producer{cfg: cfg, fd: fd, welcome: w, done: make(chan struct{}), bufs: map[uint32]*ProducerBuffer{}}
	p.cond = sync.NewCond(&p.mu)
	go p.read()
	return p, nil
}

// DialWait dials until the receiver's socket exists and answers, or
// timeout passes: a producer started before onair (or across onair's
// restarts) waits for it. A refusal ends the wait at once.
func DialWait(cfg ProducerConfig, timeout time.Duration) (*Producer, error) {
	deadline := time.Now().Add(timeout)
	retry := 20 * time.Millisecond
	for {
		p, err := Dial(cfg)
		if err == nil {
			return p, nil
		}
		absent := errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ECONNREFUSED)
		if !absent || time.Now().Add(retry).After(deadline) {
			return nil, err
		}
		time.Sleep(retry) // nothing to wait on: the socket does not exist yet
		retry = min(2*retry, 500*time.Millisecond)
	}
}

// Welcome is what the receiver said: its return queue and frames in
// flight.
func (p *Producer) Welcome() Welcome { return p.welcome }

// limit is the most buffers out at once.
func (p *Producer) limit() int {
	l := p.cfg.Buffers
	if f := int(p.welcome.FramesInFlight); f > 0 && f < l {
		l = f
	}
	return l
}

// Acquire returns a buffer to paint into: an idle one, or a new one while
// fewer than the limit exist; it waits up to timeout for a RELEASE when
// every buffer is out.
func (p *Producer) Acquire(timeout time.Duration) (*ProducerBuffer, error) {
	deadline := time.Now().Add(timeout)
	p.mu.Lock()
	defer p.mu.Unlock()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if p.err != nil || p.closing {
			return nil, p.endErr()
		}
		if p.stats.Out < p.limit() {
			if len(p.idle) > 0 {
				b := p.idle[0]
				if p.cfg.NewestFirst {
					b = p.idle[len(p.idle)-1]
					p.idle = p.idle[:len(p.idle)-1]
				} else {
					p.idle = p.idle[1:]
				}
				b.out = true
				p.stats.Out++
				return b, nil
			}
			b, err := p.newBuffer() // none idle: every buffer is out, fewer than the limit
			if err != nil {
				return nil, err
			}
			b.out = true
			p.stats.Out++
			return b, nil
		}
		if !time.Now().Before(deadline) {
			return nil, ErrNoBuffer
		}
		if timer == nil {
			timer = time.AfterFunc(time.Until(deadline), func() {
				p.mu.Lock()
				p.cond.Broadcast()
				p.mu.Unlock()
			})
		}
		p.cond.Wait()
	}
}

func (p *Producer) endErr() error {
	if p.err != nil {
		return p.err
	}
	return ErrProducerClosed
}

func (p *Producer) newBuffer() (*ProducerBuffer, error) {
	id := p.nextID
	for p.bufs[id] != nil {
		id++
	}
	p.nextID = id + 1
	var mem BufferMemory
	var err error
	if p.cfg.Alloc != nil {
		mem, err = p.cfg.Alloc(p.cfg.Picture.Size)
	} else {
		mem, err = memfdMemory(id, p.cfg.Picture.Size)
	}
	if err != nil {
		return nil, fmt.Errorf("producer: buffer %d: %w", id, err)
	}
	b := &ProducerBuffer{id: id, mem: mem}
	p.bufs[id] = b
	p.stats.Created++
	return b, nil
}

// Send hands b, painted, to onair as frame seq, painted at ts (the
// producer's monotonic clock, ns). b must come from Acquire.
func (p *Producer) Send(b *ProducerBuffer, seq uint64, ts int64) error {
	p.mu.Lock()
	if p.err != nil || p.closing {
		err := p.endErr()
		p.mu.Unlock()
		return err
	}
	if !b.out || p.bufs[b.id] != b {
		p.mu.Unlock()
		return fmt.Errorf("producer: Send of buffer %d, which was not acquired", b.id)
	}
	m := FrameMsg{Buffer: b.id, Sequence: seq, Timestamp: ts}
	attach := -1
	if !b.sent {
		m.Flags |= FlagFD
		attach = b.mem.Fd
	}
	// The send happens under p.mu: a RELEASE of b cannot be taken before
	// its FRAME is on the wire.
	err := send(p.fd, m.Append(p.sendBuf[:0]), attach, false)
	if err != nil {
		p.mu.Unlock()
		return fmt.Errorf("producer: send frame %d: %w", seq, err)
	}
	b.sent = true
	b.frames++
	p.stats.Sent++
	p.mu.Unlock()
	return nil
}

// Discard gives back a buffer acquired and not sent.
func (p *Producer) Discard(b *ProducerBuffer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b.out && p.bufs[b.id] == b {
		b.out = false
		p.stats.Out--
		p.idle = append([]*ProducerBuffer{b}, p.idle...)
		p.cond.Broadcast()
	}
}

// Stats reads the producer's counters.
func (p *Producer) Stats() ProducerStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Idle = len(p.idle)
	return s
}

// Done is closed when the connection has ended (DRAIN, refusal, a broken
// socket, Close).
func (p *Producer) Done() <-chan struct{} { return p.done }

// Drained returns the DRAIN that ended the connection, if one did.
func (p *Producer) Drained() (Drain, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drain == nil {
		return Drain{}, false
	}
	return *p.drain, true
}

// Err is why the connection ended: nil while it lasts and after a DRAIN,
// but a *RefusedError when onair refused the producer (an ERROR, then its
// DRAIN: a buffer it could not import, say).
func (p *Producer) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if refused, ok := p.err.(*RefusedError); ok {
		return refused
	}
	if p.drain != nil {
		return nil
	}
	return p.err
}

// read takes the receiver's messages until the connection ends.
func (p *Producer) read() {
	defer close(p.done)
	buf := make([]byte, MaxMessage+1)
	oob := make([]byte, oobSpace)
	for {
		n, fds, err := recv(p.fd, buf, oob, false)
		closeAll(fds)
		if err != nil || n == 0 {
			p.end(fmt.Errorf("producer: the connection to %s ended without DRAIN: %v", p.cfg.Socket, errOr(err, "closed by onair")))
			return
		}
		m, err := Parse(buf[:n])
		if err != nil {
			p.end(fmt.Errorf("producer: %w", err))
			return
		}
		switch m := m.(type) {
		case Release:
			p.release(m)
		case Drain:
			p.mu.Lock()
			p.drain = &m
			p.mu.Unlock()
			p.end(ErrProducerClosed)
			return
		case ErrorMsg:
			p.mu.Lock()
			if p.err == nil {
				p.err = &RefusedError{Code: m.Code, Text: m.Text}
			}
			p.mu.Unlock()
		default:
			p.end(fmt.Errorf("producer: onair sent %v, which it never sends after WELCOME", m.Type()))
			return
		}
	}
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

func (p *Producer) release(m Release) {
	p.mu.Lock()
	b := p.bufs[m.Buffer]
	if b == nil || !b.out {
		if p.err == nil {
			p.err = fmt.Errorf("producer: RELEASE of buffer %d, which onair did not hold", m.Buffer)
		}
		p.mu.Unlock()
		return
	}
	b.out = false
	p.stats.Out--
	p.stats.Released++
	if p.cfg.MaxIdle > 0 && len(p.idle) >= p.cfg.MaxIdle && !p.closing {
		// The pool keeps MaxIdle idle and destroys the rest.
		send(p.fd, Forget{Buffer: b.id}.Append(nil), -1, false)
		p.destroy(b)
		p.stats.Destroyed++
	} else {
		p.idle = append(p.idle, b)
	}
	p.cond.Broadcast()
	cb := p.cfg.OnRelease
	p.mu.Unlock()
	if cb != nil {
		cb(m)
	}
}

func (p *Producer) destroy(b *ProducerBuffer) {
	delete(p.bufs, b.id)
	if b.mem.Free != nil {
		b.mem.Free()
	}
	b.mem = BufferMemory{Fd: -1}
}

// end records why the connection ended: every buffer is the producer's
// again.
func (p *Producer) end(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	for _, b := range p.bufs {
		if b.out {
			b.out = false
			p.stats.Out--
			p.idle = append(p.idle, b)
		}
	}
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Close says BYE, waits for DRAIN (every buffer back) and frees the
// buffers and the socket. It returns the DRAIN, or why none came.
func (p *Producer) Close() (Drain, error) {
	p.mu.Lock()
	p.closing = true
	p.cond.Broadcast()
	p.mu.Unlock()
	select {
	case <-p.done:
	default:
		send(p.fd, Bye{}.Append(nil), -1, false)
		select {
		case <-p.done:
		case <-time.After(p.cfg.Timeout):
			unix.Shutdown(p.fd, unix.SHUT_RDWR)
			<-p.done
		}
	}
	p.free()
	d, ok := p.Drained()
	if !ok {
		return Drain{}, fmt.Errorf("producer: no DRAIN from %s: %v", p.cfg.Socket, p.err)
	}
	return d, nil
}

// Abort drops the connection without BYE, as a producer that crashed
// would, and frees everything.
func (p *Producer) Abort() {
	p.mu.Lock()
	p.closing = true
	p.cond.Broadcast()
	p.mu.Unlock()
	unix.Shutdown(p.fd, unix.SHUT_RDWR)
	<-p.done
	p.free()
}

func (p *Producer) free() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.freed {
		return
	}
	p.freed = true
	for _, b := range p.bufs {
		p.destroy(b)
	}
	p.idle = nil
	unix.Close(p.fd)
}
