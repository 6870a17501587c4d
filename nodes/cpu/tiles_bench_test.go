package cpu

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onairhq/onair/runtime"
)

// BenchmarkWatchedTiles runs examples/cpu-demo.hcl (four sources, a
// Program and an AUX bus: 640x360 at 30 fps) for two seconds per iteration
// while the page's tiles are watched as the page asks for them, and
// reports the whole process's CPU in % of one core: with no tile watched;
// with 8 watched at 5 fps (the page before issue 28: every tile at one
// rate); and with the multiviewer's 8 (the Program monitor at 25 fps, the
// Preview monitor's four sources at 10, the AUX bus and two source tiles at 5).
// Each watch is one State.Snapshot call at the tile's rate, as GET
// /snapshot/NAME?fps=N makes it.
func BenchmarkWatchedTiles(b *testing.B) {
	dir := b.TempDir()
	src, err := os.ReadFile("../../examples/cpu-demo.hcl")
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "cpu-demo.hcl")
	os.WriteFile(path, src, 0o644)
	os.MkdirAll(filepath.Join(dir, "media"), 0o755)
	for i, id := range []uint16{3, 4} {
		writeClip(b, filepath.Join(dir, "media", "clip"+string(rune('0'+i))+".nv12"), id, 60)
	}
	p := compile(b, path, nil)
	srcs := []string{"source.bars", "source.checker", "source.clip[0]", "source.clip[1]"}
	type watch struct {
		name string
		fps  int
	}
	cases := []struct {
		name  string
		tiles []watch
	}{
		{"none", nil},
		{"8-tiles-at-5fps", []watch{{"bus.pgm", 5}, {"bus.mon", 5}, {srcs[0], 5}, {srcs[1], 5}, {srcs[2], 5}, {srcs[3], 5}, {"bus.pgm", 5}, {"bus.mon", 5}}},
		{"multiviewer", []watch{{"bus.pgm", 25}, {srcs[0], 10}, {srcs[1], 10}, {srcs[2], 10}, {srcs[3], 10}, {"bus.mon", 5}, {srcs[0], 5}, {srcs[1], 5}}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var cpu float64
			for i := 0; i < b.N; i++ {
				s := startShow(b, p)
				stop := make(chan struct{})
				done := make(chan struct{}, len(c.tiles))
				for _, w := range c.tiles {
					go func() {
						defer func() { done <- struct{}{} }()
						tk := time.NewTicker(time.Second / time.Duration(w.fps))
						defer tk.Stop()
						for {
							s.State.Snapshot(w.name, w.fps) // errors (not ready yet) are the page's retry
							select {
							case <-stop:
								return
							case <-tk.C:
							}
						}
					}()
				}
				time.Sleep(500 * time.Millisecond) // past start-up and the first snapshots
				sampler := runtime.NewCPUSampler()
				time.Sleep(2 * time.Second)
				cpu += sampler.Sample().CPUPercent
				close(stop)
				for range c.tiles {
					<-done
				}
				s.Stop()
			}
			b.ReportMetric(cpu/float64(b.N), "cpu%")
		})
	}
}
