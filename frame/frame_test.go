package frame

import (
	"strings"
	"testing"
)

func TestNewIsBlackAndPacked(t *testing.T) {
	for _, tc := range []struct {
		f          Format
		w, h       int
		size       int
		yb, cb, pt int
	}{
		{NV12, 64, 36, 64 * 36 * 3 / 2, 16, 128, 64},
		{P010, 64, 36, 64 * 36 * 3, 64 << 6, 512 << 6, 128},
	} {
		fr, err := New(tc.f, tc.w, tc.h)
		if err != nil {
			t.Fatal(err)
		}
		if len(fr.Bytes()) != tc.size || fr.Pitch[0] != tc.pt || fr.Pitch[1] != tc.pt {
			t.Errorf("%v: %d bytes, pitch %v; want %d, %d", tc.f, len(fr.Bytes()), fr.Pitch, tc.size, tc.pt)
		}
		y, c := sampleAt(fr, 0, 5, 7), sampleAt(fr, 1, 3, 9)
		if y != tc.yb || c != tc.cb {
			t.Errorf("%v: black is Y %d C %d, want %d %d", tc.f, y, c, tc.yb, tc.cb)
		}
	}
}

func sampleAt(fr *Frame, p, x, y int) int {
	if fr.Format == P010 {
		return int(fr.Plane16(p)[y*fr.Pitch[p]/2+x])
	}
	return int(fr.Data[p][y*fr.Pitch[p]+x])
}

func TestBadSizes(t *testing.T) {
	for _, tc := range []struct {
		f    Format
		w, h int
		want string
	}{
		{NV12, 63, 36, "even"}, {NV12, 0, 36, "positive"}, {P010, 64, -2, "positive"}, {Format(9), 64, 36, "unknown format"},
	} {
		if _, err := New(tc.f, tc.w, tc.h); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v,%d,%d) = %v, want an error containing %q", tc.f, tc.w, tc.h, err, tc.want)
		}
	}
	if _, err := ParseFormat("yuv420p"); err == nil {
		t.Error("ParseFormat(yuv420p) accepted")
	}
}

func TestFillRectClipsAndRoundsToEven(t *testing.T) {
	fr, _ := New(NV12, 16, 8)
	fr.FillRect(13, 5, 10, 10, 200, 50, 60) // rounds to x 12.., y 4.., clipped at 16x8
	if got := sampleAt(fr, 0, 12, 4); got != 200 {
		t.Errorf("Y(12,4) = %d, want 200", got)
	}
	if got := sampleAt(fr, 0, 11, 4); got != 16 {
		t.Errorf("Y(11,4) = %d, want untouched 16", got)
	}
	if cb, cr := sampleAt(fr, 1, 12, 2), sampleAt(fr, 1, 13, 2); cb != 50 || cr != 60 {
		t.Errorf("CbCr at pair 6 row 2 = %d,%d, want 50,60", cb, cr)
	}
}

func TestPoolReferenceCounting(t *testing.T) {
	p, err := NewPool(NV12, 32, 16, 2)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Get()
	a.Source, a.SourceFrame = "cam", 7
	a.Retain() // shown by a second bus
	a.Release()
	if p.Free() != 0 {
		t.Fatal("frame returned to the pool while a bus still holds it")
	}
	a.Release()
	if p.Free() != 1 {
		t.Fatalf("after the last Release the pool holds %d frames, want 1", p.Free())
	}
	b, _ := p.Get()
	b.Retain()
	p.Put(b)
	p.Put(b)
	if p.Free() != 1 {
		t.Fatalf("Put twice after Retain: pool holds %d, want 1", p.Free())
	}
	b, _ = p.Get()
	if b != a {
		t.Error("Get did not reuse the released frame")
	}
	if b.Source != "" || b.SourceFrame != 0 || b.Refs() != 1 {
		t.Errorf("reused frame keeps metadata %q/%d refs %d", b.Source, b.SourceFrame, b.Refs())
	}
	c, _ := p.Get()
	if _, err := p.Get(); err != ErrExhausted {
		t.Errorf("third Get from a pool of 2 = %v, want ErrExhausted", err)
	}
	b.Release()
	c.Release()
	if p.Allocated() != 2 {
		t.Errorf("allocated %d, want 2", p.Allocated())
	}
	defer func() {
		if recover() == nil {
			t.Error("over-release did not panic")
		}
	}()
	c.Release()
}

