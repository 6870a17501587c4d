package browser

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media/ipc"
	"github.com/onairhq/onair/nodes/show"
)

const ms = int64(time.Millisecond)

func TestImportsKeepUntilTheTTL(t *testing.T) {
	s := NewImports()
	a, b := &ipc.Buffer{ID: 1}, &ipc.Buffer{ID: 2}
	s.Put(a, "a", 0)
	s.Put(b, "b", 0)
	for now := int64(0); now <= 9_000*ms; now += 1000 * ms {
		s.Get(a, now) // a paints every second, b never again
	}
	if got := s.Sweep(9_999*ms, 10*time.Second); len(got) != 0 {
		t.Fatalf("released %v before the TTL", got)
	}
	got := s.Sweep(10_000*ms, 10*time.Second)
	if len(got) != 1 || got[0].Buffer != b || got[0].Reason != ReasonTTL {
		t.Fatalf("released %+v, want b after 10 s unused", got)
	}
	if m, ok := s.Get(a, 10_000*ms); !ok || m != "a" {
		t.Fatal("a, in use, was dropped")
	}
	if got := s.Sweep(19_999*ms, 10*time.Second); len(got) != 0 {
		t.Fatalf("a released %v early", got)
	}
}

func TestPurgeTakesWhatStartUpLeftIdle(t *testing.T) {
	s := NewImports()
	bufs := []*ipc.Buffer{{ID: 0}, {ID: 1}, {ID: 2}, {ID: 3}}
	for i, b := range bufs {
		s.Put(b, i, int64(i)*100*ms) // start-up went through four buffers
	}
	s.Get(bufs[3], 900*ms) // the page settled on buffer 3 (and 2, just)
	s.Get(bufs[2], 451*ms)
	got := s.Purge(950*ms, PurgeIdleAfter)
	if len(got) != 2 || got[0].Buffer != bufs[0] || got[1].Buffer != bufs[1] || got[0].Reason != ReasonPurge {
		t.Fatalf("purged %+v, want buffers 0 and 1 (unused since 0 and 100 ms)", got)
	}
	if s.Len() != 2 {
		t.Fatalf("%d kept, want 2", s.Len())
	}
	if all := s.All(); len(all) != 2 || all[0].Reason != ReasonStop || s.Len() != 0 {
		t.Fatalf("All gave %+v", all)
	}
}

// loopRig is a receiver and a producer around an importLoop driven by a
// clock the test moves.
type loopRig struct {
	t        *testing.T
	rcv      *ipc.Receiver
	frames   chan *ipc.Frame
	p        *ipc.Producer
	loop     *importLoop[*frame.Frame]
	now      int64
	onAirAt  int64
	released []Released
	seq      uint64
	bs       *show.BrowserState
	back     chan ipc.Release
}

func newLoopRig(t *testing.T, purge bool) *loopRig {
	dir, err := os.MkdirTemp("", "oair")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	g := &loopRig{t: t, frames: make(chan *ipc.Frame, 64), back: make(chan ipc.Release, 64)}
	src := &show.SourceState{Address: "source.gfx"}
	g.bs = src.Browser()
	g.rcv, err = ipc.Listen(ipc.ReceiverConfig{Path: filepath.Join(dir, "s"), Counters: &g.bs.Counters})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { g.rcv.Serve(func(f *ipc.Frame) { g.frames <- f }); close(served) }()
	t.Cleanup(func() { g.rcv.Close(); <-served })
	g.p, err = ipc.Dial(ipc.ProducerConfig{Socket: g.rcv.Path(), Picture: ipc.NewPicture(ipc.BGRA, ipc.AlphaOpaque, 8, 4), NewestFirst: true,
		OnRelease: func(r ipc.Release) { g.back <- r }})
	if err != nil {
		t.Fatal(err)
	}
	imp, _ := NewHostImporter(frame.NV12, true, nil)
	g.loop = &importLoop[*frame.Frame]{
		imp: imp, imports: NewImports(), ttl: 10 * time.Second, purge: purge, src: src, bs: g.bs, address: src.Address,
		onAir:   func() (int64, bool) { return g.onAirAt, g.onAirAt != 0 },
		release: func(r Released) { g.released = append(g.released, r); imp.Release(r.Mapping) },
		clock:   func() int64 { return g.now },
	}
	return g
}

