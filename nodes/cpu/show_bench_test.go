package cpu

import (
	"github.com/onairhq/onair/nodes/media"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/runtime"
)

// BenchmarkCPUDemo runs examples/cpu-demo.hcl (four 640x360 sources, a
// Program bus with a 2x2 grid, an AUX bus, two Y4M recordings) for two
// seconds per iteration and reports what a steady show costs: heap
// allocations per drawn frame, CPU of the whole process in % of one core,
// and missed deadlines.
func BenchmarkCPUDemo(b *testing.B) {
	dir := b.TempDir()
	src, err := os.ReadFile("../examples/cpu-demo.hcl")
	if err != nil {
		b.Fatal(err)
	}
	show := filepath.Join(dir, "cpu-demo.hcl")
	os.WriteFile(show, src, 0o644)
	os.MkdirAll(filepath.Join(dir, "media"), 0o755)
	for i, id := range []uint16{3, 4} {
		writeClip(b, filepath.Join(dir, "media", "clip"+string(rune('0'+i))+".nv12"), id, 60)
	}
	p := compile(b, show, nil)
	b.ResetTimer()
	var allocs, frames, missed uint64
	var cpu float64
	for i := 0; i < b.N; i++ {
		s := startShow(b, p)
		time.Sleep(300 * time.Millisecond) // past start-up
		sampler := runtime.NewCPUSampler()
		var m0, m1 goruntime.MemStats
		t0 := s.State.Summary() // (Summary allocates: outside the window)
		goruntime.ReadMemStats(&m0)
		time.Sleep(2 * time.Second)
		goruntime.ReadMemStats(&m1)
		t1 := s.State.Summary()
		cpu += sampler.Sample().CPUPercent
		s.Stop()
		for j := range t1.Buses {
			frames += t1.Buses[j].Ticks - t0.Buses[j].Ticks
			missed += t1.Buses[j].Missed - t0.Buses[j].Missed
		}
		allocs += m1.Mallocs - m0.Mallocs
	}
	b.ReportMetric(float64(allocs)/float64(frames), "allocs/frame")
	b.ReportMetric(cpu/float64(b.N), "cpu%")
	b.ReportMetric(float64(missed)/float64(b.N), "missed/run")
}

func writeClip(b *testing.B, path string, id uint16, n int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fr, _ := frame.New(frame.NV12, 640, 360)
	for i := 0; i < n; i++ {
		drawStamped(fr, id, i)
		f.Write(fr.Bytes())
	}
}

func drawStamped(f *frame.Frame, id uint16, n int) {
	media.Draw(f, media.Ramp, int64(n), [3]uint8{}, make([]int32, f.Width))
	media.DrawStamp(f, id, uint32(n))
}
