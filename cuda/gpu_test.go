package cuda_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/cpu"
	"github.com/onairhq/onair/playout"
)

// The tests below need an NVIDIA GPU; elsewhere they skip, saying why.

var (
	ctxOnce   sync.Once
	sharedCtx *cuda.Context
	ctxErr    error
)

// gpu returns the tests' context (blocking sync), or skips the test.
func gpu(tb testing.TB) *cuda.Context {
	tb.Helper()
	if _, err := cuda.Probe(); err != nil {
		tb.Skipf("no usable GPU (cuda): %v", err)
	}
	ctxOnce.Do(func() { sharedCtx, ctxErr = cuda.NewContext(cuda.SchedBlockingSync) })
	if ctxErr != nil {
		tb.Fatalf("the probe found a GPU, but: %v", ctxErr)
	}
	return sharedCtx
}

func stream(tb testing.TB, c *cuda.Context) *cuda.Stream {
	tb.Helper()
	s, err := c.NewStream()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// TestErrorsNameTheCall: a failing driver call's error names the call, the
// driver's error name and its description.
func TestErrorsNameTheCall(t *testing.T) {
	c := gpu(t)
	_, err := c.Alloc(1 << 50)
	if err == nil || !strings.Contains(err.Error(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)") || !cuda.IsOutOfMemory(err) {
		t.Fatalf("a 1 PiB allocation: %v", err)
	}
	t.Log(err)
	e, err := c.NewEvent(cuda.EventDisableTiming)
	must(t, err)
	defer e.Close()
	s := stream(t, c)
	must(t, e.Record(s))
	must(t, e.Synchronize())
	_, err = e.Since(e)
	var ce *cuda.Error
	if !errors.As(err, &ce) || ce.Call != "cuEventElapsedTime" || !strings.HasPrefix(ce.Name, "CUDA_ERROR_") {
		t.Fatalf("timing an event made without timing: %v", err)
	}
	t.Log(err)
}

func TestContext(t *testing.T) {
	c := gpu(t)
	sched, err := c.Sched()
	must(t, err)
	if sched != cuda.SchedBlockingSync {
		t.Errorf("context sched %v, want blocking-sync", sched)
	}
	if c2, err := cuda.NewContext(cuda.SchedSpin); err == nil || !strings.Contains(err.Error(), "keeps it") {
		t.Errorf("a second context asking for another sched: %v", err)
		if err == nil {
			c2.Close()
		}
	}
	c2, err := cuda.NewContext(cuda.SchedBlockingSync)
	must(t, err)
	must(t, c2.Close()) // the shared one still holds the context
	must(t, c.PushPop())
	free, total, err := c.MemInfo()
	must(t, err)
	if free == 0 || total < free {
		t.Errorf("MemInfo %d free of %d", free, total)
	}
	t.Logf("CUDA driver %d, %d of %d MiB free", c.DriverVersion(), free>>20, total>>20)
}

// TestEvents: timing, querying and waiting on events around a kernel that
// keeps the GPU busy for 2 ms.
// On the GPUs the profiles name (H200: 9.0, L4: 8.9) the kernels load as
// the cubin assembled from the committed PTX, so a first start on a fresh
// machine or container waits for no JIT; elsewhere, and with ONAIR_CUDA_PTX,
// the driver JIT-compiles the PTX.
func TestKernelsLoadMachineCode(t *testing.T) {
	c := gpu(t)
	d, err := cuda.Probe()
	must(t, err)
	img, err := c.KernelImage()
	must(t, err)
	dev := d.Devices[0]
	want := fmt.Sprintf("sm_%d%d cubin", dev.ComputeMajor, dev.ComputeMinor)
	if (want != "sm_90 cubin" && want != "sm_89 cubin") || os.Getenv(cuda.PTXEnv) != "" {
		want = "PTX ISA 7.0 for sm_75 (JIT)"
	}
	if img != want {
		t.Errorf("%s (compute %d.%d) loaded the kernels from %q, want %q", dev.Name, dev.ComputeMajor, dev.ComputeMinor, img, want)
	}
	t.Logf("%s: %s", dev.Name, img)
}

func TestEvents(t *testing.T) {
	c := gpu(t)
	s := stream(t, c)
	start, err := c.NewEvent(0)
	must(t, err)
	end, err := c.NewEvent(cuda.EventBlockingSync)
	must(t, err)
	defer start.Close()
	defer end.Close()
	must(t, s.Busy(time.Microsecond)) // the first use loads (JIT-compiles) the kernels
	must(t, s.Synchronize())
	must(t, start.Record(s))
	must(t, s.Busy(2*time.Millisecond))
	must(t, end.Record(s))
	if done, err := end.Query(); err != nil || done {
		t.Errorf("Query right after queueing 2 ms of work: %v %v", done, err)
	}
	must(t, end.Synchronize())
	if done, err := end.Query(); err != nil || !done {
		t.Errorf("Query after Synchronize: %v %v", done, err)
	}
	d, err := end.Since(start)
	must(t, err)
	if d < 1900*time.Microsecond || d > 50*time.Millisecond {
		t.Errorf("2 ms of busy GPU measured %v", d)
	}
	if done, err := s.Query(); err != nil || !done {
		t.Errorf("stream Query when idle: %v %v", done, err)
	}
	// A stream waiting on another's event runs after it.
	s2 := stream(t, c)
	must(t, s.Busy(2*time.Millisecond))
	must(t, end.Record(s))
	must(t, s2.Wait(end))
	mark, err := c.NewEvent(0)
	must(t, err)
	defer mark.Close()
	must(t, mark.Record(s2))
	must(t, mark.Synchronize())
	if done, _ := end.Query(); !done {
		t.Error("s2 passed its wait before s's event happened")
	}
}

// hostFrame builds a host frame with a pitch of extra bytes beyond its
// rows, filled with noise.
func hostFrame(f frame.Format, w, h, extra int, seed int64) *frame.Frame {
	row := w * f.BytesPerSample()
	pitch := row + extra
	buf := make([]byte, pitch*(h+h/2))
	fr := &frame.Frame{Format: f, Width: w, Height: h, Pitch: [2]int{pitch, pitch},
		Data: [2][]byte{buf[:pitch*h], buf[pitch*h:]}, Meta: frame.Meta{TimeBase: frame.Rational{Num: 1, Den: 25}, PTS: seed}}
	fillNoise(fr, seed)
	return fr
}

func sameRows(a, b *frame.Frame) bool {
	row := a.Width * a.Format.BytesPerSample()
	for p := 0; p < 2; p++ {
		for r := 0; r < a.Height>>p; r++ {
			if !bytes.Equal(a.Data[p][r*a.Pitch[p]:r*a.Pitch[p]+row], b.Data[p][r*b.Pitch[p]:r*b.Pitch[p]+row]) {
				return false
			}
		}
	}
	return true
}

// TestRoundTrip: host to device and back gives the same bytes, for both
// formats, odd pitches on the host side and odd sizes.
func TestRoundTrip(t *testing.T) {
	c := gpu(t)
	s := stream(t, c)
	for _, f := range formats {
		for _, sz := range [][2]int{{1920, 1080}, {98, 62}, {2, 2}, {4096, 2160}} {
			for _, extra := range []int{0, 3, 77} {
				name := fmt.Sprintf("%v/%dx%d/+%d", f, sz[0], sz[1], extra)
				src := hostFrame(f, sz[0], sz[1], extra, int64(sz[0]+extra))
				dev, err := cuda.NewFrame(c, f, sz[0], sz[1])
				must(t, err)
				must(t, dev.Upload(s, src))
				out := hostFrame(f, sz[0], sz[1], extra*2+1, 99)
				must(t, dev.Download(s, out))
				if !sameRows(src, out) {
					t.Errorf("%s: bytes differ after the round trip (device pitch %d)", name, dev.Pitch)
				}
				if out.PTS != src.PTS || out.TimeBase != src.TimeBase {
					t.Errorf("%s: metadata %v %v", name, out.PTS, out.TimeBase)
				}
				// Device to device, then back.
				dev2, err := cuda.NewFrame(c, f, sz[0], sz[1])
				must(t, err)
				must(t, dev.WaitWritten(s))
				for p := 0; p < 2; p++ {
					must(t, s.Copy2D(cuda.DeviceRegion(dev2.Plane[p], dev2.Pitch), cuda.DeviceRegion(dev.Plane[p], dev.Pitch), dev.RowBytes(), dev.Height>>p))
				}
				must(t, dev2.MarkWritten(s))
				out2 := hostFrame(f, sz[0], sz[1], 0, 98)
				must(t, dev2.Download(s, out2))
				if !sameRows(src, out2) {
					t.Errorf("%s: bytes differ after a device-to-device copy", name)
				}
				dev.Release()
				dev2.Release()
			}
		}
	}
}

// TestUploaderModes: the four raw-source modes' primitives deliver the
// exact bytes, and the ordering event keeps a picture written into the
// block from overwriting one still being copied.
func TestUploaderModes(t *testing.T) {
	c := gpu(t)
	s := stream(t, c)
	for _, f := range formats {
		const w, h, n = 642, 362, 12 // rows of 642 samples: not a multiple of any alignment
		size := f.Size(w, h)
		pics := make([][]byte, n)
		for i := range pics {
			pics[i] = bytes.Repeat([]byte{byte(i * 17)}, size)
			for j := i; j < size; j += 101 {
				pics[i][j] = byte(j)
			}
		}
		resident, err := c.HostAlloc(size*n, cuda.HostPortable)
		must(t, err)
		for i, p := range pics {
			copy(resident.Bytes()[i*size:], p)
		}
		for _, mode := range []string{"pinned", "pinned-wc", "hwupload", "resident"} {
			pool, err := cuda.NewFramePool(c, f, w, h, n)
			must(t, err)
			flags := cuda.HostFlags(0)
			if mode == "pinned-wc" {
				flags = cuda.HostWriteCombined
			}
			u, err := cuda.NewUploader(pool, flags)
			must(t, err)
			var frames []*cuda.Frame
			for i, p := range pics {
				var fr *cuda.Frame
				switch mode {
				case "pinned", "pinned-wc":
					buf, err := u.Buffer()
					must(t, err)
					copy(buf, p)
					fr, err = u.Upload()
					must(t, err)
				case "hwupload":
					fr, err = u.UploadPageable(p)
					must(t, err)
				case "resident":
					fr, err = u.UploadFrom(resident, i*size)
					must(t, err)
				}
				frames = append(frames, fr)
			}
			for i, fr := range frames {
				out, _ := frame.New(f, w, h)
				must(t, fr.Download(s, out))
				if !bytes.Equal(out.Bytes(), pics[i]) {
					t.Errorf("%v %s: picture %d differs after the upload", f, mode, i)
				}
				must(t, fr.ReleaseAfter(s))
			}
			must(t, u.Close())
			if pool.Allocated() != n {
				t.Errorf("%v %s: pool allocated %d frames for %d pictures", f, mode, pool.Allocated(), n)
			}
			pool.Close()
		}
		must(t, resident.Free())
	}
}

// TestFramePool: the cap holds, frames come back, steady state allocates
// nothing.
func TestFramePool(t *testing.T) {
	c := gpu(t)
	s := stream(t, c)
	p, err := cuda.NewFramePool(c, frame.NV12, 64, 32, 2)
	must(t, err)
	defer p.Close()
	a, err := p.Get(s)
	must(t, err)
	b, err := p.Get(s)
	must(t, err)
	if _, err := p.Get(s); !errors.Is(err, cuda.ErrExhausted) {
		t.Fatalf("third Get of a pool of 2: %v", err)
	}
	a.Retain()
	a.Release()
	must(t, a.ReleaseAfter(s))
	b.Release()
	if p.Free() != 2 || p.Allocated() != 2 {
		t.Fatalf("free %d, allocated %d", p.Free(), p.Allocated())
	}
	allocs := testing.AllocsPerRun(100, func() {
		fr, err := p.Get(s)
		if err != nil {
			t.Fatal(err)
		}
		fr.ReleaseAfter(s)
	})
	if allocs != 0 {
		t.Errorf("Get and ReleaseAfter allocate %.1f times", allocs)
	}
	if p.Allocated() != 2 {
		t.Errorf("allocated %d", p.Allocated())
	}
}

// gpuScene uploads a scene's sources with an Uploader (as sources will)
// and returns the frames.
func gpuSources(t testing.TB, c *cuda.Context, f frame.Format, srcs []*frame.Frame) ([]*cuda.Frame, func()) {
	var frames []*cuda.Frame
	var ups []*cuda.Uploader
	var pools []*cuda.FramePool
	for _, h := range srcs {
		if h.Alpha != nil { // a keyed picture: its alpha plane goes too
			pool, err := cuda.NewAlphaFramePool(c, f, h.Width, h.Height, 1)
			must(t, err)
			u, err := cuda.NewUploader(pool, 0) // closed with the rest; Upload copies here
			must(t, err)
			fr, err := pool.Get(u.Stream())
			must(t, err)
			must(t, fr.Upload(u.Stream(), h))
			frames, ups, pools = append(frames, fr), append(ups, u), append(pools, pool)
			continue
		}
		pool, err := cuda.NewFramePool(c, f, h.Width, h.Height, 1)
		must(t, err)
		u, err := cuda.NewUploader(pool, 0)
		must(t, err)
		buf, err := u.Buffer()
		must(t, err)
		copy(buf, h.Bytes())
		fr, err := u.Upload()
		must(t, err)
		fr.MetaFrom(h)
		frames = append(frames, fr)
		ups = append(ups, u)
		pools = append(pools, pool)
	}
	return frames, func() {
		for i := range frames {
			frames[i].Release()
			ups[i].Close()
			pools[i].Close()
		}
	}
}

// TestCompositorMatchesCPU draws every scene on the GPU and compares with
// package cpu (and with the host run of the same kernel code): identical
// without resampling, at least 50 dB per plane with it.
func TestCompositorMatchesCPU(t *testing.T) {
	c := gpu(t)
	s := stream(t, c)
	comp, err := cuda.NewCompositor(s)
	must(t, err)
	defer comp.Close()
	exact, total := 0, 0
	for _, f := range formats {
		for _, sc := range scenes() {
			var srcs []*frame.Frame
			for i, so := range sc.sources {
				srcs = append(srcs, newSource(t, f, so, int64(i+1)))
			}
			want := sc.render(t, f, srcs)
			frames, done := gpuSources(t, c, f, srcs)
			dst, err := cuda.NewFrame(c, f, sc.w, sc.h)
			must(t, err)
			must(t, comp.Draw(dst, sc.cudaLayers(frames)))
			got, _ := frame.New(f, sc.w, sc.h)
			must(t, dst.Download(s, got))
			name := fmt.Sprintf("%v/%s", f, sc.name)
			compare(t, name, want, got, sc.scaled)
			total++
			if d0, _, _ := planeDiff(want, got, 0); d0 == 0 {
				if d1, _, _ := planeDiff(want, got, 1); d1 == 0 {
					exact++
				}
			}
			dst.Release()
			done()
		}
	}
	t.Logf("%d of %d scenes byte-identical to package cpu", exact, total)
}

func TestTransitionsMatchCPU(t *testing.T) {
	c := gpu(t)
	s := stream(t, c)
	comp, err := cuda.NewCompositor(s)
	must(t, err)
	defer comp.Close()
	for _, f := range formats {
		from, to := newSource(t, f, source{1920, 1080, false}, 1), newSource(t, f, source{1920, 1080, false}, 2)
		frames, done := gpuSources(t, c, f, []*frame.Frame{from, to})
		for _, tc := range transitionCases {
			name := fmt.Sprintf("%v/%v@%v", f, tc.t, tc.progress)
			want, _ := frame.New(f, 1920, 1080)
			must(t, cpu.Transition(playout.Kind(tc.t), want, from, to, tc.progress))
			dst, err := cuda.NewFrame(c, f, 1920, 1080)
			must(t, err)
			must(t, comp.Transition(dst, frames[0], frames[1], tc.t, tc.progress))
			got, _ := frame.New(f, 1920, 1080)
			must(t, dst.Download(s, got))
			compare(t, name, want, got, false)
			checkMeta(t, name, want, got)
			dst.Release()
		}
		done()
	}
}

// gridLayers places n×n 1080p sources in a grid over a 1080p canvas.
func gridLayers(frames []*cuda.Frame, n int) []cuda.Layer {
	sc := scene{w: 1920, h: 1080}
	for i := 0; i < n*n; i++ {
		sc.sources = append(sc.sources, source{1920, 1080, false})
		sc.layers = append(sc.layers, sceneLayer{src: i, rect: rectOf(i%n*1920/n, i/n*1080/n, 1920/n, 1080/n), opacity: 1})
	}
	return sc.cudaLayers(frames)
}

// TestDrawAllocatesNothing: a steady draw allocates no Go memory.
func TestDrawAllocatesNothing(t *testing.T) {
	c := gpu(t)
	s := stream(t, c)
	comp, err := cuda.NewCompositor(s)
	must(t, err)
	defer comp.Close()
	var srcs []*frame.Frame
	for i := 0; i < 4; i++ {
		srcs = append(srcs, newSource(t, frame.NV12, source{1920, 1080, false}, int64(i)))
	}
	frames, done := gpuSources(t, c, frame.NV12, srcs)
	defer done()
	pool, err := cuda.NewFramePool(c, frame.NV12, 1920, 1080, 4)
	must(t, err)
	defer pool.Close()
	layers := gridLayers(frames, 2)
	draw := func() {
		dst, err := pool.Get(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := comp.Draw(dst, layers); err != nil {
			t.Fatal(err)
		}
		dst.ReleaseAfter(s)
	}
	draw()
	if a := testing.AllocsPerRun(50, draw); a != 0 {
		t.Errorf("a steady draw allocates %.1f times", a)
	}
	must(t, s.Synchronize())
}
