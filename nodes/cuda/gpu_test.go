package cuda_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/audio"
	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/showtest"
	"github.com/onairhq/onair/nodes/cpu"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/mediatest"
	"github.com/onairhq/onair/nodes/show"
)

// needGPU skips a test where no GPU is usable (CI has none; `make
// test-gpu` runs these on the GPU machine).
func needGPU(t *testing.T) {
	t.Helper()
	if _, err := gpu.Probe(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
}

// runShow compiles the show at path for the CUDA backend, runs it until
// done says the summary is enough (or a minute passes), and stops it.
func runShow(t *testing.T, path string, during func(show.Summary), done func(show.Summary) bool) show.Summary {
	t.Helper()
	return runShowVars(t, path, nil, during, done)
}

// runShowVars is runShow with the show's variables set (-var name=value).
func runShowVars(t *testing.T, path string, vars map[string]string, during func(show.Summary), done func(show.Summary) bool) show.Summary {
	t.Helper()
	p, dir := showtest.Compile(t, path, vars, &nodecuda.Lowering)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := nodecuda.Start(context.Background(), p, nil, show.Options{BaseDir: dir}, log)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		sum := s.Summary()
		if during != nil {
			during(sum)
		}
		if done(sum) || time.Now().After(deadline) {
			break
		}
		select {
		case <-s.Failed():
			t.Fatalf("the show failed: %v", s.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	return s.Summary()
}

func recorded(t *testing.T, sum show.Summary, addr string) uint64 {
	for _, o := range sum.Outputs {
		if o.Address == addr {
			return o.Written
		}
	}
	t.Fatalf("no output %s", addr)
	return 0
}

func readY4M(t *testing.T, path string) []*frame.Frame { t.Helper(); return showtest.ReadY4M(t, path) }

// writeRaw writes n stamped pattern pictures back to back, a raw file.
func writeRaw(t *testing.T, path string, f frame.Format, p media.Pattern, w, h int, id uint16, n int) [][]byte {
	t.Helper()
	var all []byte
	var pics [][]byte
	for i := 0; i < n; i++ {
		fr, err := mediatest.PatternFrame(f, p, w, h, id, i)
		if err != nil {
			t.Fatal(err)
		}
		pics = append(pics, append([]byte(nil), fr.Bytes()...))
		all = append(all, fr.Bytes()...)
	}
	if err := os.WriteFile(path, all, 0o644); err != nil {
		t.Fatal(err)
	}
	return pics
}

// TestRawUploadModesAreByteExact plays a raw file full-screen in each of
// the four raw_upload modes, NV12 and P010, rewriting one of its pictures
// while it loops: every recorded picture is, byte for byte, one of the
// file's pictures as they were when read, and the rewritten picture shows
// up (resident mode reads the file again when its mtime changes).
func TestRawUploadModesAreByteExact(t *testing.T) {
	needGPU(t)
	const w, h, n = 320, 180, 6
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		for _, mode := range []string{"hwupload", "pinned", "direct", "resident"} {
			t.Run(fmt.Sprintf("%v/%s", f, mode), func(t *testing.T) {
				dir := t.TempDir()
				clip := filepath.Join(dir, "clip.raw")
				pics := writeRaw(t, clip, f, media.Ramp, w, h, 7, n)
				// The picture that replaces picture 2 while the show runs.
				fresh, _ := mediatest.PatternFrame(f, media.Checker, w, h, 9, 2)
				path := filepath.Join(dir, "show.hcl")
				os.WriteFile(path, []byte(fmt.Sprintf(`
show {
  name       = "upload-%[1]s"
  size       = "%[2]dx%[3]d"
  frame_rate = "30"
  format     = "%[4]s"
}
canvas {
  raw_upload = "%[1]s"
}
source "raw_file" "clip" {
  path   = "clip.raw"
  format = "%[4]s"
  loop   = true
}
scene "full" {
  layer { source = source.clip }
}
bus "program" "pgm" { scene = scene.full }
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`, mode, w, h, f)), 0o644)
				rewritten := false
				runShow(t, path, func(sum show.Summary) {
					if !rewritten && recorded(t, sum, "output.pgm") >= 20 {
						fd, err := os.OpenFile(clip, os.O_WRONLY, 0)
						if err != nil {
							t.Fatal(err)
						}
						fd.WriteAt(fresh.Bytes(), int64(2*len(fresh.Bytes())))
						fd.Close()
						later := time.Now().Add(time.Second)
						os.Chtimes(clip, later, later) // a new mtime even on a coarse clock
						rewritten = true
					}
				}, func(sum show.Summary) bool { return recorded(t, sum, "output.pgm") >= 60 })
				got := readY4M(t, filepath.Join(dir, "pgm.y4m"))
				if len(got) < 60 {
					t.Fatalf("%d pictures recorded, want 60", len(got))
				}
				var sawFresh int
				for i, g := range got {
					b := g.Bytes()
					switch {
					case bytes.Equal(b, fresh.Bytes()):
						sawFresh++
					default:
						found := false
						for _, p := range pics {
							found = found || bytes.Equal(b, p)
						}
						if !found {
							t.Fatalf("recorded picture %d is none of the file's pictures", i)
						}
					}
				}
				if sawFresh == 0 {
					t.Errorf("the picture rewritten in the file never showed (40 pictures after the rewrite)")
				}
			})
		}
	}
}

// TestShowMatchesCPUBackend runs a show with scaled layers of test
// patterns and a raw file on the GPU, reads the source pictures each
// recorded picture shows from their stamps, draws the same pictures with
// the CPU backend's compositor, and wants the same bytes.
func TestShowMatchesCPUBackend(t *testing.T) {
	needGPU(t)
	const W, H = 640, 360
	dir := t.TempDir()
	writeRaw(t, filepath.Join(dir, "clip.nv12"), frame.NV12, media.Checker, 1280, 720, 7, 10)
	path := filepath.Join(dir, "show.hcl")
	os.WriteFile(path, []byte(`
show {
  name       = "match"
  size       = "640x360"
  frame_rate = "30"
}
canvas {
  raw_upload = "direct"
}
source "test_pattern" "bars" {
  pattern = "bars"
  size    = "1920x1080"
}
source "test_pattern" "ramp" {
  pattern = "ramp"
  size    = "640x360"
}
source "raw_file" "clip" {
  path = "clip.nv12"
  size = "1280x720"
  loop = true
}
scene "grid" {
  layer {
    source = source.bars
    rect   = [0, 0, 320, 180]
  }
  layer {
    source = source.ramp
    rect   = [320, 0, 320, 180]
  }
  layer {
    source = source.clip
    rect   = [0, 180, 320, 180]
  }
  layer {
    source = source.bars
    rect   = [320, 180, 320, 180]
    fit    = "contain"
  }
}
bus "program" "pgm" { scene = scene.grid }
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`), 0o644)
	runShow(t, path, nil, func(sum show.Summary) bool { return recorded(t, sum, "output.pgm") >= 30 })
	got := readY4M(t, filepath.Join(dir, "pgm.y4m"))
	type layer struct {
		pattern media.Pattern
		w, h    int
		rect    frame.Rect
		fit     frame.Fit
		flashes bool // a test_pattern with its line-up tone flashes once a second; the raw clip does not
	}
	layers := []layer{
		{media.Bars, 1920, 1080, frame.Rect{X: 0, Y: 0, W: 320, H: 180}, frame.Stretch, true},
		{media.Ramp, 640, 360, frame.Rect{X: 320, Y: 0, W: 320, H: 180}, frame.Stretch, true},
		{media.Checker, 1280, 720, frame.Rect{X: 0, Y: 180, W: 320, H: 180}, frame.Stretch, false},
		{media.Bars, 1920, 1080, frame.Rect{X: 320, Y: 180, W: 320, H: 180}, frame.Contain, true},
	}
	comp := cpu.NewCompositor()
	want, _ := frame.New(frame.NV12, W, H)
	compared := 0
	for i, g := range got {
		var cl []cpu.Layer
		ok := true
		for _, l := range layers {
			region := frame.Place(l.w, l.h, frame.Rect{}, l.rect, l.fit).Dst
			id, n, stamped := media.ReadStamp(g, region)
			if !stamped {
				ok = false
				break
			}
			src, err := mediatest.PatternFrame(frame.NV12, l.pattern, l.w, l.h, id, int(n))
			if err != nil {
				t.Fatal(err)
			}
			if l.flashes && audio.Flashes(int64(n), 30, 1) {
				media.DrawFlash(src)
			}
			cl = append(cl, cpu.Layer{Frame: src, Rect: l.rect, Fit: l.fit, Opacity: 1})
		}
		if !ok {
			if i < 3 {
				continue // the first pictures may be black while the bus goes on air
			}
			t.Fatalf("picture %d: a layer's stamp does not read", i)
		}
		if err := comp.Render(want, cl); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g.Bytes(), want.Bytes()) {
			t.Fatalf("picture %d differs from the CPU backend's drawing of the same source pictures", i)
		}
		compared++
	}
	if compared < 25 {
		t.Fatalf("only %d of %d pictures compared", compared, len(got))
	}
}

// TestNVDECShowMatchesFFmpeg plays the committed HEVC and H.264 clips
// (Annex B and MPEG-TS, 8- and 10-bit) looping, each full screen on an AUX
// bus recorded to a file, with every routing and decoder placement: every
// recorded picture is, byte for byte, the frame ffmpeg's software decoder
// makes at that point of the clip (es/testdata/reference.md5), in order
// across the loop (a repeated picture is allowed, a skipped one is not).
// nvdec_parser = "onair" is checked where it applies (nvdec_file: input
// routing on decode loops); the second and later passes of every clip come
// from its recording (es.Recordings).
func TestNVDECShowMatchesFFmpeg(t *testing.T) {
	needGPU(t)
	clips := filepath.Join("..", "media", "es", "testdata")
	ref := map[string][]string{}
	b, err := os.ReadFile(filepath.Join(clips, "reference.md5"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var name, sum string
		var i int
		if n, _ := fmt.Sscanf(line, "%s %d %s", &name, &i, &sum); n == 3 && !strings.HasPrefix(name, "#") {
			ref[name] = append(ref[name], sum)
		}
	}
	shows := []struct {
		format string
		clips  map[string]string // clip: source kind
	}{
		{"nv12", map[string]string{"hevc8.hevc": "hevc_file", "h264.264": "h264_file", "hevc8.ts": "hevc_file", "h264.ts": "h264_file"}},
		{"p010", map[string]string{"hevc10.hevc": "hevc_file", "hevc10.ts": "hevc_file"}},
	}
	type canvas struct{ routing, placement, parser string }
	canvases := []canvas{{"input", "decode_loops", "nvidia"}, {"input", "decode_loops", "onair"}, {"input", "thread", "nvidia"},
		{"demux", "decode_loops", "nvidia"}, {"demux", "thread", "nvidia"}}
	for _, cv := range canvases {
		routing, placement := cv.routing, cv.placement
		for _, sh := range shows {
			t.Run(fmt.Sprintf("%s/%s/%s/%s", routing, placement, cv.parser, sh.format), func(t *testing.T) {
				dir := t.TempDir()
				var hcl strings.Builder
				fmt.Fprintf(&hcl, "show {\n  name = \"nvdec\"\n  size = \"640x360\"\n  frame_rate = \"30\"\n  format = %q\n}\n", sh.format)
				fmt.Fprintf(&hcl, "canvas {\n  input_routing = %q\n  decoder_placement = %q\n  nvdec_parser = %q\n  decode_loops = 2\n}\n", routing, placement, cv.parser)
				var names []string
				for clip := range sh.clips {
					names = append(names, clip)
				}
				sort.Strings(names)
				for i, clip := range names {
					abs, _ := filepath.Abs(filepath.Join(clips, clip))
					fmt.Fprintf(&hcl, "source %q \"s%d\" {\n  path = %q\n  format = %q\n  size = \"640x360\"\n  loop = true\n}\n", sh.clips[clip], i, abs, sh.format)
					fmt.Fprintf(&hcl, "bus \"aux\" \"a%d\" {\n  source = source.s%d\n}\n", i, i)
					fmt.Fprintf(&hcl, "output \"record\" \"r%d\" {\n  bus = bus.a%d\n  path = \"r%d.y4m\"\n}\n", i, i, i)
				}
				fmt.Fprintf(&hcl, "scene \"one\" {\n  layer { source = source.s0 }\n}\nbus \"program\" \"pgm\" { scene = scene.one }\n")
				path := filepath.Join(dir, "show.hcl")
				if err := os.WriteFile(path, []byte(hcl.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				const want, settle = 75, 10 // two loops and a half; the pacers settle in the first pictures
				runShow(t, path, nil, func(sum show.Summary) bool {
					for i := range names {
						if recorded(t, sum, fmt.Sprintf("output.r%d", i)) < want {
							return false
						}
					}
					return true
				})
				for i, clip := range names {
					got := readY4M(t, filepath.Join(dir, fmt.Sprintf("r%d.y4m", i)))
					if len(got) < want {
						t.Fatalf("%s: %d pictures recorded, want %d", clip, len(got), want)
					}
					idx := map[string]int{}
					for k, s := range ref[clip] {
						idx[s] = k
					}
					prev, repeats := -1, 0
					for j, g := range got {
						sum := fmt.Sprintf("%x", md5.Sum(g.Bytes()))
						k, ok := idx[sum]
						switch {
						case !ok:
							t.Fatalf("%s: recorded picture %d is no frame ffmpeg decodes from the clip", clip, j)
						case j <= settle: // a pacer may skip late pictures as the show starts
						case k == prev:
							repeats++
						case k != (prev+1)%len(ref[clip]):
							t.Fatalf("%s: recorded picture %d is frame %d, after frame %d", clip, j, k, prev)
						}
						prev = k
					}
					t.Logf("%s: %d pictures byte-exact, %d repeated", clip, len(got), repeats)
				}
			})
		}
	}
}

// TestNVDECExampleDecodeMix runs examples/decode-mix.hcl as a user would on
// the GPU: HEVC and H.264 from Annex B and MPEG-TS files, each on NVDEC on
// the decode loop, a 2x2 grid on Program and one source on an AUX bus, both
// recorded; 0 missed deadlines on both buses, every source delivering
// pictures. (internal/cli runs the same file on the CPU backend.)
func TestNVDECExampleDecodeMix(t *testing.T) {
	needGPU(t)
	dir := t.TempDir()
	sum := runShowVars(t, filepath.Join("..", "..", "examples", "decode-mix.hcl"), map[string]string{"out": dir}, nil, func(sum show.Summary) bool {
		return recorded(t, sum, "output.pgm") >= 150 && recorded(t, sum, "output.ts") >= 150
	})
	if len(sum.Buses) != 2 {
		t.Fatalf("%d buses, want 2", len(sum.Buses))
	}
	for _, b := range sum.Buses {
		if b.Ticks < 150 || b.Missed != 0 {
			t.Errorf("%s: %d frames, %d missed deadlines; want 150 or more and 0", b.Address, b.Ticks, b.Missed)
		}
		t.Logf("%s: %d frames, %d missed, %d repeats, %d skipped, longest draw %.1f ms", b.Address, b.Ticks, b.Missed, b.Repeats, b.Skipped, b.Timing.MaxDrawMs)
	}
	if len(sum.Sources) != 4 {
		t.Fatalf("%d sources, want 4", len(sum.Sources))
	}
	for _, s := range sum.Sources {
		if s.Paced < 150 || s.Errors != 0 {
			t.Errorf("%s: %d pictures paced, %d errors (%s); want 150 or more and none", s.Address, s.Paced, s.Errors, s.LastError)
		}
	}
}

// TestNVDECSourceRecoversItsFile: an HEVC source whose file is missing, on
// a decode loop beside a healthy one, reports it and sends black while the
// Program bus keeps its deadlines; once the file is there it plays it,
// frame numbers counting on, and its error clears. With frame_metadata =
// ["decode_time", "input_rec_time"] its frames carry both moments.
func TestNVDECSourceRecoversItsFile(t *testing.T) {
	needGPU(t)
	dir := t.TempDir()
	clip, _ := filepath.Abs(filepath.Join("..", "media", "es", "testdata", "hevc8.hevc"))
	os.WriteFile(filepath.Join(dir, "show.hcl"), []byte(fmt.Sprintf(`
show {
  name       = "recover"
  size       = "640x360"
  frame_rate = "30"
}
canvas {
  decode_loops   = 1
  frame_metadata = ["decode_time", "input_rec_time"]
}
source "hevc_file" "ok" {
  path = %q
  size = "640x360"
  loop = true
}
source "hevc_file" "late" {
  path = "late.hevc"
  size = "640x360"
  loop = true
}
scene "both" {
  layer { source = source.ok }
  layer {
    source = source.late
    rect   = [320, 180, 320, 180]
  }
}
bus "program" "pgm" { scene = scene.both }
output "null" "pgm" { bus = bus.pgm }
`, clip)), 0o644)
	var sawErr, copied bool
	var recoveredAt uint64
	sum := runShow(t, filepath.Join(dir, "show.hcl"), func(s show.Summary) {
		late := s.Sources[0] // sources in address order: source.late, source.ok
		switch {
		case !copied && late.LastError != "" && s.Buses[0].Ticks >= 30:
			sawErr = strings.Contains(late.LastError, "late.hevc")
			data, _ := os.ReadFile(clip)
			os.WriteFile(filepath.Join(dir, "late.tmp"), data, 0o644)
			os.Rename(filepath.Join(dir, "late.tmp"), filepath.Join(dir, "late.hevc"))
			copied = true
		case copied && recoveredAt == 0 && late.LastError == "":
			recoveredAt = late.Produced
		}
	}, func(s show.Summary) bool { return recoveredAt > 0 && s.Sources[0].Produced >= recoveredAt+30 })
	if !sawErr || recoveredAt == 0 {
		t.Fatalf("missing file reported: %v; recovered: %v (%+v)", sawErr, recoveredAt > 0, sum.Sources)
	}
	if b := sum.Buses[0]; b.Missed != 0 {
		t.Errorf("the Program bus missed %d deadlines while a source recovered", b.Missed)
	}
	for _, src := range sum.Sources {
		if _, ok := src.StampAgesMs["decode_time"]; !ok {
			t.Errorf("%s: no decode_time stamp: %v", src.Address, src.StampAgesMs)
		}
		if age, ok := src.StampAgesMs["input_rec_time"]; !ok || age < src.StampAgesMs["decode_time"] {
			t.Errorf("%s: input_rec_time %v not before decode_time: %v", src.Address, ok, src.StampAgesMs)
		}
	}
}

// TestNVDECBadFilesKeepTheShowOnAir: beside a healthy HEVC source on the
// same decode loop, a file cut in the middle of an access unit, a file
// with a run of garbage over its middle, and a file whose stream turns
// from 8-bit to 10-bit half way play in one scene for five seconds: the
// Program bus misses no deadline, every source keeps sending pictures
// (decoded, or black while it waits to try again), the format change is
// reported in words that say what changed, and the healthy source reports
// nothing. What the truncated and corrupt files reported is logged.
func TestNVDECBadFilesKeepTheShowOnAir(t *testing.T) {
	needGPU(t)
	dir := t.TempDir()
	es := filepath.Join("..", "media", "es", "testdata")
	h8, err := os.ReadFile(filepath.Join(es, "hevc8.hevc"))
	if err != nil {
		t.Fatal(err)
	}
	h10, err := os.ReadFile(filepath.Join(es, "hevc10.hevc"))
	if err != nil {
		t.Fatal(err)
	}
	corrupt := append([]byte(nil), h8...)
	x := uint32(2463534242)
	for i := len(corrupt) * 2 / 5; i < len(corrupt)/2; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		corrupt[i] = byte(x)
	}
	files := map[string][]byte{
		"ok.hevc":        h8,
		"truncated.hevc": h8[:len(h8)*3/5+7],
		"corrupt.hevc":   corrupt,
		"changes.hevc":   append(append([]byte(nil), h8...), h10...),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "show.hcl"), []byte(`
show {
  name       = "bad-files"
  size       = "1280x720"
  frame_rate = "30"
}
canvas { decode_loops = 1 }
source "hevc_file" "ok" {
  path = "ok.hevc"
  size = "640x360"
  loop = true
}
source "hevc_file" "truncated" {
  path = "truncated.hevc"
  size = "640x360"
  loop = true
}
source "hevc_file" "corrupt" {
  path = "corrupt.hevc"
  size = "640x360"
  loop = true
}
source "hevc_file" "changes" {
  path = "changes.hevc"
  size = "640x360"
  loop = true
}
scene "four" {
  layer { source = source.ok }
  layer {
    source = source.truncated
    rect   = [640, 0, 640, 360]
  }
  layer {
    source = source.corrupt
    rect   = [0, 360, 640, 360]
  }
  layer {
    source = source.changes
    rect   = [640, 360, 640, 360]
  }
}
bus "program" "pgm" { scene = scene.four }
output "null" "pgm" { bus = bus.pgm }
`), 0o644)
	sum := runShow(t, filepath.Join(dir, "show.hcl"), nil, func(s show.Summary) bool { return s.Buses[0].Ticks >= 150 })
	if b := sum.Buses[0]; b.Ticks < 150 || b.Missed != 0 {
		t.Errorf("Program: %d frames, %d missed deadlines; want 150 or more and 0", b.Ticks, b.Missed)
	}
	by := map[string]show.SourceSummary{}
	for _, s := range sum.Sources {
		by[s.Address] = s
		t.Logf("%s: %d pictures, %d errors, last error %q", s.Address, s.Produced, s.Errors, s.LastError)
		if s.Produced < 120 {
			t.Errorf("%s sent %d pictures in 5 s; want every tick's (120 or more)", s.Address, s.Produced)
		}
	}
	if e := by["source.ok"].LastError; e != "" {
		t.Errorf("the healthy source reports %q", e)
	}
	if e := by["source.changes"]; e.Errors == 0 || !strings.Contains(e.LastError, "to 640x360 10-bit") || !strings.Contains(e.LastError, "refuses") {
		t.Errorf("the 8-to-10-bit change was reported as %q (%d errors); want what it changed to", e.LastError, e.Errors)
	}
}
