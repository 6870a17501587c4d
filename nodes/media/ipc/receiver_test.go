package ipc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// wait bounds every wait for an event in these tests: generous, since the
// machine may be busy; a passing test never waits that long.
const wait = 20 * time.Second

// rig is a receiver serving on its own goroutine, handing frames to a
// channel.
type rig struct {
	t        *testing.T
	r        *Receiver
	path     string
	frames   chan *Frame
	counters *Counters
	served   chan error
	retired  chan DrainReason
	once     sync.Once
}

func socketPath(t testing.TB) string {
	dir, err := os.MkdirTemp("", "oair")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s.sock")
}

func newRig(t *testing.T, returnQueue, inFlight int) *rig {
	t.Helper()
	return newRigAt(t, socketPath(t), returnQueue, inFlight)
}

// newRigAt is newRig listening on path (a socket a previous rig left).
func newRigAt(t *testing.T, path string, returnQueue, inFlight int) *rig {
	t.Helper()
	g := &rig{t: t, path: path, frames: make(chan *Frame, 256), counters: &Counters{}, served: make(chan error, 1), retired: make(chan DrainReason, 16)}
	r, err := Listen(ReceiverConfig{Path: g.path, ReturnQueue: returnQueue, FramesInFlight: inFlight, Counters: g.counters,
		RetireWait: wait, OnRetire: func(_ uint64, why DrainReason) { g.retired <- why }})
	if err != nil {
		t.Fatal(err)
	}
	g.r = r
	go func() { g.served <- r.Serve(func(f *Frame) { g.frames <- f }) }()
	t.Cleanup(func() { g.close() })
	return g
}

func (g *rig) close() {
	g.once.Do(func() {
		g.r.Close()
		select {
		case err := <-g.served:
			if err != nil {
				g.t.Errorf("Serve: %v", err)
			}
		case <-time.After(wait):
			g.t.Error("Serve did not return after Close")
		}
	})
}

// settle waits until the producer has read every RELEASE the receiver
// sent, so that what it does next does not depend on the scheduler.
func (g *rig) settle(t *testing.T, rel *releases) {
	t.Helper()
	rel.waitN(t, int(g.counters.Returned.Load()))
}

func (g *rig) frame() *Frame {
	g.t.Helper()
	select {
	case f := <-g.frames:
		return f
	case <-time.After(wait):
		g.t.Fatal("no frame arrived")
		return nil
	}
}

// releases collects a producer's RELEASEs as they come.
type releases struct {
	mu   sync.Mutex
	got  []Release
	more chan struct{}
}

func newReleases() *releases { return &releases{more: make(chan struct{}, 1024)} }

func (r *releases) add(m Release) {
	r.mu.Lock()
	r.got = append(r.got, m)
	r.mu.Unlock()
	r.more <- struct{}{}
}

