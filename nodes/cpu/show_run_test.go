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

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/runtime"
)

// compile loads and compiles a show file for the CPU backend.
func compile(t testing.TB, path string, vars map[string]string) *plan.Plan {
	t.Helper()
	loaded, diags := lang.Load([]string{path}, lang.Options{Vars: vars})
	if diags.HasErrors() {
		var b bytes.Buffer
		lang.WriteDiagnostics(&b, loaded.Files, diags, false)
		t.Fatalf("load %s:\n%s", path, b.String())
	}
	res, cdiags := compiler.Compile(loaded, compiler.Options{Target: &Lowering, ToolVersion: "test"})
	if cdiags.HasErrors() {
		var b bytes.Buffer
		lang.WriteDiagnostics(&b, loaded.Files, cdiags, false)
		t.Fatalf("compile %s:\n%s", path, b.String())
	}
	showDirs.Store(res.Plan, loaded.Dir)
	return res.Plan
}

// writeShow writes a show into a new directory and returns its path.
func writeShow(t testing.TB, src string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

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
func readY4M(t testing.TB, path string) []*frame.Frame {
	t.Helper()
	r, err := media.OpenY4M(path, "rec", false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []*frame.Frame
	for {
		f, err := frame.New(r.Format(), r.Width(), r.Height())
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Next(f); err != nil {
			break
		}
		out = append(out, f)
	}
	return out
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

// TestCutLandsWithinAFrameAndNothingIsLostSilently runs a two-source show
// for three seconds with a cut in the middle, then reads the recording back
// and works out from the frame numbers stamped into the pictures alone:
// which tick each picture belongs to, that the cut happened once, on the
// first tick drawn after it was asked for (within a frame of the request),
// and that every repeated or skipped source frame was counted.
func TestCutLandsWithinAFrameAndNothingIsLostSilently(t *testing.T) {
	showPath := writeShow(t, twoSources)
	p := compile(t, showPath, nil)
	s := startShow(t, p)
	time.Sleep(1500 * time.Millisecond)
	asked := runtime.Now() - s.State.Origin()
	if err := s.Switch("pgm", "two", "cut", 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
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
	if len(frames) < 60 && !raceDetector || len(frames) < 20 {
		t.Fatalf("only %d frames in 3 s", len(frames))
	}
	// Picture i of the recording is tick FirstTick+i when no deadline was
	// missed; a missed deadline shifts the rest.
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
	period := int64(time.Second / 30)
	g := s.State.Grid()
	drawn := g.At(cutTick+2) - s.State.Origin() // its deadline: two periods of latency
	if bus.Missed == 0 && (drawn < asked || drawn > asked+period+period/10) {
		t.Errorf("from the frame numbers the cut is on tick %d, drawn at %v; it was asked for at %v: not the first tick after the request",
			cutTick, time.Duration(drawn), time.Duration(asked))
	}
	if len(bus.Cuts) != 1 || bus.Cuts[0].Tick != cutTick && bus.Missed == 0 {
		t.Errorf("the bus logged the cut on tick %v; the pictures say %d", bus.Cuts, cutTick)
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
	if skipped > bus.Skipped+bus.Missed+srcDrops {
		t.Errorf("%d source frames never shown, the show counted %d skipped, %d missed deadlines, %d source drops", skipped, bus.Skipped, bus.Missed, srcDrops)
	}
	t.Logf("cut on tick %d (picture %d): source frames %d → %d; %d repeats, %d skipped in the recording", cutTick, cut, nums[cut-1], nums[cut], repeats, skipped)
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
// missing reports the error and shows black, while both buses keep drawing
// (and, without the race detector, keep most of their deadlines); when the
// file appears, the source picks it up.
func TestMissingMediaShowsBlackAndTheShowGoesOn(t *testing.T) {
	showPath := writeShow(t, withMissingFile)
	p := compile(t, showPath, nil)
	s := startShow(t, p)
	defer s.Stop()
	gone := func() show.SourceSummary {
		for _, src := range s.State.Summary().Sources {
			if src.Address == "source.gone" {
				return src
			}
		}
		return show.SourceSummary{}
	}
	waitFor(t, 20*time.Second, "the missing file reported", func() bool { return gone().Errors > 0 })
	if g := gone(); !strings.Contains(g.LastError, "no-such-clip.nv12") {
		t.Errorf("the missing file was not reported: %+v", g)
	}
	// Both buses draw on while the file is missing.
	waitFor(t, 30*time.Second, "60 ticks on each bus", func() bool {
		for _, b := range s.State.Summary().Buses {
			if b.Ticks < 60 {
				return false
			}
		}
		return true
	})
	// Write the file: a few black-and-stamped frames from the generator's
	// own code, and the source must recover (it tries once a second).
	clip := filepath.Join(filepath.Dir(showPath), "no-such-clip.nv12")
	var data []byte
	for _, f := range clipFrames(9, 10) {
		data = append(data, f.Bytes()...)
	}
	if err := os.WriteFile(clip, data, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the source to pick up its file", func() bool { return gone().LastError == "" })
	waitFor(t, 20*time.Second, "a preview of bus.bars", func() bool { _, ok := s.State.Preview("bars"); return ok })
	if jpg, ok := s.State.Preview("bars"); !ok || len(jpg) < 100 || jpg[0] != 0xFF || jpg[1] != 0xD8 {
		t.Errorf("no JPEG preview of bus.bars (%d bytes)", len(jpg))
	}
	s.Stop()
	for _, b := range s.State.Summary().Buses {
		// Deadlines are a benchmark's business; here a machine busy with
		// other tests may miss some, and the race detector many, but the
		// show must go on drawing.
		if !raceDetector && b.Missed > b.Ticks/4 {
			t.Errorf("%s missed %d of %d deadlines", b.Address, b.Missed, b.Ticks)
		}
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
	show := filepath.Join(dir, "show.hcl")
	os.WriteFile(show, []byte(`
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
	s := startShow(t, compile(t, show, nil))
	time.Sleep(2 * time.Second)
	s.Stop()
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
	// The file's 15 pictures all show, and the source loops over them.
	if len(seen) != 15 || wraps == 0 || shown < 20 {
		t.Fatalf("%d pictures shown, %d distinct, %d loops: %v", shown, len(seen), wraps, seen)
	}
	if sum := s.State.Summary(); sum.Sources[0].Errors != 0 {
		t.Fatalf("source errors: %+v", sum.Sources[0])
	}
}

// TestStopIsPromptWithLoopCompositors starts and stops a show with an AUX
// bus (a compositor on the default loop) several times; every stop must
// finish at once, with every frame the bus committed written.
func TestStopIsPromptWithLoopCompositors(t *testing.T) {
	p := compile(t, writeShow(t, withMissingFile), nil)
	for i := 0; i < 4; i++ {
		s := startShow(t, p)
		time.Sleep(time.Duration(100+i*37) * time.Millisecond)
		done := make(chan error, 1)
		go func() { done <- s.Stop() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("run %d: Stop did not return within 5 s", i)
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

// TestOnErrorHoldsOrBlacks: when a raw file breaks while the show runs, the
// source reports it and shows black, or (on_error = "hold") its last good
// frame, while the bus keeps its deadlines.
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
			show := filepath.Join(dir, "show.hcl")
			os.WriteFile(show, []byte(`
show {
  name       = "onerror"
  size       = "320x180"
  frame_rate = "30"
}
source "raw_file" "clip" {
  path     = "clip.nv12"
  on_error = "`+mode+`"
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
			s := startShow(t, compile(t, show, nil))
			time.Sleep(700 * time.Millisecond)
			os.WriteFile(clip, data[:1000], 0o644) // the file now ends inside its first frame
			time.Sleep(time.Second)
			s.Stop()
			sum := s.State.Summary()
			if src := sum.Sources[0]; src.Errors == 0 || !strings.Contains(src.LastError, "clip.nv12") {
				t.Errorf("the broken file was not reported: %+v", src)
			}
			// A bus stalled by its broken source would miss nearly every
			// deadline; a busy machine makes it miss a few.
			if b := sum.Buses[0]; b.Missed > b.Ticks/3 && !raceDetector {
				t.Errorf("the bus missed %d of %d deadlines while the source was broken", b.Missed, b.Ticks)
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

// TestFFmpegOutputThatDiesIsRestarted: an ffmpeg output whose process ends
// (here after a fifth of a second, every time) is reported and restarted
// with backoff, and the bus it hangs off keeps its deadlines.
func TestFFmpegOutputThatDiesIsRestarted(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed")
	}
	show := writeShow(t, `
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
`)
	s := startShow(t, compile(t, show, nil))
	time.Sleep(2500 * time.Millisecond)
	s.Stop()
	sum := s.State.Summary()
	out, bus := sum.Outputs[0], sum.Buses[0]
	if out.Restarts == 0 || out.Errors == 0 || !strings.Contains(out.LastError, "exit") {
		t.Errorf("a dying ffmpeg was not reported and restarted: %+v", out)
	}
	if bus.Ticks < 20 || !raceDetector && (bus.Ticks < 50 || bus.Missed > bus.Ticks/10) {
		t.Errorf("the bus drew %d ticks and missed %d while its ffmpeg output died", bus.Ticks, bus.Missed)
	}
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