// paint sends n frames at once (n buffers out together), then converts
// them at the rig's clock, and waits for the buffers to come back.
func (g *loopRig) paint(n int) []uint32 {
	g.t.Helper()
	var ids []uint32
	for range n {
		b, err := g.p.Acquire(20 * time.Second)
		if err != nil {
			g.t.Fatal(err)
		}
		g.seq++
		b.Pixels()[0] = byte(g.seq)
		if err := g.p.Send(b, g.seq, g.now); err != nil {
			g.t.Fatal(err)
		}
		ids = append(ids, b.ID())
	}
	for range n {
		var f *ipc.Frame
		select {
		case f = <-g.frames:
		case <-time.After(20 * time.Second):
			g.t.Fatal("no frame arrived")
		}
		tok, _ := Host.wrap(f)
		out, ok, err := g.loop.frame(tok, g.now)
		if err != nil || !ok {
			g.t.Fatalf("frame %d: %v", f.Sequence, err)
		}
		if out.SourceFrame != int64(f.Sequence) || out.Source != "source.gfx" {
			g.t.Fatalf("converted frame says %s %d", out.Source, out.SourceFrame)
		}
		out.Release()
	}
	// Every buffer back (return queue 0) before the next paint picks one.
	for range n {
		select {
		case <-g.back:
		case <-time.After(20 * time.Second):
			g.t.Fatal("buffers did not come back")
		}
	}
	g.loop.sweep(g.now)
	return ids
}

func (g *loopRig) releasedBy(r Reason) (ids []uint32) {
	for _, x := range g.released {
		if x.Reason == r {
			ids = append(ids, x.Buffer.ID)
		}
	}
	return ids
}

// TestImportsAreReusedAndReleasedOnTime drives gpu_import's loop with a
// clock the test moves: start-up goes through three buffers, the page
// then paints into one; purge_idle releases the two it left idle once
// the show is on air (and only then, and once); the TTL releases the
// last one after ten unused seconds; a frame after that imports it again;
// a broken connection releases what it left.
func TestImportsAreReusedAndReleasedOnTime(t *testing.T) {
	g := newLoopRig(t, true)
	start := g.paint(3) // start-up: three buffers out at once
	if g.bs.Imports.Load() != 3 {
		t.Fatalf("%d imports for three buffers", g.bs.Imports.Load())
	}
	var steady uint32
	for i := range 20 { // one frame every 40 ms, into the buffer returned last
		g.now += 40 * ms
		ids := g.paint(1)
		if i == 0 {
			steady = ids[0]
		} else if ids[0] != steady {
			t.Fatalf("the page moved from buffer %d to %d", steady, ids[0])
		}
	}
	if n := g.bs.Imports.Load(); n != 3 {
		t.Fatalf("%d imports after 23 frames into 3 buffers: a frame was imported again", n)
	}
	if len(g.released) != 0 {
		t.Fatalf("released %+v before the show went on air", g.released)
	}
	g.onAirAt = g.now
	g.now += 10 * ms
	g.paint(1)
	purged := g.releasedBy(ReasonPurge)
	if len(purged) != 2 || g.bs.Purged.Load() != 2 {
		t.Fatalf("purged %v, want the two start-up buffers other than %d (of %v)", purged, steady, start)
	}
	for _, id := range purged {
		if id == steady {
			t.Fatalf("purged buffer %d, which the page paints into", id)
		}
	}
	// Purge runs once: a buffer left idle later waits for its TTL.
	g.now += 9_000 * ms
	g.loop.sweep(g.now)
	if len(g.released) != 2 {
		t.Fatalf("released %+v after 9 s", g.released)
	}
	g.now += 1_000 * ms // ten seconds since the last frame
	g.loop.sweep(g.now)
	if ttl := g.releasedBy(ReasonTTL); len(ttl) != 1 || ttl[0] != steady || g.bs.Expired.Load() != 1 {
		t.Fatalf("expired %v, want buffer %d after 10 s unused", ttl, steady)
	}
	g.now += 40 * ms
	g.paint(1)
	if g.bs.Imports.Load() != 4 {
		t.Fatalf("%d imports: a frame after the TTL imports its buffer again", g.bs.Imports.Load())
	}
	// The producer leaves: its buffers are dead, their imports go at once.
	if _, err := g.p.Close(); err != nil {
		t.Fatal(err)
	}
	// The receiver notices the producer is gone on its own goroutine:
	// sweep until it has (a busy machine may take a while), with a bound
	// that only keeps a broken build from hanging.
	testwait.Until(t, testwait.Bound, "the dead buffer's import to be released", func() bool {
		g.loop.sweep(g.now)
		dead := g.releasedBy(ReasonDead)
		if len(dead) > 1 {
			t.Fatalf("dead %v, %d kept", dead, g.loop.imports.Len())
		}
		return len(dead) == 1 && g.loop.imports.Len() == 0
	})
}

