package cpu

import (
	"bytes"
	"context"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/showtest"
	"github.com/onairhq/onair/plan"
)

// compile loads and compiles a show file for the CPU backend.
func compile(t testing.TB, path string, vars map[string]string) *plan.Plan {
	t.Helper()
	p, dir := showtest.Compile(t, path, vars, &Lowering)
	showDirs.Store(p, dir)
	return p
}

// writeShow writes a show into a new directory and returns its path.
func writeShow(t testing.TB, src string) string { t.Helper(); return showtest.WriteShow(t, "", src) }

// showDirs remembers the directory of the show each compiled plan came from:
// relative paths in a plan are relative to it, and startShow runs the plan
// there, as onair run does.
var showDirs sync.Map // *plan.Plan → string

func startShow(t testing.TB, p *plan.Plan) *show.Show[Frame] { return startShowWith(t, p, nil) }

// startShowWith runs p on the CPU backend, serving planJSON as its plan.
func startShowWith(t testing.TB, p *plan.Plan, planJSON []byte) *show.Show[Frame] {
	t.Helper()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dir, _ := showDirs.Load(p)
	base, _ := dir.(string)
	s, err := show.Start(context.Background(), Backend(), p, planJSON, show.Options{BaseDir: base}, log)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readY4M returns every frame of a Y4M file the record output wrote.
func readY4M(t testing.TB, path string) []*frame.Frame { t.Helper(); return showtest.ReadY4M(t, path) }

// eventBound is how long a test waits for something the show must do.
const eventBound = showtest.EventBound

// waitShow polls the show's summary until cond holds (showtest.Wait).
func waitShow(t testing.TB, s *show.Show[Frame], what string, cond func(show.Summary) bool) show.Summary {
	t.Helper()
	return showtest.Wait(t, s, what, cond)
}

// busOf, sourceOf and outputOf find one bus, source or output of a summary
// by address (the zero value when there is none).
func busOf(sum show.Summary, addr string) show.BusSummary {
	for _, b := range sum.Buses {
		if b.Address == addr {
			return b
		}
	}
	return show.BusSummary{}
}

func sourceOf(sum show.Summary, addr string) show.SourceSummary {
	for _, s := range sum.Sources {
		if s.Address == addr {
			return s
		}
	}
	return show.SourceSummary{}
}

func outputOf(sum show.Summary, addr string) show.OutputSummary {
	for _, o := range sum.Outputs {
		if o.Address == addr {
			return o
		}
	}
	return show.OutputSummary{}
}

// ticksAtLeast holds once the bus at addr has drawn n ticks.
func ticksAtLeast(addr string, n uint64) func(show.Summary) bool {
	return func(sum show.Summary) bool { return busOf(sum, addr).Ticks >= n }
}

const twoSources = `
show {
  name       = "two"
  size       = "320x180"
  frame_rate = "30"
}
canvas {
  pacing_loops  = 2
  input_poll_ms = 8
}
source "test_pattern" "one" {
  pattern = "ramp"
}
source "test_pattern" "two" {
  pattern = "checker"
}
scene "one" {
  layer {
    source = source.one
  }
}
scene "two" {
  layer {
    source = source.two
  }
}
bus "program" "pgm" {
  scene = scene.one
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`

// TestCutLandsWithinAFrameAndNothingIsLostSilently runs a two-source show,
// cuts once it has drawn a second and a half of ticks, stops a second and a
// half of ticks later, then reads the recording back and works out from the
// frame numbers stamped into the pictures alone: that the cut happened
// once, on the first tick drawn after it was asked for (or the one after,
// when a tick was being drawn at that moment), which tick that was, and
// that every repeated or skipped source frame was counted.
//
// Nothing here reads the wall clock: the cut is placed by counting the
// ticks the bus had committed just before and just after the request, so
// the test holds however late a busy machine draws.
func TestCutLandsWithinAFrameAndNothingIsLostSilently(t *testing.T) {
	showPath := writeShow(t, twoSources)
	p := compile(t, showPath, nil)
	s := startShow(t, p)
	waitShow(t, s, "45 ticks of scene.one", ticksAtLeast("bus.pgm", 45))
	before := busOf(s.State.Summary(), "bus.pgm")
	if err := s.Switch("pgm", "two", "cut", 0); err != nil {
		t.Fatal(err)
	}
	after := busOf(s.State.Summary(), "bus.pgm")
	waitShow(t, s, "45 ticks of scene.two", ticksAtLeast("bus.pgm", after.Ticks+45))
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	var b bytes.Buffer
	sum.WriteText(&b)
	t.Logf("summary:\n%s", b.String())

	frames := readY4M(t, filepath.Join(filepath.Dir(showPath), "pgm.y4m"))
	bus, out := sum.Buses[0], sum.Outputs[0]
	if uint64(len(frames)) != out.Written || out.Written+bus.OutputDrops != bus.Ticks {
		t.Fatalf("the recording holds %d frames; the output wrote %d and dropped %d of the bus's %d ticks", len(frames), out.Written, bus.OutputDrops, bus.Ticks)
	}
	// Picture i of the recording is tick FirstTick+i when no deadline was
	// missed and no output dropped a tick; either shifts the rest.
	ids := make([]uint16, len(frames))
	nums := make([]int64, len(frames))
	lead := 0 // leading black ticks, before any source frame was released
	for i, f := range frames {
		id, n, ok := media.ReadStamp(f, frame.Rect{W: f.Width, H: f.Height})
		if !ok {
			if i == lead {
				lead++
				continue
			}
			t.Fatalf("picture %d has no stamp", i)
		}
		ids[i], nums[i] = id, int64(n)
	}
	one, two := s.State.StampID("source.one"), s.State.StampID("source.two")
	cut := -1
	for i := lead; i < len(ids); i++ {
		if ids[i] == two && cut < 0 {
			cut = i
		}
		if cut < 0 && ids[i] != one || cut >= 0 && ids[i] != two {
			t.Fatalf("picture %d shows source %d; want source %d before the cut and %d after, one clean switch", i, ids[i], one, two)
		}
	}
	if cut < 0 {
		t.Fatal("the cut never reached the recording")
	}
	if cut == lead {
		t.Fatal("the recording never showed scene.one")
	}
	// The first tick drawn after the request: the ticks committed before
	// the request showed scene.one, and at most one tick (the one being
	// drawn while Switch ran) may still show it after Switch returned.
	// Ticks an output dropped are not in the recording.
	if lo, hi := int64(before.Ticks)-int64(bus.OutputDrops), int64(after.Ticks)+1; int64(cut) < lo || int64(cut) > hi {
		t.Errorf("the cut is picture %d of the recording; the bus had committed %d ticks when it was asked for and %d when the request returned (%d output drops): not the first tick drawn after the request",
			cut, before.Ticks, after.Ticks, bus.OutputDrops)
	}
	// Both sources release frame n on the show's grid, at tick a+n for an
	// anchor a of their own: read a off the pictures (the most common
	// value of tick - frame number) and the tick of every picture follows.
	anchor := func(from, to int) int64 {
		votes := map[int64]int{}
		best, bestN := int64(0), 0
		for i := from; i < to; i++ {
			a := bus.FirstTick + int64(i) - nums[i]
			if votes[a]++; votes[a] > bestN {
				best, bestN = a, votes[a]
			}
		}
		return best
	}
	a2 := anchor(cut, len(nums))
	cutTick := a2 + nums[cut] // the tick the first picture of source two belongs to
	var underruns uint64
	for _, src := range sum.Sources {
		underruns += src.Underruns
	}
	if len(bus.Cuts) != 1 {
		t.Fatalf("the bus logged %d cuts, want 1: %v", len(bus.Cuts), bus.Cuts)
	}
	// A missed deadline or a dropped tick shifts picture numbers against
	// ticks, and an underrun shifts a source's frame numbers: the tick
	// read off the pictures is exact only on a run without them (on an
	// idle machine, every run). The order above holds on every run.
	if clean := bus.Missed == 0 && bus.OutputDrops == 0 && underruns == 0; clean && bus.Cuts[0].Tick != cutTick {
		t.Errorf("the bus logged the cut on tick %v; the pictures say %d", bus.Cuts, cutTick)
	} else if !clean {
		t.Logf("%d missed deadlines, %d output drops, %d underruns: the tick is not read off the pictures", bus.Missed, bus.OutputDrops, underruns)
	}
	// Frame numbers step by one from picture to picture; a 0 step is a
	// repeat and a bigger one skips frames, and each must have been counted.
	var repeats, skipped uint64
	for i := lead + 1; i < len(nums); i++ {
		if i == cut {
			continue
		}
		switch d := nums[i] - nums[i-1]; {
		case d == 0:
			repeats++
		case d > 1:
			skipped += uint64(d - 1)
		case d < 0:
			t.Fatalf("picture %d shows source frame %d after %d: time went backwards", i, nums[i], nums[i-1])
		}
	}
	var srcDrops uint64
	for _, src := range sum.Sources {
		srcDrops += src.Drops
	}
	if repeats > bus.Repeats {
		t.Errorf("%d repeated pictures in the recording, the bus counted %d repeats", repeats, bus.Repeats)
	}
	if skipped > bus.Skipped+bus.Missed+bus.OutputDrops+srcDrops {
		t.Errorf("%d source frames never shown, the show counted %d skipped, %d missed deadlines, %d output drops, %d source drops", skipped, bus.Skipped, bus.Missed, bus.OutputDrops, srcDrops)
	}
	t.Logf("cut on tick %d (picture %d, %d..%d ticks committed around the request): source frames %d → %d; %d repeats, %d skipped in the recording",
		cutTick, cut, before.Ticks, after.Ticks, nums[cut-1], nums[cut], repeats, skipped)
}

const withMissingFile = `
show {
  name       = "missing"
  size       = "320x180"
  frame_rate = "30"
}
source "raw_file" "gone" {
  path = "no-such-clip.nv12"
}
source "test_pattern" "bars" {
}
scene "both" {
  layer {
    source = source.gone
    rect   = [0, 0, 160, 180]
  }
  layer {
    source = source.bars
    rect   = [160, 0, 160, 180]
  }
}
bus "program" "pgm" {
  scene = scene.both
}
bus "aux" "bars" {
  source = source.bars
}
output "null" "pgm" {
  bus = bus.pgm
}
output "preview" "bars" {
  bus         = bus.bars
  interval_ms = 100
}
`

// TestMissingMediaShowsBlackAndTheShowGoesOn: a raw source whose file is
// missing reports the error and shows black, while both buses go on
// drawing; when the file appears, the source picks it up.
//
// Whether the buses also keep their deadlines meanwhile is a real-time
// property, which a machine busy with other work cannot show:
// BenchmarkSourceFailures measures it.
func TestMissingMediaShowsBlackAndTheShowGoesOn(t *testing.T) {
	showPath := writeShow(t, withMissingFile)
	p := compile(t, showPath, nil)
	s := startShow(t, p)
	mid := waitShow(t, s, "the missing file to be reported", func(sum show.Summary) bool { return sourceOf(sum, "source.gone").Errors > 0 })
	if gone := sourceOf(mid, "source.gone"); gone.LastError == "" || !strings.Contains(gone.LastError, "no-such-clip.nv12") {
		t.Errorf("the missing file was not reported: %+v", gone)
	}
	// The show goes on: both buses draw 30 more ticks while the file is
	// still missing.
	waitShow(t, s, "30 ticks on each bus while a source is missing", func(sum show.Summary) bool {
		for _, b := range mid.Buses {
			if busOf(sum, b.Address).Ticks < b.Ticks+30 {
				return false
			}
		}
		return true
	})
	if gone := sourceOf(s.State.Summary(), "source.gone"); gone.LastError == "" {
		t.Fatalf("source.gone reports no error, yet its file is not there: %+v", gone)
	}
	// Write the file: a few black-and-stamped frames from the generator's
	// own code, and the source must pick it up at its next retry.
	clip := filepath.Join(filepath.Dir(showPath), "no-such-clip.nv12")
	var data []byte
	for _, f := range clipFrames(9, 10) {
		data = append(data, f.Bytes()...)
	}
	if err := os.WriteFile(clip, data, 0o644); err != nil {
		t.Fatal(err)
	}
	waitShow(t, s, "source.gone to pick up its file", func(sum show.Summary) bool {
		src := sourceOf(sum, "source.gone")
		return src.LastError == "" && src.Paced > 0
	})
	waitShow(t, s, "a preview of bus.bars", func(show.Summary) bool { _, ok := s.State.Preview("bars"); return ok })
	if jpg, ok := s.State.Preview("bars"); !ok || len(jpg) < 100 || jpg[0] != 0xFF || jpg[1] != 0xD8 {
		t.Errorf("no JPEG preview of bus.bars (%d bytes)", len(jpg))
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, b := range s.State.Summary().Buses {
		t.Logf("%s: %d ticks, %d missed deadlines", b.Address, b.Ticks, b.Missed)
	}
}

// TestY4MFileAsRawSource plays a Y4M file written by the record output of
// an earlier run as a raw_file source, and checks its frames come through.
func TestY4MFileAsRawSource(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.y4m")
	rec, err := media.CreateRecord(clip, frame.NV12, 320, 180, frame.Rational{Num: 30, Den: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range clipFrames(7, 15) {
		rec.Write(f)
	}
	rec.Close()
	showPath := filepath.Join(dir, "show.hcl")
	os.WriteFile(showPath, []byte(`
show {
  name       = "y4m"
  size       = "320x180"
  frame_rate = "30"
}
source "raw_file" "clip" {
  path = "clip.y4m"
}
scene "clip" {
  layer {
    source = source.clip
  }
}
bus "program" "pgm" {
  scene = scene.clip
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "out.y4m"
}
`), 0o644)
	s := startShow(t, compile(t, showPath, nil))
	// Four passes over the clip's 15 pictures.
	waitShow(t, s, "60 ticks of the clip", func(sum show.Summary) bool {
		return sourceOf(sum, "source.clip").Paced >= 60 && busOf(sum, "bus.pgm").Ticks >= 60
	})
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	frames := readY4M(t, filepath.Join(dir, "out.y4m"))
	seen := map[uint32]bool{}
	shown, wraps := 0, 0
	last := uint32(0)
	for _, f := range frames {
		if id, n, ok := media.ReadStamp(f, frame.Rect{W: 320, H: 180}); ok && id == 7 {
			seen[n] = true
			if shown > 0 && n < last {
				wraps++
			}
			shown, last = shown+1, n
		}
	}
	// The file's 15 pictures all show, and the source loops over them. A
	// picture missing from all four passes must have been counted lost,
	// once a pass.
	sum := s.State.Summary()
	bus, src := busOf(sum, "bus.pgm"), sourceOf(sum, "source.clip")
	lost := bus.Skipped + bus.Missed + bus.OutputDrops + src.Drops
	for n := uint32(0); n < 15; n++ {
		if !seen[n] && lost < 4 {
			t.Errorf("picture %d of the clip never showed, and the show counted %d frames lost", n, lost)
		}
	}
	if wraps == 0 || shown < 20 || len(seen) > 15 {
		t.Fatalf("%d pictures shown, %d distinct, %d loops: %v", shown, len(seen), wraps, seen)
	}
	if src.Errors != 0 {
		t.Fatalf("source errors: %+v", src)
	}
}

// TestStopIsPromptWithLoopCompositors starts and stops a show with an AUX
// bus (a compositor on the default loop) several times; every stop must
// finish at once, with every frame the bus committed written.
func TestStopIsPromptWithLoopCompositors(t *testing.T) {
	p := compile(t, writeShow(t, withMissingFile), nil)
	for i := 0; i < 4; i++ {
		s := startShow(t, p)
		// Stop at a different tick each time.
		waitShow(t, s, "bus.bars to draw", ticksAtLeast("bus.bars", uint64(1+3*i)))
		done := make(chan error, 1)
		go func() { done <- s.Stop() }()
		stuck := time.NewTimer(eventBound)
		select {
		case err := <-done:
			stuck.Stop()
			if err != nil {
				t.Fatal(err)
			}
		case <-stuck.C:
			t.Fatalf("run %d: Stop did not return within %v", i, eventBound)
		}
		for _, b := range s.State.Summary().Buses {
			if b.Address == "bus.bars" {
				var written uint64
				for _, o := range s.State.Summary().Outputs {
					if o.Address == "output.bars" {
						written = o.Written
					}
				}
				if written+b.OutputDrops != b.Ticks {
					t.Errorf("run %d: bus.bars committed %d ticks, its output wrote %d and dropped %d", i, b.Ticks, written, b.OutputDrops)
				}
			}
		}
	}
}

// onErrorShow plays clip.nv12 with on_error = mode and records bus.pgm to
// out.y4m.
func onErrorShow(mode string) string {
	return `
show {
  name       = "onerror"
  size       = "320x180"
  frame_rate = "30"
}
source "raw_file" "clip" {
  path     = "clip.nv12"
  on_error = "` + mode + `"
}
scene "clip" {
  layer {
    source = source.clip
  }
}
bus "program" "pgm" {
  scene = scene.clip
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "out.y4m"
}
`
}

// TestOnErrorHoldsOrBlacks: when a raw file breaks while the show runs, the
// source reports it and shows black, or (on_error = "hold") its last good
// frame, while the bus goes on drawing. (That it keeps its deadlines too is
// BenchmarkSourceFailures' business.)
func TestOnErrorHoldsOrBlacks(t *testing.T) {
	for _, mode := range []string{"black", "hold"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			clip := filepath.Join(dir, "clip.nv12")
			var data []byte
			for _, f := range clipFrames(9, 10) {
				data = append(data, f.Bytes()...)
			}
			os.WriteFile(clip, data, 0o644)
			showPath := filepath.Join(dir, "show.hcl")
			os.WriteFile(showPath, []byte(onErrorShow(mode)), 0o644)
			s := startShow(t, compile(t, showPath, nil))
			waitShow(t, s, "the clip to play", func(sum show.Summary) bool {
				return sourceOf(sum, "source.clip").Paced >= 5 && busOf(sum, "bus.pgm").Ticks >= 5
			})
			os.WriteFile(clip, data[:1000], 0o644) // the file now ends inside its first frame
			broken := waitShow(t, s, "the broken file to be reported", func(sum show.Summary) bool { return sourceOf(sum, "source.clip").Errors > 0 })
			// Frames read before the break may still be on their way: the
			// last ten of twenty ticks drawn after it show what the source
			// does about it.
			waitShow(t, s, "20 ticks after the break", ticksAtLeast("bus.pgm", busOf(broken, "bus.pgm").Ticks+20))
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			sum := s.State.Summary()
			if src := sum.Sources[0]; src.Errors == 0 || !strings.Contains(src.LastError, "clip.nv12") {
				t.Errorf("the broken file was not reported: %+v", src)
			}
			frames := readY4M(t, filepath.Join(dir, "out.y4m"))
			tail := frames[len(frames)-10:]
			for i, f := range tail {
				id, _, ok := media.ReadStamp(f, frame.Rect{W: 320, H: 180})
				if mode == "hold" && (!ok || id != 9) {
					t.Fatalf("picture %d from the end: want the held frame of the clip, got stamp %v %v", 10-i, id, ok)
				}
				if mode == "black" && ok {
					t.Fatalf("picture %d from the end: want black, got the clip's stamp", 10-i)
				}
			}
		})
	}
}

// dyingFFmpegShow has an ffmpeg output whose process ends after a fifth of
// a second, every time.
const dyingFFmpegShow = `
show {
  name       = "ff"
  size       = "320x180"
  frame_rate = "30"
}
source "test_pattern" "bars" {}
scene "bars" {
  layer {
    source = source.bars
  }
}
bus "program" "pgm" {
  scene = scene.bars
}
output "ffmpeg" "short" {
  bus  = bus.pgm
  args = ["-t", "0.2", "-f", "null", "-"]
}
`

// TestFFmpegOutputThatDiesIsRestarted: an ffmpeg output whose process ends
// (here after a fifth of a second, every time) is reported and restarted
// with backoff, and the bus it hangs off goes on drawing meanwhile. (That
// it keeps its deadlines too is BenchmarkSourceFailures' business.)
func TestFFmpegOutputThatDiesIsRestarted(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed")
	}
	showPath := writeShow(t, dyingFFmpegShow)
	s := startShow(t, compile(t, showPath, nil))
	first := waitShow(t, s, "the first restart", func(sum show.Summary) bool { return outputOf(sum, "output.short").Restarts >= 1 })
	waitShow(t, s, "a second restart, and 30 ticks since the first", func(sum show.Summary) bool {
		return outputOf(sum, "output.short").Restarts >= 2 && busOf(sum, "bus.pgm").Ticks >= busOf(first, "bus.pgm").Ticks+30
	})
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	out, bus := sum.Outputs[0], sum.Buses[0]
	if out.Restarts < 2 || out.Errors == 0 || !strings.Contains(out.LastError, "exit") {
		t.Errorf("a dying ffmpeg was not reported and restarted: %+v", out)
	}
	t.Logf("the bus drew %d ticks (%d missed deadlines) while its ffmpeg output died %d times", bus.Ticks, bus.Missed, out.Errors)
}

// clipFrames returns n 320x180 NV12 test-pattern frames stamped with id and
// their frame numbers: the pictures of a clip a test writes to a file.
func clipFrames(id uint16, n int) []*frame.Frame {
	tp, _ := media.NewTestPattern(media.TestPatternConfig{ID: "clip", StampID: id, Width: 320, Height: 180, Rate: frame.Rational{Num: 30, Den: 1}})
	out := make([]*frame.Frame, n)
	for i := range out {
		out[i], _ = frame.New(frame.NV12, 320, 180)
		tp.Next(out[i])
	}
	return out
}
