package cuda

import (
	"bytes"
	"fmt"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/onairhq/onair/audio"
	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
)

// patternBackend is a backend on device 0, for tests that make nodes
// without a show; it skips the test where no GPU is usable.
func patternBackend(t testing.TB) *backend {
	t.Helper()
	if _, err := gpu.Probe(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	c, err := gpu.NewContext(gpu.SchedBlockingSync)
	if err != nil {
		t.Fatal(err)
	}
	b := newBackend(c)
	t.Cleanup(b.close)
	return b
}

// lineUpTone is the tone a show's test pattern carries by default (1 kHz
// at -18 dBFS), at rate: the frames that flash.
func lineUpTone(t testing.TB, rate frame.Rational) *audio.Tone {
	t.Helper()
	cad, err := audio.NewCadence(int64(rate.Num), int64(rate.Den))
	if err != nil {
		t.Fatal(err)
	}
	tone, err := audio.NewTone(1000, -18, cad)
	if err != nil {
		t.Fatal(err)
	}
	return &tone
}

// cutFrames are the frames TestPatternCutOnTheGPUIsNexts downloads: the
// first 131 (four flashes at 30 fps), those around the point where Bars
// and Ramp have slid a whole width (frame w/4), and past the stamp's
// 24-bit counter.
func cutFrames(w int) []int64 {
	var ns []int64
	for n := int64(0); n <= 130; n++ {
		ns = append(ns, n)
	}
	for n := int64(w/4 - 2); n <= int64(w/4+2); n++ {
		if n > 130 {
			ns = append(ns, n)
		}
	}
	return append(ns, 1<<24-1, 1<<24, 1<<24+29)
}

// TestPatternCutOnTheGPUIsNexts: test_pattern_cuda's pictures, downloaded,
// are byte for byte what media.TestPattern.Next draws on the host, with
// the same metadata and sound, for every pattern, NV12 and P010, at 1080p
// and 640x360, through flashes and the slide's and the stamp's wraps, each
// cut into a frame painted with garbage first (a piece left out would
// show). The source's counters count every frame and its sound.
func TestPatternCutOnTheGPUIsNexts(t *testing.T) {
	b := patternBackend(t)
	rate := frame.Rational{Num: 30, Den: 1}
	tone := lineUpTone(t, rate)
	s, err := b.ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		for _, p := range []media.Pattern{media.Bars, media.Ramp, media.Solid, media.Checker} {
			for _, sz := range [][2]int{{1920, 1080}, {640, 360}} {
				t.Run(fmt.Sprintf("%v/%v/%dx%d", f, p, sz[0], sz[1]), func(t *testing.T) {
					cfg := media.TestPatternConfig{ID: "source.tp", StampID: 300, Pattern: p, Format: f, Width: sz[0], Height: sz[1], Rate: rate, Tone: tone}
					cutMatchesNext(t, b, s, cfg, cutFrames(sz[0]))
				})
			}
		}
	}
}

func cutMatchesNext(t *testing.T, b *backend, s *gpu.Stream, cfg media.TestPatternConfig, ns []int64) {
	t.Helper()
	var st show.SourceState
	src, err := b.newPatternCutter(cfg, &st)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Stop()
	ref, err := media.NewTestPattern(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := frame.New(cfg.Format, cfg.Width, cfg.Height)
	got, _ := frame.New(cfg.Format, cfg.Width, cfg.Height)
	flashes := 0
	for _, n := range ns {
		// The pool's one frame, painted with garbage, is the one cut next.
		g, err := src.pool.Get(s)
		if err != nil {
			t.Fatal(err)
		}
		noErr(t, s.Memset2D8(g.Plane[0], g.Pitch, 0xa7, g.RowBytes(), g.Height+g.Height/2))
		noErr(t, s.Synchronize())
		g.Release()

		src.tp.SetNext(n)
		out, err := src.next()
		if err != nil {
			t.Fatal(err)
		}
		d := out.(*gpu.Frame)
		if d != g {
			t.Fatalf("frame %d was cut into another frame than the pool's one", n)
		}
		noErr(t, d.Download(s, got))
		d.Release()
		ref.SetNext(n)
		noErr(t, ref.Next(want))
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("frame %d: the GPU's picture differs from Next's at byte %d of %d", n, firstDiffAt(got.Bytes(), want.Bytes()), len(want.Bytes()))
		}
		if !reflect.DeepEqual(got.Meta, want.Meta) {
			t.Fatalf("frame %d: metadata %+v, Next's %+v", n, got.Meta, want.Meta)
		}
		if ref.Flashes(n) {
			flashes++
		}
	}
	if flashes < 4 {
		t.Fatalf("%d frames flashed, want at least 4", flashes)
	}
	if st.Produced.Load() != uint64(len(ns)) {
		t.Fatalf("the source counted %d frames, made %d", st.Produced.Load(), len(ns))
	}
	if _, ok := st.Audio.Levels(); !ok {
		t.Fatal("the source's meter measured none of its sound")
	}
}

func noErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func firstDiffAt(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestPatternSourcesShareTheirArt: sources of one pattern, format and size
// share one art on the GPU, freed when the last stops; another size has
// its own.
func TestPatternSourcesShareTheirArt(t *testing.T) {
	b := patternBackend(t)
	rate := frame.Rational{Num: 30, Den: 1}
	cfg := media.TestPatternConfig{ID: "a", Pattern: media.Bars, Format: frame.NV12, Width: 640, Height: 360, Rate: rate}
	var st show.SourceState
	one, err := b.newPatternCutter(cfg, &st)
	noErr(t, err)
	cfg.ID = "b"
	two, err := b.newPatternCutter(cfg, &st)
	noErr(t, err)
	cfg.ID, cfg.Width = "c", 320
	three, err := b.newPatternCutter(cfg, &st)
	noErr(t, err)
	if one.art != two.art || one.art == three.art {
		t.Fatalf("arts: a %p, b %p (same pattern and size), c %p (another size)", one.art, two.art, three.art)
	}
	one.Stop()
	if len(b.arts.arts) != 2 {
		t.Fatalf("%d arts after one of two sharers stopped, want 2", len(b.arts.arts))
	}
	two.Stop()
	three.Stop()
	if len(b.arts.arts) != 0 {
		t.Fatalf("%d arts after every source stopped", len(b.arts.arts))
	}
}

// BenchmarkTestPatternCPU is the CPU a 1080p30 NV12 test pattern with its
// tone costs a frame on the CUDA backend (the whole process, getrusage):
// old, drawn on the host and copied into the pinned chain's write-combined
// block for upload (what test_pattern -> upload did); cut, the frame cut
// on the GPU from the art (test_pattern_cuda). Every 30 frames the stream
// is waited for (sleeping), as the GPU keeps up in a show.
func BenchmarkTestPatternCPU(b *testing.B) {
	be := patternBackend(b)
	rate := frame.Rational{Num: 30, Den: 1}
	cfg := media.TestPatternConfig{ID: "source.tp", StampID: 1, Pattern: media.Bars, Format: frame.NV12, Width: 1920, Height: 1080, Rate: rate, Tone: lineUpTone(b, rate)}
	b.Run("old", func(b *testing.B) {
		tp, err := media.NewTestPattern(cfg)
		noErr(b, err)
		pool, err := gpu.NewFramePool(be.ctx, cfg.Format, cfg.Width, cfg.Height, 0)
		noErr(b, err)
		defer pool.Close()
		up, err := gpu.NewUploader(pool, gpu.HostWriteCombined)
		noErr(b, err)
		defer up.Close()
		host, err := frame.NewPool(cfg.Format, cfg.Width, cfg.Height, 0)
		noErr(b, err)
		measureCPU(b, up.Stream(), func() {
			h, err := host.Get()
			noErr(b, err)
			noErr(b, tp.Next(h))
			buf, err := up.Buffer()
			noErr(b, err)
			copy(buf, h.Bytes())
			d, err := up.Upload()
			noErr(b, err)
			d.MetaFrom(h)
			h.Release()
			d.Release()
		})
	})
	b.Run("cut", func(b *testing.B) {
		var st show.SourceState
		src, err := be.newPatternCutter(cfg, &st)
		noErr(b, err)
		defer src.Stop()
		measureCPU(b, src.stream, func() {
			f, err := src.next()
			noErr(b, err)
			f.Release()
		})
	})
}

// measureCPU runs step (one frame) b.N times and reports the process's CPU per frame.
func measureCPU(b *testing.B, s *gpu.Stream, step func()) {
	b.ReportAllocs()
	b.ResetTimer()
	c0 := processCPU(b)
	for i := 0; i < b.N; i++ {
		step()
		if i%30 == 29 {
			noErr(b, s.Synchronize())
		}
	}
	noErr(b, s.Synchronize())
	cpu := processCPU(b) - c0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/frame")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e9/float64(b.N)*30*100, "%core-at-30fps")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