// waitN waits until n releases have come, and returns them.
func (r *releases) waitN(t *testing.T, n int) []Release {
	t.Helper()
	deadline := time.After(wait)
	for {
		r.mu.Lock()
		got := append([]Release(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-r.more:
		case <-deadline:
			t.Fatalf("%d releases came, want %d", len(got), n)
		}
	}
}

func (r *releases) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func dialRig(t *testing.T, g *rig, cfg ProducerConfig) (*Producer, *releases) {
	t.Helper()
	rel := newReleases()
	cfg.Socket = g.path
	if cfg.Picture.Format == 0 {
		cfg.Picture = NewPicture(BGRA, AlphaPremultiplied, 16, 8)
	}
	cfg.OnRelease = rel.add
	p, err := Dial(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p, rel
}

// sendOne paints and sends frame seq; the buffer's first byte carries seq.
func sendOne(t *testing.T, p *Producer, seq uint64) *ProducerBuffer {
	t.Helper()
	b, err := p.Acquire(wait)
	if err != nil {
		t.Fatalf("frame %d: %v", seq, err)
	}
	b.Pixels()[0] = byte(seq)
	if err := p.Send(b, seq, int64(seq)*1000); err != nil {
		t.Fatal(err)
	}
	return b
}

func openFds(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("counting descriptors: %v (onair runs on Linux, which has /proc/self/fd)", err)
	}
	return len(ents)
}

// TestOneBufferBackPerArrivingFrame: a mixer that lets frames go in
// bunches (the four oldest whenever it holds six) still gives the producer
// one buffer back for each frame it sends, oldest first: the return queue
// evens the bunches out.
func TestOneBufferBackPerArrivingFrame(t *testing.T) {
	g := newRig(t, 3, 9)
	p, rel := dialRig(t, g, ProducerConfig{Name: "test"})
	if w := p.Welcome(); w.ReturnQueue != 3 || w.FramesInFlight != 9 || w.Version != Version {
		t.Fatalf("welcome %+v", w)
	}
	var held []*Frame
	const n = 42
	for seq := uint64(1); seq <= n; seq++ {
		sendOne(t, p, seq)
		f := g.frame()
		if f.Sequence != seq || f.Timestamp != int64(seq)*1000 {
			t.Fatalf("frame %d arrived as %d at %d", seq, f.Sequence, f.Timestamp)
		}
		held = append(held, f)
		if len(held) == 6 {
			for _, h := range held[:4] {
				h.Release()
			}
			held = held[4:]
		}
		g.settle(t, rel)
		// From the sixth frame on, exactly one buffer goes back per frame.
		if want := max(0, int(seq)-5); rel.count() != want {
			t.Fatalf("after frame %d: %d buffers back, want %d", seq, rel.count(), want)
		}
	}
	got := rel.waitN(t, n-5)
	for i, r := range got {
		if r.Sequence != uint64(i+1) {
			t.Fatalf("release %d gave back frame %d: want the oldest first", i, r.Sequence)
		}
	}
	if q := g.counters.ReturnsQueued.Load(); q != 3 {
		t.Errorf("returns_queued %d, want 3", q)
	}
	if st := p.Stats(); st.Created > 9 || st.Created != g.counters.Buffers.Load() {
		t.Errorf("the producer made %d buffers (at most 9 out), the receiver saw %d", st.Created, g.counters.Buffers.Load())
	}
	// Stop: the held frames and the queue all go back before DRAIN.
	for _, f := range held {
		f.Release()
	}
	g.close()
	<-p.Done()
	d, ok := p.Drained()
	if !ok || d.Reason != DrainStop || d.Unreturned != 0 || d.Returned != n {
		t.Fatalf("drain %+v (%v), want every one of %d frames returned", d, ok, n)
	}
	if rel.count() != n || p.Stats().Out != 0 || g.counters.Returned.Load() != n {
		t.Fatalf("%d releases, %d out after DRAIN", rel.count(), p.Stats().Out)
	}
	p.Close()
}

// TestReturnQueueKeepsTheBrowserPoolStable plays Chromium's pool (two idle
// at most, the rest destroyed) against a mixer that finishes frames in
// bunches: with no return queue the pool destroys and allocates buffers
// all the time (each a new import on the GPU); with three it settles.
func TestReturnQueueKeepsTheBrowserPoolStable(t *testing.T) {
	run := func(returnQueue int) (created, destroyed, buffersSeen uint64) {
		g := newRig(t, returnQueue, 9)
		p, rel := dialRig(t, g, ProducerConfig{MaxIdle: 2})
		var held []*Frame
		for seq := uint64(1); seq <= 60; seq++ {
			sendOne(t, p, seq)
			held = append(held, g.frame())
			if len(held) == 5 { // four let go together
				for _, f := range held[:4] {
					f.Release()
				}
				held = held[4:]
			}
			g.settle(t, rel)
		}
		st := p.Stats() // while streaming; the retire gives every buffer back at once
		for _, f := range held {
			f.Release()
		}
		g.close()
		<-p.Done()
		p.Close()
		return st.Created, st.Destroyed, g.counters.Buffers.Load()
	}
	c0, d0, b0 := run(0)
	c3, d3, b3 := run(3)
	t.Logf("return_queue 0: %d buffers made, %d destroyed; 3: %d made, %d destroyed", c0, d0, c3, d3)
	if d0 == 0 || c0 <= 9 {
		t.Errorf("without a return queue the pool should churn: %d made, %d destroyed", c0, d0)
	}
	if d3 != 0 || c3 > 9 {
		t.Errorf("with a return queue of 3 the pool should settle: %d made, %d destroyed", c3, d3)
	}
	if b0 != c0 || b3 != c3 {
		t.Errorf("the receiver saw %d and %d new buffers, the producer made %d and %d", b0, b3, c0, c3)
	}
}

// TestRetireGivesEveryBufferBackBeforeDrain: frames not yet taken go back
// at once, frames being converted when they finish, the queue after them,
// and DRAIN last; claims of the retired frames fail.
func TestRetireGivesEveryBufferBackBeforeDrain(t *testing.T) {
	fds := openFds(t)
	g := newRig(t, 3, 9)
	p, rel := dialRig(t, g, ProducerConfig{})
	var frames []*Frame
	for seq := uint64(1); seq <= 6; seq++ {
		sendOne(t, p, seq)
		frames = append(frames, g.frame())
	}
	frames[0].Release()
	frames[1].Release() // two wait in the queue
	claimed, ok := Claim(frames[2].Handle())
	if !ok {
		t.Fatal("claim failed")
	}
	closed := make(chan struct{})
	go func() { g.close(); close(closed) }()
	// The unclaimed frames finish at once, into the queue: two overflow
	// it; the rest waits for the claimed frame's conversion to end.
	rel.waitN(t, 2)
	select {
	case <-closed:
		t.Fatal("the retire did not wait for a frame being converted")
	default:
	}
	if _, ok := Claim(frames[4].Handle()); ok {
		t.Fatal("a retired frame could still be claimed")
	}
	claimed.Release()
	<-closed
	<-p.Done()
	d, ok := p.Drained()
	if !ok || d.Returned != 6 || d.Unreturned != 0 {
		t.Fatalf("drain %+v %v", d, ok)
	}
	got := rel.waitN(t, 6)
	var order []uint64
	for _, r := range got {
		order = append(order, r.Sequence)
	}
	if want := []uint64{1, 2, 4, 5, 6, 3}; !equal(order, want) {
		t.Errorf("returned in order %v, want %v (in the order they finished)", order, want)
	}
	frames[5].Release() // after the retire: nothing
	p.Close()
	if n := openFds(t); n != fds {
		t.Errorf("%d descriptors open, %d before: a buffer or socket leaked", n, fds)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestNewProducerIsRefusedWhileOneStreams (issue 27, item 12): a second
// connection used to replace the one streaming once its HELLO was
// accepted, so any local program that could reach the socket took the
// source over. Now it is refused (ERROR, busy) and the first streams on;
// once the first crashes (its end closed, not yet read by the receiver)
// the next connection takes over at once.
func TestNewProducerIsRefusedWhileOneStreams(t *testing.T) {
	fds := openFds(t)
	g := newRig(t, 3, 9)
	p1, _ := dialRig(t, g, ProducerConfig{})
	var old []*Frame
	for seq := uint64(1); seq <= 4; seq++ {
		sendOne(t, p1, seq)
		old = append(old, g.frame())
	}
	_, err := Dial(ProducerConfig{Socket: g.path, Picture: NewPicture(NV12, AlphaOpaque, 32, 16)})
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Code != CodeBusy || !strings.Contains(refused.Text, "another producer") {
		t.Fatalf("a second producer while one streams: %v, want ERROR busy", err)
	}
	// The first streams on.
	sendOne(t, p1, 5)
	if f := g.frame(); f.Sequence != 5 || f.Buffer.Connection != old[0].Buffer.Connection {
		t.Fatalf("after the refusal: frame %+v", f)
	} else {
		f.Release()
	}
	for _, o := range old {
		o.Release()
	}
	// It crashes; the next producer is welcomed straight away.
	p1.Abort()
	p2, _ := dialRig(t, g, ProducerConfig{Picture: NewPicture(NV12, AlphaOpaque, 32, 16)})
	sendOne(t, p2, 100)
	f := g.frame()
	if f.Sequence != 100 || f.Buffer.Picture.Format != NV12 || f.Buffer.Connection == old[0].Buffer.Connection {
		t.Fatalf("frame %+v of %+v", f, f.Buffer)
	}
	if !old[1].Buffer.Dead() {
		t.Error("a buffer of the crashed connection is not dead")
	}
	f.Release()
	g.close()
	<-p2.Done()
	p2.Close()
	if c, r := g.counters.Connections.Load(), g.counters.Refused.Load(); c != 2 || r != 1 {
		t.Errorf("counters %d connections, %d refused; want 2 and 1", c, r)
	}
	if n := openFds(t); n != fds {
		t.Errorf("%d descriptors open, %d before", n, fds)
	}
}

// TestCrashedProducerLeaksNothing: a producer that vanishes without BYE
// leaves no descriptor open in onair once its frames are released.
func TestCrashedProducerLeaksNothing(t *testing.T) {
	fds := openFds(t)
	g := newRig(t, 3, 9)
	p, _ := dialRig(t, g, ProducerConfig{})
	var held []*Frame
	for seq := uint64(1); seq <= 5; seq++ {
		sendOne(t, p, seq)
		held = append(held, g.frame())
	}
	claimed, _ := Claim(held[0].Handle())
	p.Abort()
	// The receiver notices, retires the connection (the claimed frame's
	// release ends the wait) and closes every descriptor.
	claimed.Release()
	select {
	case <-g.retired:
	case <-time.After(wait):
		t.Fatal("the receiver never retired the broken connection")
	}
	for _, f := range held {
		if !f.Buffer.Dead() {
			t.Fatalf("buffer %d is alive after its connection broke", f.Buffer.ID)
		}
		f.Release() // late: only closes
	}
	g.close()
	if n := openFds(t); n != fds {
		t.Errorf("%d descriptors open, %d before", n, fds)
	}
}

// rawHello sends a hand-made HELLO and returns what the receiver answers.
func rawExchange(t *testing.T, path string, msgs ...[]byte) []Message {
	t.Helper()
	fd, err := dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for _, m := range msgs {
		if err := send(fd, m, -1, false); err != nil {
			t.Fatal(err)
		}
	}
	tv := unix.NsecToTimeval(int64(wait))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	var out []Message
	buf := make([]byte, MaxMessage+1)
	for {
		n, fds, err := recv(fd, buf, make([]byte, oobSpace), false)
		closeAll(fds)
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		if n == 0 {
			return out
		}
		m, err := Parse(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
}

func TestAProducerOfAnotherVersionIsToldSo(t *testing.T) {
	g := newRig(t, 3, 9)
	b := Hello{Version: 7, Picture: NewPicture(BGRA, AlphaOpaque, 8, 8)}.Append(nil)
	got := rawExchange(t, g.path, b)
	if len(got) != 1 {
		t.Fatalf("answers %v, want one ERROR", got)
	}
	e, ok := got[0].(ErrorMsg)
	if !ok || e.Code != CodeVersion || !strings.Contains(e.Text, "version 7") || !strings.Contains(e.Text, "speaks versions 1 to 2") {
		t.Fatalf("answer %+v", got[0])
	}
	if g.counters.Refused.Load() != 1 || g.counters.Connections.Load() != 0 {
		t.Errorf("refused %d, connections %d", g.counters.Refused.Load(), g.counters.Connections.Load())
	}
}

// TestGPUBuffersToAHostSourceAreRefused: a receiver whose backend maps
// memfds only refuses a HELLO of CUDA buffers, saying what to change; a
// version 1 HELLO (memfds) is welcomed with version 1.
func TestGPUBuffersToAHostSourceAreRefused(t *testing.T) {
	g := newRig(t, 3, 9)
	h := Hello{Version: Version, Picture: NewPicture(BGRA, AlphaOpaque, 8, 8)}
	h.Memory = MemoryCUDA
	got := rawExchange(t, g.path, h.Append(nil))
	if len(got) != 1 {
		t.Fatalf("answers %v, want one ERROR", got)
	}
	if e, ok := got[0].(ErrorMsg); !ok || e.Code != CodeFormat || !strings.Contains(e.Text, "imports memfd buffers, not cuda") || !strings.Contains(e.Text, "-backend cuda") {
		t.Fatalf("answer %+v", got[0])
	}
	got = rawExchange(t, g.path, Hello{Version: 1, Picture: NewPicture(BGRA, AlphaOpaque, 8, 8)}.Append(nil), Bye{}.Append(nil))
	if len(got) < 1 {
		t.Fatal("no answer to a version 1 HELLO")
	}
	if w, ok := got[0].(Welcome); !ok || w.Version != 1 {
		t.Fatalf("a version 1 HELLO was answered %+v", got[0])
	}
}

func TestProtocolMistakesAreRefusedWithTheReason(t *testing.T) {
	hello := Hello{Version: Version, Picture: NewPicture(BGRA, AlphaOpaque, 8, 8)}.Append(nil)
	cases := []struct {
		name string
		msgs [][]byte
		want string
	}{
		{"frame first", [][]byte{FrameMsg{Buffer: 1}.Append(nil)}, "first message must be HELLO"},
		{"unknown buffer", [][]byte{hello, FrameMsg{Buffer: 1}.Append(nil)}, "whose descriptor was never sent"},
		{"flag without fd", [][]byte{hello, FrameMsg{Buffer: 1, Flags: FlagFD}.Append(nil)}, "carried 0 descriptors"},
		{"forget unknown", [][]byte{hello, Forget{Buffer: 2}.Append(nil)}, "does not know"},
		{"second hello", [][]byte{hello, hello}, "a second HELLO"},
		{"onair's message", [][]byte{hello, Release{Buffer: 1}.Append(nil)}, "onair's message"},
		{"garbage", [][]byte{[]byte("GET / HTTP/1.1\r\n\r\n")}, "not a producer protocol message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newRig(t, 3, 9)
			got := rawExchange(t, g.path, c.msgs...)
			var e *ErrorMsg
			for _, m := range got {
				if m, ok := m.(ErrorMsg); ok {
					e = &m
				}
			}
			if e == nil || !strings.Contains(e.Text, c.want) {
				t.Fatalf("answers %+v, want an ERROR containing %q", got, c.want)
			}
			if _, ok := got[len(got)-1].(Drain); c.msgs[0][4] == byte(TypeHello) && !ok {
				t.Errorf("a welcomed producer's connection must end with DRAIN, got %+v", got)
			}
		})
	}
}

// TestBufferRulesAreEnforced: a buffer is held from FRAME to RELEASE; its
// descriptor comes once; FORGET only for a buffer the producer holds.
func TestBufferRulesAreEnforced(t *testing.T) {
	fds := openFds(t)
	cases := []struct {
		name   string
		second func(p *Producer, b *ProducerBuffer) error
		want   string
	}{
		{"painted while held", func(p *Producer, b *ProducerBuffer) error {
			return send(p.fd, FrameMsg{Buffer: b.id, Sequence: 2}.Append(nil), -1, false)
		}, "still holds it"},
		{"descriptor again", func(p *Producer, b *ProducerBuffer) error {
			return send(p.fd, FrameMsg{Buffer: b.id, Flags: FlagFD, Sequence: 2}.Append(nil), b.mem.Fd, false)
		}, "came with a descriptor again"},
		{"forget while held", func(p *Producer, b *ProducerBuffer) error {
			return send(p.fd, Forget{Buffer: b.id}.Append(nil), -1, false)
		}, "FORGET of buffer 0 while onair still holds it"},
		{"descriptor on forget", func(p *Producer, b *ProducerBuffer) error {
			return send(p.fd, Forget{Buffer: b.id}.Append(nil), b.mem.Fd, false)
		}, "carried a file descriptor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newRig(t, 3, 9)
			p, _ := dialRig(t, g, ProducerConfig{})
			b := sendOne(t, p, 1)
			f := g.frame()
			if err := c.second(p, b); err != nil {
				t.Fatal(err)
			}
			<-p.Done()
			var re *RefusedError
			p.mu.Lock()
			err := p.err
			p.mu.Unlock()
			if !errors.As(err, &re) || !strings.Contains(re.Text, c.want) {
				t.Fatalf("got %v, want a refusal containing %q", err, c.want)
			}
			if d, ok := p.Drained(); !ok || d.Reason != DrainError {
				t.Errorf("drain %+v %v", d, ok)
			}
			f.Release()
			p.Close()
			g.close()
		})
	}
	if n := openFds(t); n != fds {
		t.Errorf("%d descriptors open, %d before", n, fds)
	}
}

// TestForgottenBufferIsDeadAndItsIdReusable: FORGET closes the buffer;
// the id may then name a new one.
func TestForgottenBufferIsDeadAndItsIdReusable(t *testing.T) {
	g := newRig(t, 0, 9)
	p, rel := dialRig(t, g, ProducerConfig{Buffers: 1, MaxIdle: 1})
	sendOne(t, p, 1)
	f1 := g.frame()
	f1.Release()
	rel.waitN(t, 1)
	sendOne(t, p, 2) // buffer 0 again, no descriptor
	f2 := g.frame()
	if f2.Buffer != f1.Buffer {
		t.Fatal("a reused buffer came back as another")
	}
	// A second buffer out with MaxIdle 1 and one idle: returning both
	// destroys one.
	p.cfg.Buffers = 2
	sendOne(t, p, 3)
	f3 := g.frame()
	f2.Release()
	f3.Release()
	rel.waitN(t, 3)
	// The FORGET went before the next frame: once it arrived, it was read.
	sendOne(t, p, 4)
	g.frame().Release()
	if g.counters.Forgotten.Load() != 1 {
		t.Fatalf("forgotten %d, want 1", g.counters.Forgotten.Load())
	}
	if !f3.Buffer.Dead() && !f2.Buffer.Dead() {
		t.Fatal("no buffer is dead after FORGET")
	}
	p.Close()
}

func TestListenRefusesWhatItCannotUse(t *testing.T) {
	dir, _ := os.MkdirTemp("", "oair")
	defer os.RemoveAll(dir)
	cases := []struct {
		path string
		want string
	}{
		{filepath.Join(dir, "missing", "s.sock"), "does not exist"},
		{"/" + strings.Repeat("x", 120), "over the 107 a Unix socket allows"},
		{"", "no socket path"},
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	cases = append(cases, struct{ path, want string }{file, "not a socket"})
	for _, c := range cases {
		_, err := Listen(ReceiverConfig{Path: c.path})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.path, err, c.want)
		}
	}
	// A live socket is refused; a stale one is replaced.
	live := filepath.Join(dir, "live.sock")
	r1, err := Listen(ReceiverConfig{Path: live})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(ReceiverConfig{Path: live}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second listener: %v", err)
	}
	r1.Close()
	if _, err := os.Stat(live); !os.IsNotExist(err) {
		t.Error("Close left the socket file")
	}
	fd, _ := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	unix.Bind(fd, &unix.SockaddrUnix{Name: live})
	unix.Close(fd) // a stale file, nobody listening
	r2, err := Listen(ReceiverConfig{Path: live})
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	r2.Close()
}
