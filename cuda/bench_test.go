package cuda_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
)

// BenchmarkDraw draws a 1080p canvas of 4 (2x2) and 16 (4x4) 1080p sources
// scaled into a grid: the GPU time of one draw (events around each draw)
// and the CPU time the draw call costs (planning, waits, the launch).
func BenchmarkDraw(b *testing.B) {
	c := gpu(b)
	for _, f := range formats {
		for _, n := range []int{2, 4} {
			b.Run(fmt.Sprintf("%v/%dlayers", f, n*n), func(b *testing.B) {
				benchDraw(b, c, f, n)
			})
		}
	}
}

func benchDraw(b *testing.B, c *cuda.Context, f frame.Format, n int) {
	s := stream(b, c)
	comp, err := cuda.NewCompositor(s)
	must(b, err)
	defer comp.Close()
	var srcs []*frame.Frame
	for i := 0; i < n*n; i++ {
		srcs = append(srcs, newSource(b, f, source{1920, 1080, false}, int64(i)))
	}
	frames, done := gpuSources(b, c, f, srcs)
	defer done()
	runDraws(b, c, s, comp, f, gridLayers(frames, n))
}

// BenchmarkDrawKeyed draws a 1080p scene with n full-frame 1080p browser
// graphics over it (1:1, the usual lower third): keyed with their alpha
// planes, and, for comparison, without (opaque, over black: the draw
// before keying, key = "none").
func BenchmarkDrawKeyed(b *testing.B) {
	c := gpu(b)
	for _, f := range formats {
		for _, n := range []int{1, 4} {
			for _, keyed := range []bool{true, false} {
				b.Run(fmt.Sprintf("%v/%dgraphics/keyed=%v", f, n, keyed), func(b *testing.B) {
					s := stream(b, c)
					comp, err := cuda.NewCompositor(s)
					must(b, err)
					defer comp.Close()
					srcs := []*frame.Frame{newSource(b, f, source{1920, 1080, false}, 1)}
					for i := 0; i < n; i++ {
						srcs = append(srcs, newSource(b, f, source{1920, 1080, keyed}, int64(i+2)))
					}
					frames, done := gpuSources(b, c, f, srcs)
					defer done()
					var layers []cuda.Layer
					full := cuda.Rect{W: 1920, H: 1080}
					for _, fr := range frames {
						layers = append(layers, cuda.Layer{Frame: fr, Crop: full, Dst: full, Opacity: 1})
					}
					runDraws(b, c, s, comp, f, layers)
				})
			}
		}
	}
}

