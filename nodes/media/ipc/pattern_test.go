package ipc

import (
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// counterOf reads the frame number the pattern stamped into a received
// buffer: 16 boxes along the top-left, white for 1.
func counterOf(t *testing.T, pic Picture, f *Frame) uint64 {
	t.Helper()
	mem, err := unix.Mmap(f.Buffer.Fd(), 0, pic.Size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	var n uint64
	for bit := 0; bit < 16; bit++ {
		x := patternBox + bit*patternBox + patternBox/2
		if x >= pic.Width {
			break
		}
		off := (patternBox+patternBox/2)*pic.Pitch + x*pic.Format.BytesPerPixel()
		if mem[off] >= 200 {
			n |= 1 << bit
		}
	}
	return n
}

// The pattern producer sends numbered, moving frames at its rate in every
// format it offers, each carrying its own number.
func TestPatternProducerSendsNumberedFrames(t *testing.T) {
	for _, f := range []PixelFormat{RGBA, BGRA, NV12} {
		t.Run(f.String(), func(t *testing.T) {
			g := newRig(t, 3, 9)
			var st FeedStats
			// Read while the producer is connected: a retired connection's
			// buffers are closed.
			ctx, cancel := context.WithCancel(context.Background())
			cfg := PatternConfig{Socket: g.path, Format: f, Width: 640, Height: 64, Period: time.Millisecond, ID: 3}
			done := make(chan error, 1)
			go func() { done <- RunPattern(ctx, cfg, &st) }()
			pic := NewPicture(f, AlphaOpaque, cfg.Width, cfg.Height)
			for want := uint64(1); want <= 20; want++ {
				fr := g.frame()
				if got := counterOf(t, pic, fr); fr.Sequence != want || got != want {
					t.Fatalf("frame %d: sequence %d, stamped %d", want, fr.Sequence, got)
				}
				fr.Release()
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if st.Sent.Load() < 20 || st.Connections.Load() != 1 {
				t.Errorf("sent %d on %d connections, want 20 or more on 1", st.Sent.Load(), st.Connections.Load())
			}
		})
	}
}

// A pattern producer outlives onair: when the receiver goes away and a new
// one listens on the same socket, it connects again and goes on.
func TestPatternProducerConnectsAgain(t *testing.T) {
	g := newRig(t, 3, 9)
	var st FeedStats
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunPattern(ctx, PatternConfig{Socket: g.path, Format: NV12, Width: 64, Height: 32, Period: time.Millisecond}, &st)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	g.frame().Release()
	g.close()
	g2 := newRigAt(t, g.path, 3, 9)
	for i := 0; i < 3; i++ {
		g2.frame().Release()
	}
	if n := st.Connections.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}
