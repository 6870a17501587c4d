package cuda_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/cpu"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
	"github.com/onairhq/onair/nodes/media/ipc"
	"github.com/onairhq/onair/nodes/show"
)

// TestTheCUDABackendRunsBrowserSources: both browser kinds are the CUDA
// backend's (what `onair nodes` and plan read), without a GPU.
func TestTheCUDABackendRunsBrowserSources(t *testing.T) {
	for _, k := range []string{"ipc_dmabuf_source", "gpu_import"} {
		if !slices.Contains(nodecuda.Kinds(), k) {
			t.Errorf("the CUDA backend does not run %s", k)
		}
	}
}

func fdCount(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// importRig is a real receiver and producer over a socket: the buffers the
// importer gets are the ones a show gets.
type importRig struct {
	r      *ipc.Receiver
	p      *ipc.Producer
	frames chan *ipc.Frame
	served chan error
}

func newImportRig(t testing.TB, pic ipc.Picture, alloc func(int) (ipc.BufferMemory, error)) *importRig {
	dir, err := os.MkdirTemp("", "oair")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "gfx.sock")
	r, err := ipc.Listen(ipc.ReceiverConfig{Path: path, FramesInFlight: 9, Memories: []ipc.Memory{ipc.MemoryHost, ipc.MemoryCUDA}})
	if err != nil {
		t.Fatal(err)
	}
	g := &importRig{r: r, frames: make(chan *ipc.Frame, 16), served: make(chan error, 1)}
	go func() { g.served <- r.Serve(func(f *ipc.Frame) { g.frames <- f }) }()
	if g.p, err = ipc.DialWait(ipc.ProducerConfig{Socket: path, Picture: pic, Alloc: alloc, Name: "test"}, 30*time.Second); err != nil {
		r.Close()
		t.Fatal(err)
	}
	return g
}

func (g *importRig) close(t testing.TB) {
	g.r.Close()
	if err := <-g.served; err != nil {
		t.Error(err)
	}
	<-g.p.Done()
	g.p.Close()
}

