//go:build unix

package cpu

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/playout"
)

// vsCase is one picture drawn by the compositor (or a transition) and by
// ffmpeg from the same raw frames.
type vsCase struct {
	name    string
	sources int // distinct 1080p source frames
	layers  func(src []*frame.Frame) []Layer
	trans   playout.Kind // a transition of sources 0 and 1 instead of layers
	graph   string       // ffmpeg's -filter_complex over inputs [0] … [sources-1]
}

func gridCase(n int) vsCase {
	w, h := 1920/n, 1080/n
	var g, stack, layout strings.Builder
	for i := 0; i < n*n; i++ {
		fmt.Fprintf(&g, "[%d]scale=%d:%d:flags=area[s%d];", i, w, h, i)
		fmt.Fprintf(&stack, "[s%d]", i)
		if i > 0 {
			layout.WriteByte('|')
		}
		fmt.Fprintf(&layout, "%d_%d", (i%n)*w, (i/n)*h)
	}
	fmt.Fprintf(&g, "%sxstack=inputs=%d:layout=%s", stack.String(), n*n, layout.String())
	return vsCase{
		name: fmt.Sprintf("grid%dx%d", n, n), sources: n * n, graph: g.String(),
		layers: func(src []*frame.Frame) []Layer {
			ls := make([]Layer, n*n)
			for i := range ls {
				ls[i] = Layer{Frame: src[i], Rect: frame.Rect{X: (i % n) * w, Y: (i / n) * h, W: w, H: h}, Opacity: 1}
			}
			return ls
		},
	}
}

// vsCases are issue 29's scenes on a 1080p canvas from 1080p sources.
var vsCases = []vsCase{
	gridCase(2), // each cell a 2:1 shrink
	gridCase(4), // each cell a 4:1 shrink
	{
		name: "pip", sources: 2, // a full-frame layer (a copy) and a 4:1 picture in picture
		graph: "[1]scale=480:270:flags=area[p];[0][p]overlay=1380:60",
		layers: func(src []*frame.Frame) []Layer {
			return []Layer{
				{Frame: src[0], Rect: frame.Rect{W: 1920, H: 1080}, Opacity: 1},
				{Frame: src[1], Rect: frame.Rect{X: 1380, Y: 60, W: 480, H: 270}, Opacity: 1, Z: 1},
			}
		},
	},
	{name: "fade", sources: 2, trans: playout.Fade, graph: "[0][1]xfade=transition=fade:duration=60:offset=0"},
	{name: "wipe", sources: 2, trans: playout.Wipe, graph: "[0][1]xfade=transition=wipeleft:duration=60:offset=0"},
}

// ffmpegCPU caches ffmpeg's figure per sub-benchmark: the benchmark
// function runs several times with growing b.N, ffmpeg once.
var ffmpegCPU sync.Map // name -> time.Duration per frame

// BenchmarkVersusFFmpeg draws issue 29's scenes (1080p canvas, 1080p
// sources, NV12 and P010) with one Compositor (Transition for the fade
// and the wipe) and has ffmpeg do the same work on the same frames as raw
// input files: its CPU per frame is the difference between a long run and
// a short one (so its start-up cancels), read from the child's rusage.
// Reported: onair's and ffmpeg's CPU milliseconds per output frame, their
// ratio, and onair's allocations per frame. CPU time rather than wall
// time, because the machine is shared. Skipped without ffmpeg.
func BenchmarkVersusFFmpeg(b *testing.B) {
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		b.Skip("ffmpeg is not installed")
	}
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		for _, tc := range vsCases {
			name := tc.name + "/" + f.String()
			b.Run(name, func(b *testing.B) {
				src := make([]*frame.Frame, tc.sources)
				for i := range src {
					src[i] = pattern(b, f, media.Pattern(i%4), 1920, 1080, uint16(i+1), i)
				}
				dst, _ := frame.New(f, 1920, 1080)
				var draw func()
				if tc.layers != nil {
					c, layers := NewCompositor(), tc.layers(src)
					draw = func() { c.Render(dst, layers) }
				} else {
					draw = func() { Transition(tc.trans, dst, src[0], src[1], 0.37) }
				}
				draw()
				per, ok := ffmpegCPU.Load(name)
				if !ok {
					per = ffmpegPerFrame(b, ff, f, src, tc.graph)
					ffmpegCPU.Store(name, per)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					draw()
				}
				b.StopTimer()
				onair := float64((cpuTime() - cpu0).Nanoseconds()) / float64(b.N)
				ffns := float64(per.(time.Duration).Nanoseconds())
				b.ReportMetric(onair/1e6, "cpu-ms/frame")
				b.ReportMetric(ffns/1e6, "ffmpeg-cpu-ms/frame")
				b.ReportMetric(onair/ffns, "x-ffmpeg")
				b.ReportMetric(testing.AllocsPerRun(3, draw), "allocs/frame")
			})
		}
	}
}

// ffmpegPerFrame writes src as one-frame raw files and runs ffmpeg's graph
// over them, looped, to a null output: the CPU (user + system, from the
// child's rusage) of a 150-frame run less a 30-frame run's, per frame.
func ffmpegPerFrame(b *testing.B, ff string, f frame.Format, src []*frame.Frame, graph string) time.Duration {
	b.Helper()
	dir := b.TempDir()
	pix := map[frame.Format]string{frame.NV12: "nv12", frame.P010: "p010le"}[f]
	var args []string
	for i, fr := range src {
		path := filepath.Join(dir, "src"+strconv.Itoa(i)+".raw")
		file, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := fr.WriteTo(file); err != nil {
			b.Fatal(err)
		}
		if err := file.Close(); err != nil {
			b.Fatal(err)
		}
		args = append(args, "-stream_loop", "-1", "-f", "rawvideo", "-pix_fmt", pix, "-s", "1920x1080", "-framerate", "30", "-i", path)
	}
	run := func(frames int) time.Duration {
		cmd := exec.Command(ff, append(append([]string{"-hide_banner", "-nostdin", "-v", "error"}, args...),
			"-filter_complex", graph, "-frames:v", strconv.Itoa(frames), "-f", "null", "-")...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("ffmpeg %v: %v\n%s", cmd.Args, err, out)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	const short, long = 30, 150
	return (run(long) - run(short)) / (long - short)
}
