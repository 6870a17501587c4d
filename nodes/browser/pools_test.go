package browser

import (
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// TestEverySizeDoesNotKeepAPool is issue 27's third item: every picture
// size a producer announced kept a frame pool for good (80 sizes left
// 1.3 GB on the heap after GC). Eighty producers, one after another, each
// at a size of its own up to 1280x720, go through one importer over a
// real socket: it keeps MaxPools pools, and the heap after GC holds no
// more than those.
func TestEverySizeDoesNotKeepAPool(t *testing.T) {
	dir, err := os.MkdirTemp("", "oair")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	frames := make(chan *ipc.Frame, 16)
	rcv, err := ipc.Listen(ipc.ReceiverConfig{Path: filepath.Join(dir, "s.sock")})
	if err != nil {
		t.Fatal(err)
	}
	go rcv.Serve(func(f *ipc.Frame) { frames <- f })
	defer rcv.Close()
	imp, err := NewHostImporter(frame.NV12, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := imp.(*HostImporter)
	defer h.Close()
	heap := func() uint64 {
		goruntime.GC()
		var m goruntime.MemStats
		goruntime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var before uint64
	var last *frame.Frame
	for i := 0; i < 80; i++ {
		w, h0 := 1280-8*i, 720-4*i
		p, err := ipc.Dial(ipc.ProducerConfig{Socket: rcv.Path(), Picture: ipc.NewPicture(ipc.BGRA, ipc.AlphaOpaque, w, h0)})
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Acquire(time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Send(b, 1, 0); err != nil {
			t.Fatal(err)
		}
		var f *ipc.Frame
		select {
		case f = <-frames:
		case <-time.After(time.Minute):
			t.Fatalf("size %dx%d: no frame arrived", w, h0)
		}
		m, err := h.Import(f.Buffer)
		if err != nil {
			t.Fatal(err)
		}
		out, err := h.Convert(m, f.Buffer)
		if err != nil {
			t.Fatal(err)
		}
		h.Release(m)
		f.Release()
		if last != nil {
			last.Release() // the picture before stays on show until this one
		}
		last = out
		p.Close()
		if i == 1 {
			before = heap() // two sizes' pools, one frame each
		}
	}
	last.Release()
	if n := h.PoolsKept(); n > MaxPools {
		t.Errorf("%d pools kept after 80 sizes, want at most %d", n, MaxPools)
	}
	// 80 pools of a frame each would be about 60 MB more than two.
	if after := heap(); after > before+8<<20 {
		t.Errorf("the heap grew from %d to %d bytes over 80 sizes: their pools were kept", before, after)
	}
}