// runDraws draws layers onto 1080p canvases b.N times and reports the GPU
// time of a draw (events around each) and the CPU time of the Draw call.
func runDraws(b *testing.B, c *cuda.Context, s *cuda.Stream, comp *cuda.Compositor, f frame.Format, layers []cuda.Layer) {
	pool, err := cuda.NewFramePool(c, f, 1920, 1080, 4)
	must(b, err)
	defer pool.Close()
	const batch = 32
	var starts, ends [batch]*cuda.Event
	for i := range starts {
		starts[i], err = c.NewEvent(0)
		must(b, err)
		ends[i], err = c.NewEvent(0)
		must(b, err)
		defer starts[i].Close()
		defer ends[i].Close()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var gpuTime, cpuTime time.Duration
	draws := 0
	flush := func(k int) {
		must(b, s.Synchronize())
		for i := 0; i < k; i++ {
			d, err := ends[i].Since(starts[i])
			must(b, err)
			gpuTime += d
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % batch
		dst, err := pool.Get(s)
		must(b, err)
		must(b, starts[k].Record(s))
		t0 := cuda.ThreadCPU()
		err = comp.Draw(dst, layers)
		cpuTime += cuda.ThreadCPU() - t0
		must(b, err)
		must(b, ends[k].Record(s))
		must(b, dst.ReleaseAfter(s))
		draws++
		if k == batch-1 {
			flush(batch)
		}
	}
	flush(b.N % batch)
	b.ReportMetric(float64(gpuTime.Microseconds())/float64(draws), "gpu-µs/draw")
	b.ReportMetric(float64(cpuTime.Nanoseconds())/1e3/float64(draws), "cpu-µs/draw")
}

// BenchmarkEventWait: what waiting for the GPU costs the waiting CPU
// thread. Each wait is for a kernel that keeps the GPU busy 500 µs:
// cpu-µs/wait is the thread's CPU time during the wait, wall-µs/wait the
// wait's length. The context's sched decides how Synchronize waits on a
// default event (spin or blocking-sync); an event made with
// EventBlockingSync sleeps whatever the context says. (An event loop that
// polls instead pays BenchmarkEventQuery per poll.) A context's sched is
// fixed when it starts, so each case starts its own: run this benchmark
// alone (-test.bench EventWait), before anything else holds the context.
func BenchmarkEventWait(b *testing.B) {
	if _, err := cuda.Probe(); err != nil {
		b.Skipf("no usable GPU (cuda): %v", err)
	}
	for _, m := range []struct {
		name  string
		sched cuda.Sched
		flags cuda.EventFlags
	}{
		{"ctx-spin", cuda.SchedSpin, 0},
		{"ctx-blocking-sync", cuda.SchedBlockingSync, 0},
		{"ctx-spin/event-blocking-sync", cuda.SchedSpin, cuda.EventBlockingSync},
	} {
		b.Run(m.name, func(b *testing.B) {
			if active, err := cuda.PrimaryActive(); err != nil || active {
				b.Skipf("GPU: the primary context already runs in this process (%v), so its sched cannot change: run -test.bench EventWait on its own", err)
			}
			c, err := cuda.NewContext(m.sched)
			must(b, err)
			defer c.Close()
			s, err := c.NewStream()
			must(b, err)
			defer s.Close()
			e, err := c.NewEvent(m.flags | cuda.EventDisableTiming)
			must(b, err)
			defer e.Close()
			must(b, s.Busy(time.Microsecond)) // load the kernels first
			must(b, s.Synchronize())
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var cpu, wall time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				must(b, s.Busy(500*time.Microsecond))
				must(b, e.Record(s))
				t0, w0 := cuda.ThreadCPU(), time.Now()
				must(b, e.Synchronize())
				cpu += cuda.ThreadCPU() - t0
				wall += time.Since(w0)
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/wait")
			b.ReportMetric(float64(wall.Nanoseconds())/1e3/float64(b.N), "wall-µs/wait")
		})
	}
}

// BenchmarkEventQuery: the CPU cost of one poll of an event that has
// happened (what an event loop pays per check).
func BenchmarkEventQuery(b *testing.B) {
	c := gpu(b)
	s := stream(b, c)
	e, err := c.NewEvent(cuda.EventDisableTiming)
	must(b, err)
	defer e.Close()
	must(b, e.Record(s))
	must(b, e.Synchronize())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if done, err := e.Query(); err != nil || !done {
			b.Fatal(done, err)
		}
	}
}

// BenchmarkUploader: 1080p NV12 pictures through an Uploader, each mode's
// whole cost per picture: pinned copies the picture from Go memory into
// the block first; block uploads what is already in it (direct: the file
// read lands there); pageable is hwupload; resident uploads from a
// page-locked copy of 30 pictures.
func BenchmarkUploader(b *testing.B) {
	c := gpu(b)
	const w, h = 1920, 1080
	size := frame.NV12.Size(w, h)
	src := make([]byte, size)
	for i := range src {
		src[i] = byte(i)
	}
	resident, err := c.HostAlloc(size*30, 0)
	must(b, err)
	defer resident.Free()
	for _, mode := range []string{"pinned", "block", "block-wc", "pageable", "resident"} {
		b.Run(mode, func(b *testing.B) {
			pool, err := cuda.NewFramePool(c, frame.NV12, w, h, 8)
			must(b, err)
			defer pool.Close()
			flags := cuda.HostFlags(0)
			if mode == "block-wc" {
				flags = cuda.HostWriteCombined
			}
			u, err := cuda.NewUploader(pool, flags)
			must(b, err)
			defer u.Close()
			b.SetBytes(int64(size))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var fr *cuda.Frame
				switch mode {
				case "pinned", "block", "block-wc":
					buf, err := u.Buffer()
					must(b, err)
					if mode == "pinned" {
						copy(buf, src)
					}
					fr, err = u.Upload()
					must(b, err)
				case "pageable":
					fr, err = u.UploadPageable(src)
					must(b, err)
				case "resident":
					fr, err = u.UploadFrom(resident, i%30*size)
					must(b, err)
				}
				must(b, fr.ReleaseAfter(u.Stream()))
			}
			must(b, u.Stream().Synchronize())
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/frame")
		})
	}
}

// BenchmarkPeerCopy copies 1080p frames from the primary context to a
// stand-in for a second GPU (a context of onair's own on device 0), as a
// show on several GPUs does once per tick for each frame crossing: the
// GPU time of one copy (the Peer's own events), the CPU time of the Copy
// call, and the bytes a second.
func BenchmarkPeerCopy(b *testing.B) {
	c := gpu(b)
	c2, err := cuda.NewOwnContext(0, cuda.SchedBlockingSync)
	must(b, err)
	defer c2.Close()
	for _, f := range formats {
		b.Run(f.String(), func(b *testing.B) {
			p, err := cuda.NewPeer(c, c2)
			must(b, err)
			src, err := cuda.NewFrame(c, f, 1920, 1080)
			must(b, err)
			defer src.Release()
			s := stream(b, c)
			must(b, src.Fill(s))
			must(b, src.MarkWritten(s))
			pool, err := cuda.NewFramePool(c2, f, 1920, 1080, 0)
			must(b, err)
			defer pool.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				dst, err := pool.Get(nil)
				must(b, err)
				t0 := cuda.ThreadCPU()
				must(b, p.Copy(dst, src))
				cpu += cuda.ThreadCPU() - t0
				dst.Release()
			}
			must(b, p.Close()) // waits for the copies; times the last
			n, bytes := p.Counts()
			b.SetBytes(bytes / n)
			b.ReportMetric(float64(p.GPUTime().Microseconds())/float64(n), "gpu-µs/copy")
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(n), "cpu-µs/copy")
		})
	}
}