// import_ttl_ms changed on air (onair apply: BrowserState.SetImportTTL)
// takes effect at the next sweep, and outlives the node: the value the
// plan gave a restarted node does not undo it.
func TestImportTTLChangesOnAir(t *testing.T) {
	g := newLoopRig(t, false)
	g.bs.InitImportTTL(10_000)
	g.paint(2)
	g.onAirAt = 1
	g.now += 2_000 * ms
	g.loop.sweep(g.now)
	if len(g.released) != 0 {
		t.Fatalf("released %+v after 2 s with a 10 s TTL", g.released)
	}
	g.bs.SetImportTTL(1_000)
	g.bs.InitImportTTL(10_000) // a restarted gpu_import, from the plan
	g.loop.sweep(g.now)
	if len(g.releasedBy(ReasonTTL)) != 2 || g.bs.Expired.Load() != 2 {
		t.Fatalf("released %+v, want both imports: unused for 2 s, the TTL now 1 s", g.released)
	}
	g.p.Close()
}

func TestWithoutPurgeIdleStartUpBuffersWaitForTheTTL(t *testing.T) {
	g := newLoopRig(t, false)
	g.paint(3)
	g.onAirAt = 1
	g.now += 600 * ms
	g.paint(1)
	if len(g.released) != 0 {
		t.Fatalf("released %+v without purge_idle", g.released)
	}
	g.now += 10_000 * ms
	g.loop.sweep(g.now)
	if len(g.releasedBy(ReasonTTL)) != 3 {
		t.Fatalf("released %+v, want all three after the TTL", g.released)
	}
	g.p.Close()
}

// A token whose connection was retired before the import took it is
// dropped and counted, not converted.
func TestStaleTokensAreDropped(t *testing.T) {
	g := newLoopRig(t, false)
	b, _ := g.p.Acquire(time.Second)
	g.p.Send(b, 1, 0)
	f := <-g.frames
	tok, _ := Host.wrap(f)
	g.p.Abort()
	g.rcv.Close() // retires the connection: the frame goes back
	if _, ok, err := g.loop.frame(tok, 0); ok || err != nil || g.bs.Stale.Load() != 1 {
		t.Fatalf("ok %v, err %v, stale %d", ok, err, g.bs.Stale.Load())
	}
	pic, _ := frame.New(frame.NV12, 2, 2)
	if _, _, err := g.loop.frame(pic, 0); err != errNotToken {
		t.Fatalf("a picture on the input: %v", err)
	}
}