// send paints src into a buffer (host or device memory) and returns the
// frame onair received.
func (g *importRig) send(t testing.TB, s *gpu.Stream, src []byte, seq uint64) *ipc.Frame {
	b, err := g.p.Acquire(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := b.Device().(*gpu.SharedMemory); ok {
		must(t, s.CopyHtoD(m.Ptr, src))
		must(t, s.Synchronize())
	} else {
		copy(b.Pixels(), src)
	}
	must(t, g.p.Send(b, seq, 0))
	select {
	case f := <-g.frames:
		return f
	case <-time.After(30 * time.Second):
		t.Fatal("no frame arrived")
	}
	return nil
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestGPUImportIsTheCPUConverter imports producers' buffers (memfds,
// page-locked or not, and exported CUDA memory) into the CUDA importer and
// checks every converted frame is, byte for byte, what the CPU converter
// makes of the same picture, alpha plane included where the picture has
// alpha; that the device compositor keys it over a scene (1:1 and scaled,
// opaque and fading) byte for byte as package cpu's does; every import is
// released and no descriptor is left open.
func TestGPUImportIsTheCPUConverter(t *testing.T) {
	needGPU(t)
	c, err := gpu.NewContext(gpu.SchedBlockingSync)
	must(t, err)
	defer c.Close()
	s, err := c.NewStream()
	must(t, err)
	defer s.Close()
	painter, err := nodecuda.NewGPUPainter(c)
	must(t, err)
	defer painter.Close()
	fds := fdCount(t)
	pics := []struct {
		f ipc.PixelFormat
		a ipc.Alpha
	}{{ipc.BGRA, ipc.AlphaPremultiplied}, {ipc.BGRA, ipc.AlphaStraight}, {ipc.RGBA, ipc.AlphaOpaque}, {ipc.NV12, ipc.AlphaOpaque}}
	memories := []struct {
		name     string
		mem      ipc.Memory
		register bool
	}{{"memfd", ipc.MemoryHost, false}, {"memfd-registered", ipc.MemoryHost, true}, {"cuda", ipc.MemoryCUDA, false}}
	for _, m := range memories {
		for _, pc := range pics {
			pic := ipc.NewPicture(pc.f, pc.a, 642, 362)
			pic.Memory = m.mem
			var alloc func(int) (ipc.BufferMemory, error)
			if m.mem == ipc.MemoryCUDA {
				alloc = painter.Painter().Alloc
			}
			g := newImportRig(t, pic, alloc)
			for _, out := range []frame.Format{frame.NV12, frame.P010} {
				t.Run(fmt.Sprintf("%s/%v-%v/%v", m.name, pc.f, pc.a, out), func(t *testing.T) {
					im, err := nodecuda.NewImporter(c, out, nil, m.register)
					must(t, err)
					im.Key = true
					defer im.Close()
					newFrame := frame.New
					if browser.HasAlpha(pic) {
						newFrame = frame.NewAlpha
					}
					for seq := uint64(1); seq <= 3; seq++ {
						src := make([]byte, pic.Size)
						rnd := rand.New(rand.NewPCG(seq, uint64(pc.f)))
						for i := range src {
							src[i] = byte(rnd.Uint32())
						}
						f := g.send(t, s, src, seq)
						mp, err := im.Import(f.Buffer)
						if err != nil {
							f.Release()
							t.Fatal(err)
						}
						got, err := im.Convert(mp, f.Buffer)
						f.Release()
						must(t, err)
						dev := got.(*gpu.Frame)
						if (dev.Alpha != 0) != browser.HasAlpha(pic) {
							t.Fatalf("a %v %v picture converted into a frame with alpha plane %#x", pc.f, pc.a, dev.Alpha)
						}
						host, _ := newFrame(out, pic.Width, pic.Height)
						must(t, dev.Download(s, host))
						want, _ := newFrame(out, pic.Width, pic.Height)
						must(t, browser.ToCanvas(want, src, pic))
						for p := 0; p < 2; p++ {
							if !bytes.Equal(host.Data[p], want.Data[p]) {
								t.Fatalf("frame %d, plane %d: the GPU's conversion differs from the CPU converter's", seq, p)
							}
						}
						if !bytes.Equal(host.Alpha, want.Alpha) {
							t.Fatalf("frame %d: the GPU's alpha plane differs from the CPU converter's", seq)
						}
						if seq == 1 {
							keyBoth(t, c, s, dev, want)
						}
						got.Release()
						must(t, im.Release(mp))
					}
				})
			}
			g.close(t)
		}
	}
	if n := fdCount(t); n != fds {
		t.Errorf("%d descriptors open after every import was released, %d before", n, fds)
	}
}

// keyBoth draws the converted picture (on the device, and as the CPU
// converted it) over a scene of noise with the device compositor and with
// package cpu's, 1:1 and scaled, opaque and fading, and checks the two
// canvases are the same bytes.
func keyBoth(t *testing.T, c *gpu.Context, s *gpu.Stream, dev *gpu.Frame, host *frame.Frame) {
	t.Helper()
	const W, H = 640, 360
	bg, _ := frame.New(host.Format, W, H)
	rnd := rand.New(rand.NewPCG(9, 9))
	for p := range bg.Data {
		for i := range bg.Data[p] {
			bg.Data[p][i] = byte(rnd.Uint32())
		}
	}
	if host.Format == frame.P010 { // stored samples keep their low six bits clear, as decoders write them
		for p := range bg.Data {
			for i, v := range bg.Plane16(p) {
				bg.Plane16(p)[i] = v &^ 63
			}
		}
	}
	dbg, err := gpu.NewFrame(c, host.Format, W, H)
	must(t, err)
	defer dbg.Release()
	must(t, dbg.Upload(s, bg))
	comp, err := gpu.NewCompositor(s)
	must(t, err)
	defer comp.Close()
	for _, l := range []struct {
		name    string
		rect    frame.Rect
		opacity float64
	}{
		{"1:1", frame.Rect{W: host.Width, H: host.Height}, 1},
		{"1:1-fading", frame.Rect{X: -2, Y: 4, W: host.Width, H: host.Height}, 0.45},
		{"scaled", frame.Rect{X: 20, Y: 10, W: 500, H: 280}, 1},
		{"scaled-fading", frame.Rect{X: 100, Y: 200, W: 1280, H: 720}, 0.7},
	} {
		want, _ := frame.New(host.Format, W, H)
		must(t, cpu.NewCompositor().Render(want, []cpu.Layer{
			{Frame: bg, Rect: frame.Rect{W: W, H: H}, Opacity: 1},
			{Frame: host, Rect: l.rect, Opacity: l.opacity},
		}))
		p := frame.Place(dev.Width, dev.Height, frame.Rect{}, l.rect, frame.Stretch)
		full := gpu.Rect{W: W, H: H}
		dst, err := gpu.NewFrame(c, host.Format, W, H)
		must(t, err)
		must(t, comp.Draw(dst, []gpu.Layer{
			{Frame: dbg, Crop: full, Dst: full, Opacity: 1},
			{Frame: dev, Crop: gpu.Rect(p.Crop), Dst: gpu.Rect(p.Dst), Pad: gpu.Rect(p.Pad), Opacity: l.opacity},
		}))
		got, _ := frame.New(host.Format, W, H)
		must(t, dst.Download(s, got))
		dst.Release()
		for pl := 0; pl < 2; pl++ {
			if !bytes.Equal(got.Data[pl], want.Data[pl]) {
				t.Errorf("%s: plane %d of the device compositor's canvas differs from package cpu's", l.name, pl)
			}
		}
	}
}

const gpuBrowserShow = `
show {
  name       = "gfx-gpu"
  size       = "640x360"
  frame_rate = "30"
}
source "browser" "gfx" {
  socket = "gfx.sock"
}
scene "gfx" {
  layer {
    source = source.gfx
  }
}
bus "program" "pgm" {
  scene = scene.gfx
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`

// TestPatternProducerOnTheCUDABackend runs `onair producer -pattern`'s
// producer, with memfds and with CUDA buffers, into a show on the GPU,
// twice each: the recording carries the frame numbers in order, each
// buffer was imported once and every import released at stop, and the
// second run leaves exactly the descriptors the first left (the driver
// keeps its own device files open once a context started; nothing of the
// buffers may stay).
func TestPatternProducerOnTheCUDABackend(t *testing.T) {
	needGPU(t)
	for _, onGPU := range []bool{false, true} {
		t.Run(map[bool]string{false: "memfd", true: "cuda"}[onGPU], func(t *testing.T) {
			var after []string
			for run := 1; run <= 2; run++ {
				patternShowOnce(t, onGPU)
				now := fdTargets(t)
				if run == 2 && !slices.Equal(now, after) {
					t.Errorf("descriptors after the first run %v, after the second %v: the second left %d more", after, now, len(now)-len(after))
				}
				after = now
			}
		})
	}
}

// fdTargets lists what this process's descriptors point at, sorted.
func fdTargets(t testing.TB) []string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	var out []string
	for _, e := range ents {
		l, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

func patternShowOnce(t *testing.T, onGPU bool) {
	dir, err := os.MkdirTemp("", "oair")
	must(t, err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "show.hcl")
	must(t, os.WriteFile(path, []byte(gpuBrowserShow), 0o644))
	cfg := browser.PatternConfig{Socket: filepath.Join(dir, "gfx.sock"), Width: 640, Height: 360, MaxIdle: 2, Name: "pattern"}
	if onGPU {
		c, err := gpu.NewContext(gpu.SchedBlockingSync)
		must(t, err)
		defer c.Close()
		painter, err := nodecuda.NewGPUPainter(c)
		must(t, err)
		defer painter.Close()
		cfg.Painter = painter.Painter()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var st browser.PatternStats
	done := make(chan error, 1)
	go func() { done <- browser.RunPattern(ctx, cfg, &st) }()
	sum := runShow(t, path, nil, func(sum show.Summary) bool { return recorded(t, sum, "output.pgm") >= 60 })
	cancel()
	must(t, <-done)
	var last uint32
	numbered := 0
	for i, f := range readY4M(t, filepath.Join(dir, "pgm.y4m")) {
		n := browser.PatternNumber(f)
		if n == 0 {
			continue
		}
		if n < last {
			t.Fatalf("picture %d of the recording is frame %d, after frame %d", i, n, last)
		}
		last, numbered = n, numbered+1
	}
	if numbered < 30 {
		t.Errorf("%d numbered pictures in the recording", numbered)
	}
	bs := sum.Sources[0].Browser
	if bs == nil {
		t.Fatal("no browser counts in the summary")
	}
	t.Logf("frames %d, buffers %d, imports %d, releases %d; producer made %d, destroyed %d", bs.Frames, bs.Buffers, bs.Imports, bs.ImportReleases, st.Created.Load(), st.Destroyed.Load())
	if bs.Imports != bs.Buffers || bs.ImportsLive != 0 || bs.ImportReleases != bs.Imports {
		t.Errorf("%d imports for %d buffers, %d live and %d released after stop", bs.Imports, bs.Buffers, bs.ImportsLive, bs.ImportReleases)
	}
}

// BenchmarkImportMemfd measures what page-locking a memfd buffer
// (cuMemHostRegister) costs at import and saves at each conversion: 1080p
// BGRA, premultiplied, to NV12. Reported: µs per conversion (the copy to
// the device, the kernel, the wait), µs per import and per release.
func BenchmarkImportMemfd(b *testing.B) {
	if _, err := gpu.Probe(); err != nil {
		b.Skipf("no GPU: %v", err)
	}
	c, err := gpu.NewContext(gpu.SchedBlockingSync)
	must(b, err)
	defer c.Close()
	pic := ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, 1920, 1080)
	for _, register := range []bool{false, true} {
		b.Run(map[bool]string{false: "pageable", true: "registered"}[register], func(b *testing.B) {
			g := newImportRig(b, pic, nil)
			defer g.close(b)
			// A registration the driver refuses is logged: the figures are then pageable.
			im, err := nodecuda.NewImporter(c, frame.NV12, slog.New(slog.NewTextHandler(os.Stderr, nil)), register)
			must(b, err)
			defer im.Close()
			f := g.send(b, nil, make([]byte, pic.Size), 1)
			defer f.Release()
			var imports, releases time.Duration
			const cycles = 5
			for range cycles { // import and release: what churn costs
				t0 := time.Now()
				mp, err := im.Import(f.Buffer)
				must(b, err)
				t1 := time.Now()
				must(b, im.Release(mp))
				imports, releases = imports+t1.Sub(t0), releases+time.Since(t1)
			}
			mp, err := im.Import(f.Buffer)
			must(b, err)
			defer im.Release(mp)
			b.ResetTimer()
			for range b.N {
				out, err := im.Convert(mp, f.Buffer)
				must(b, err)
				out.Release()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/convert")
			b.ReportMetric(float64(imports.Microseconds())/cycles, "µs/import")
			b.ReportMetric(float64(releases.Microseconds())/cycles, "µs/release")
		})
	}
}
