package cpu

import (
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
	"os"
	"os/exec"
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

// BenchmarkSourceFailures measures what the end-to-end tests of failing
// media leave to a benchmark, because only an idle machine can show it:
// that every bus keeps its deadlines while a source's file is missing
// (TestMissingMediaShowsBlackAndTheShowGoesOn), while a file breaks under a
// playing source (TestOnErrorHoldsOrBlacks), and while an ffmpeg output
// dies again and again (TestFFmpegOutputThatDiesIsRestarted). Each
// iteration starts the show, waits until the failure is reported, then
// counts the deadlines every bus misses over its next 90 ticks (three
// seconds). On an idle machine, missed/run is 0.
func BenchmarkSourceFailures(b *testing.B) {
	cases := []struct {
		name string
		// start writes the show into dir and returns its path; fail breaks
		// what the show plays, once it runs; failed holds once the failure
		// was reported.
		start  func(b *testing.B, dir string) string
		fail   func(dir string)
		failed func(show.Summary) bool
	}{
		{"missing_file",
			func(b *testing.B, dir string) string { return writeShowIn(b, dir, withMissingFile) },
			func(string) {},
			func(sum show.Summary) bool { return sourceOf(sum, "source.gone").Errors > 0 }},
		{"broken_file",
			func(b *testing.B, dir string) string {
				var data []byte
				for _, f := range clipFrames(9, 10) {
					data = append(data, f.Bytes()...)
				}
				os.WriteFile(filepath.Join(dir, "clip.nv12"), data, 0o644)
				return writeShowIn(b, dir, onErrorShow("hold"))
			},
			func(dir string) { os.WriteFile(filepath.Join(dir, "clip.nv12"), make([]byte, 1000), 0o644) },
			func(sum show.Summary) bool { return sourceOf(sum, "source.clip").Errors > 0 }},
		{"dying_ffmpeg",
			func(b *testing.B, dir string) string {
				if _, err := exec.LookPath("ffmpeg"); err != nil {
					b.Skip("ffmpeg not installed")
				}
				return writeShowIn(b, dir, dyingFFmpegShow)
			},
			func(string) {},
			func(sum show.Summary) bool { return outputOf(sum, "output.short").Restarts > 0 }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var missed, ticks uint64
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				s := startShow(b, compile(b, c.start(b, dir), nil))
				waitShow(b, s, "ten ticks", func(sum show.Summary) bool { return sum.Buses[0].Ticks >= 10 })
				c.fail(dir)
				t0 := waitShow(b, s, "the failure to be reported", c.failed)
				t1 := waitShow(b, s, "90 ticks on every bus", func(sum show.Summary) bool {
					for j := range t0.Buses {
						if sum.Buses[j].Ticks < t0.Buses[j].Ticks+90 {
							return false
						}
					}
					return true
				})
				s.Stop()
				for j := range t1.Buses {
					missed += t1.Buses[j].Missed - t0.Buses[j].Missed
					ticks += t1.Buses[j].Ticks - t0.Buses[j].Ticks
				}
			}
			b.ReportMetric(float64(missed)/float64(b.N), "missed/run")
			b.ReportMetric(float64(ticks)/float64(b.N), "ticks/run")
		})
	}
}

// writeShowIn writes a show as dir/show.hcl and returns its path.
func writeShowIn(b *testing.B, dir, src string) string {
	b.Helper()
	p := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}