func TestPoolSteadyStateAllocatesNothing(t *testing.T) {
	p, _ := NewPool(P010, 64, 32, 0)
	warm, _ := p.Get()
	warm.Release()
	allocs := testing.AllocsPerRun(1000, func() {
		f, _ := p.Get()
		f.Retain()
		f.Release()
		f.Release()
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per frame, want 0", allocs)
	}
}

func TestCopyFrom(t *testing.T) {
	a, _ := New(P010, 8, 4)
	a.FillRect(0, 0, 4, 4, 1000<<6, 3<<6, 5<<6)
	a.PTS, a.Source = 9, "x"
	b, _ := New(P010, 8, 4)
	if err := b.CopyFrom(a); err != nil {
		t.Fatal(err)
	}
	if string(a.Bytes()) != string(b.Bytes()) || b.PTS != 9 || b.Source != "x" {
		t.Error("copy differs")
	}
	c, _ := New(NV12, 8, 4)
	if err := c.CopyFrom(a); err == nil {
		t.Error("copy across formats accepted")
	}
}

// BenchmarkPool measures a frame's round trip through a pool: Get, a second
// user, two Releases. allocs/frame must be 0.
func BenchmarkPool(b *testing.B) {
	p, _ := NewPool(NV12, 1920, 1080, 0)
	f, _ := p.Get()
	f.Release()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, _ := p.Get()
		f.Retain()
		f.Release()
		f.Release()
	}
	b.StopTimer()
	b.ReportMetric(float64(testing.AllocsPerRun(100, func() {
		f, _ := p.Get()
		f.Release()
	})), "allocs/frame")
}

func TestWriteToPacksPaddedFrames(t *testing.T) {
	packed, _ := New(NV12, 8, 4)
	packed.FillRect(2, 0, 2, 2, 99, 7, 8)
	// The same picture with a pitch of 12: rows padded with junk.
	padded := &Frame{Format: NV12, Width: 8, Height: 4, Pitch: [2]int{12, 12}}
	padded.Data[0] = make([]byte, 12*4)
	padded.Data[1] = make([]byte, 12*2)
	for i := range padded.Data[0] {
		padded.Data[0][i] = 0xee
	}
	for r := 0; r < 4; r++ {
		copy(padded.Data[0][r*12:], packed.Data[0][r*8:r*8+8])
	}
	for r := 0; r < 2; r++ {
		copy(padded.Data[1][r*12:], packed.Data[1][r*8:r*8+8])
	}
	var a, b strings.Builder
	if n, err := packed.WriteTo(&a); err != nil || n != 48 {
		t.Fatalf("packed: %d %v", n, err)
	}
	if n, err := padded.WriteTo(&b); err != nil || n != 48 {
		t.Fatalf("padded: %d %v", n, err)
	}
	if a.String() != b.String() {
		t.Error("a padded frame writes different bytes from the packed one")
	}
}

// TestClosedPoolKeepsNothing: a closed pool lets go of its free frames at
// once and of a frame still out when its last reference goes (the pools
// of a picture size no longer used, issue 27).
func TestClosedPoolKeepsNothing(t *testing.T) {
	p, err := NewPool(NV12, 64, 32, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Get()
	b, _ := p.Get()
	a.Release()
	p.Close()
	if p.Free() != 0 || p.Allocated() != 1 {
		t.Fatalf("after Close: %d free, %d allocated; want 0 and 1 (the frame still out)", p.Free(), p.Allocated())
	}
	b.Release()
	if p.Free() != 0 || p.Allocated() != 0 {
		t.Fatalf("after the last frame came back: %d free, %d allocated; want 0 and 0", p.Free(), p.Allocated())
	}
}
