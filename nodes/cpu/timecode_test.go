package cpu

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/mediatest"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/timecode"
)

// Two test patterns at 29.97 drop-frame, the show's timecode starting at
// 00:59:59;00, so that the run crosses 01:00:00;00 and the minute
// boundaries a drop-frame count skips labels at.
const timecodeShow = `
show {
  name       = "tc"
  size       = "320x180"
  frame_rate = "30000/1001"
}
canvas {
  pacing_loops   = 2
  timecode_start = "00:59:59;00"
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

// TestCutAtATimecodeLandsOnThatTick asks, while the show runs, for a cut
// at the timecode of a tick about a second and a half ahead and a cut
// back at the next tick, records the bus, and reads the recording back:
// the pictures of source two start on exactly the tick the timecode
// names, the bus stamped that tick's timecode in its frames, and the
// as-run log holds every switch the summary reports, asked for and drawn,
// line for line. A request for the tick once it was drawn is refused with
// how late it came; a dropped label (at 29.97 drop-frame) is refused as
// not existing.
func TestCutAtATimecodeLandsOnThatTick(t *testing.T) {
	showPath := writeShow(t, timecodeShow)
	p := compile(t, showPath, nil)
	asRun := filepath.Join(t.TempDir(), "as-run.jsonl")
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := show.Start(context.Background(), Backend(), p, nil, show.Options{BaseDir: filepath.Dir(showPath), AsRun: asRun, Log: log}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	rate := timecode.MustRate(30000, 1001)
	if got := s.State.TimecodeAt(0).String(); got != "00:59:59;00" {
		t.Fatalf("tick 0 is %s, want the show's timecode_start 00:59:59;00", got)
	}
	waitShow(t, s, "15 ticks", ticksAtLeast("bus.pgm", 15))

	// The tick presented now, plus 45: well ahead of the two ticks of
	// latency a bus draws with, however busy the machine.
	st := s.Status().(show.StatusReport).Timecode
	target := st.Tick + 45
	at := s.State.TimecodeAt(target).String()
	if k, err := s.State.TickOf(at); err != nil || k != target {
		t.Fatalf("TickOf(%s) = %d, %v; want tick %d", at, k, err, target)
	}
	if err := s.SwitchAt("pgm", "two", "cut", 0, at, show.OriginCue); err != nil {
		t.Fatal(err)
	}
	waitShow(t, s, "the tick after the cut", func(sum show.Summary) bool {
		b := busOf(sum, "bus.pgm")
		return len(b.Cuts) == 1 && b.Cuts[0].Tick >= 0
	})
	// The tick is drawn: asking for it again is too late, by how much.
	err = s.SwitchAt("pgm", "one", "cut", 0, at, show.OriginCLI)
	if !errors.Is(err, show.ErrConflict) || !strings.Contains(err.Error(), at+" (tick ") || !strings.Contains(err.Error(), "frames (") || !strings.Contains(err.Error(), " ms) late") {
		t.Errorf("a switch for a tick already drawn: %v; want a refusal saying how late it was, in frames and ms", err)
	}
	// 01:01:00;00 and ;01 do not exist at 29.97 drop-frame.
	err = s.SwitchAt("pgm", "one", "cut", 0, "01:01:00;00", show.OriginCLI)
	if !errors.Is(err, show.ErrInvalid) || !strings.Contains(err.Error(), "does not exist at 30000/1001 drop-frame") {
		t.Errorf("a dropped label: %v", err)
	}
	if err := s.SwitchAt("pgm", "one", "cut", 0, "", show.OriginCLI); err != nil {
		t.Fatal(err)
	}
	after := busOf(s.State.Summary(), "bus.pgm")
	waitShow(t, s, "30 ticks after the cut back", ticksAtLeast("bus.pgm", after.Ticks+30))
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	bus, out := busOf(sum, "bus.pgm"), outputOf(sum, "output.pgm")
	if len(bus.Cuts) != 2 {
		t.Fatalf("the bus logged %d switches, want 2: %+v", len(bus.Cuts), bus.Cuts)
	}
	if bus.Cuts[0].Tick != target && bus.Missed == 0 {
		t.Errorf("the cut asked for at %s (tick %d) landed on tick %d, with no deadline missed", at, target, bus.Cuts[0].Tick)
	}
	if bus.Cuts[0].Timecode != at || bus.Cuts[0].At != at || bus.Cuts[0].Origin != show.OriginCue {
		t.Errorf("the cut's record: %+v; want on %s, asked for at %s, from a cue", bus.Cuts[0], at, at)
	}

	// The recording: picture i is tick FirstTick+i while no deadline was
	// missed and no tick dropped (which the summary says).
	frames := readY4M(t, filepath.Join(filepath.Dir(showPath), "pgm.y4m"))
	if uint64(len(frames)) != out.Written {
		t.Fatalf("the recording holds %d frames, the output wrote %d", len(frames), out.Written)
	}
	one, two := s.State.StampID("source.one"), s.State.StampID("source.two")
	first, last := -1, -1
	for i, f := range frames {
		id, _, ok := media.ReadStamp(f, frame.Rect{W: f.Width, H: f.Height})
		if !ok {
			continue // black, before a source's first frame
		}
		switch {
		case id == two && first >= 0 && last != i-1:
			t.Fatalf("source two is back at picture %d after the cut back at %d", i, last+1)
		case id == two:
			if first < 0 {
				first = i
			}
			last = i
		case id != one:
			t.Fatalf("picture %d shows source %d", i, id)
		}
	}
	if first < 0 {
		t.Fatal("source two is never in the recording")
	}
	if clean := bus.Missed == 0 && bus.OutputDrops == 0; clean {
		if tick := bus.FirstTick + int64(first); tick != target {
			t.Errorf("source two's first picture is tick %d (%s), want %d (%s)", tick, rate.Label(rate.Frame(must(rate.Parse(at)))+tick-target), target, at)
		}
		if tick := bus.FirstTick + int64(last) + 1; tick != bus.Cuts[1].Tick {
			t.Errorf("source one is back from tick %d, the bus logged the cut back on %d", tick, bus.Cuts[1].Tick)
		}
	} else {
		t.Logf("%d missed deadlines, %d output drops: picture numbers are not ticks; the switcher's tick is checked above", bus.Missed, bus.OutputDrops)
	}

	// The as-run log: each switch asked for and drawn, as the summary has it.
	lines := readAsRun(t, asRun)
	var asked, drawn []show.AsRunLine
	for _, l := range lines {
		switch l.Event {
		case "switch_asked":
			asked = append(asked, l)
		case "switch_drawn":
			drawn = append(drawn, l)
		case "missed_deadline":
		default:
			t.Errorf("an as-run line %q: nothing else happened", l.Event)
		}
	}
	if len(asked) != len(bus.Cuts) || len(drawn) != len(bus.Cuts) {
		t.Fatalf("the as-run log has %d switches asked for and %d drawn; the summary reports %d: %+v", len(asked), len(drawn), len(bus.Cuts), lines)
	}
	for i, c := range bus.Cuts {
		a, d := asked[i], drawn[i]
		if a.Bus != "bus.pgm" || a.Scene != c.Scene || a.Transition != c.Kind || a.Origin != c.Origin || a.At != c.At {
			t.Errorf("switch %d asked for: the log has %+v, the summary %+v", i, a, c)
		}
		if d.Tick == nil || *d.Tick != c.Tick || d.Timecode != c.Timecode || d.Scene != c.Scene || d.Origin != c.Origin {
			t.Errorf("switch %d drawn: the log has %+v, the summary %+v", i, d, c)
		}
		if d.Timecode != rate.Label(rate.Frame(must(rate.Parse("00:59:59;00")))+c.Tick).String() {
			t.Errorf("switch %d drawn on tick %d at %s: not that tick's timecode", i, c.Tick, d.Timecode)
		}
	}
	if ar := s.State.AsRun().Status(); ar.Lines != uint64(len(lines)) || ar.Lost != 0 {
		t.Errorf("the as-run log says %d lines written, %d lost; the file holds %d", ar.Lines, ar.Lost, len(lines))
	}
}

func must(tc timecode.Timecode, err error) timecode.Timecode {
	if err != nil {
		panic(err)
	}
	return tc
}

// readAsRun reads an as-run log: every line one whole JSON object.
func readAsRun(t testing.TB, path string) []show.AsRunLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []show.AsRunLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l show.AsRunLine
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("as-run line %d %q: %v", len(out)+1, sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

const nullOutShow = `
show {
  name       = "full"
  size       = "320x180"
  frame_rate = "25"
}
source "test_pattern" "one" {}
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
output "null" "pgm" {
  bus = bus.pgm
}
`

// TestAsRunOnAFullDiskKeepsTheShowOnAir fills the as-run log's disk: the
// show stays on air, each line that did not fit is counted in /status and
// /metrics with the error, none is left half written, and once there is
// room again the next lines are written.
func TestAsRunOnAFullDiskKeepsTheShowOnAir(t *testing.T) {
	showPath := writeShow(t, nullOutShow)
	p := compile(t, showPath, nil)
	asRun := filepath.Join(t.TempDir(), "as-run.jsonl")
	disk := mediatest.NewSmallDisk(100) // less than one line
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := show.Start(context.Background(), Backend(), p, nil, show.Options{BaseDir: filepath.Dir(showPath), AsRun: asRun, OpenFile: disk.Open, Log: log}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	lost := func() uint64 { return s.Status().(show.StatusReport).AsRun.Lost }
	for i, sc := range []string{"two", "one", "two"} {
		if err := s.SwitchAt("pgm", sc, "cut", 0, "", show.OriginAPI); err != nil {
			t.Fatal(err)
		}
		waitShow(t, s, "the switch drawn", func(sum show.Summary) bool {
			b := busOf(sum, "bus.pgm")
			return len(b.Cuts) == i+1 && b.Cuts[i].Tick >= 0
		})
	}
	// Asked for and drawn, three times: six lines, none of which fit.
	waitShow(t, s, "six lines lost", func(show.Summary) bool { return lost() >= 6 })
	ticks := busOf(s.State.Summary(), "bus.pgm").Ticks
	waitShow(t, s, "the show on air after the disk filled", ticksAtLeast("bus.pgm", ticks+10))
	st := s.Status().(show.StatusReport).AsRun
	if st.Lines != 0 || !strings.Contains(st.LastError, "no space left on device") {
		t.Errorf("as-run status on a full disk: %+v", st)
	}
	var metric float64 = -1
	s.Collect(func(sm metrics.Sample) {
		if sm.Name == "onair_as_run_lines_lost_total" {
			metric = sm.Value
		}
	})
	if metric < 6 {
		t.Errorf("onair_as_run_lines_lost_total is %v, want at least 6", metric)
	}
	if b, _ := os.ReadFile(asRun); len(b) != 0 {
		t.Errorf("the file holds %q after every line was lost: half a line left in", b)
	}
	// Room again: the next switch's lines are written, whole.
	disk.SetFree(1 << 20)
	before := lost()
	if err := s.SwitchAt("pgm", "one", "cut", 0, "", show.OriginAPI); err != nil {
		t.Fatal(err)
	}
	waitShow(t, s, "two lines written", func(show.Summary) bool { return s.Status().(show.StatusReport).AsRun.Lines >= 2 })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	var lines []show.AsRunLine
	for _, l := range readAsRun(t, asRun) {
		if l.Event != "missed_deadline" { // a busy machine's
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || lines[0].Event != "switch_asked" || lines[1].Event != "switch_drawn" || lines[1].Scene != "scene.one" {
		t.Errorf("after the disk had room again the log holds %+v, want the last switch asked for and drawn", lines)
	}
	if l := lost(); l != before {
		t.Errorf("%d more lines lost with room on the disk", l-before)
	}
}

// TestFFmpegOutputWritesTheTimecode encodes a bus with the ffmpeg output:
// the file's timecode, as ffprobe reads it, is the timecode the bus
// stamped on the first tick it handed the output. Args that set
// -timecode keep theirs.
func TestFFmpegOutputWritesTheTimecode(t *testing.T) {
	peer.NeedFFmpeg(t)
	dir := t.TempDir()
	ours, theirs := filepath.Join(dir, "ours.mov"), filepath.Join(dir, "theirs.mov")
	src := strings.Replace(timecodeShow, `output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}`, fmt.Sprintf(`output "ffmpeg" "ours" {
  bus  = bus.pgm
  args = ["-c:v", "mpeg4", "-y", %q]
}
output "ffmpeg" "theirs" {
  bus  = bus.pgm
  args = ["-timecode", "10:00:00;00", "-c:v", "mpeg4", "-y", %q]
}`, ours, theirs), 1)
	s := startShow(t, compile(t, writeShow(t, src), nil))
	waitShow(t, s, "30 frames encoded", func(sum show.Summary) bool { return outputOf(sum, "output.ours").Written >= 30 })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	bus, out := busOf(sum, "bus.pgm"), outputOf(sum, "output.ours")
	probe := func(path string) string {
		b, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream_tags=timecode", "-of", "default=nw=1:nk=1", path).Output()
		if err != nil {
			t.Fatalf("ffprobe %s: %v", path, err)
		}
		return strings.TrimSpace(string(b))
	}
	got, want := probe(ours), s.State.TimecodeAt(bus.FirstTick).String()
	if out.Drops == 0 && bus.OutputDrops == 0 && got != want {
		t.Errorf("the file's timecode is %q; the bus's first tick, %d, is %s", got, bus.FirstTick, want)
	} else if !strings.HasPrefix(got, "00:59:") {
		t.Errorf("the file's timecode is %q; the show's starts at 00:59:59;00", got)
	}
	if got := probe(theirs); got != "10:00:00;00" {
		t.Errorf("args with -timecode 10:00:00;00 wrote %q", got)
	}
}

// TestAsRunLogsSourceErrorsAndLiveChanges: a source whose file is missing,
// then appears, and a change made on air each get their as-run line, with
// a tick and its timecode.
func TestAsRunLogsSourceErrorsAndLiveChanges(t *testing.T) {
	showPath := writeShow(t, withMissingFile)
	p := compile(t, showPath, nil)
	asRun := filepath.Join(t.TempDir(), "as-run.jsonl")
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := show.Start(context.Background(), Backend(), p, nil, show.Options{BaseDir: filepath.Dir(showPath), AsRun: asRun, Log: log}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	waitShow(t, s, "the missing file reported", func(sum show.Summary) bool { return sourceOf(sum, "source.gone").Errors > 0 })
	var data []byte
	for _, f := range clipFrames(9, 10) {
		data = append(data, f.Bytes()...)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(showPath), "no-such-clip.nv12"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	waitShow(t, s, "source.gone to pick up its file", func(sum show.Summary) bool {
		src := sourceOf(sum, "source.gone")
		return src.LastError == "" && src.Paced > 0
	})
	if err := s.ApplyLive(show.LiveChange{Updates: []nodes.Update{update("bus.pgm", "compositor", "input_poll_ms", 4)}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range readAsRun(t, asRun) {
		if l.Event == "missed_deadline" {
			continue
		}
		if l.Tick == nil || l.Timecode == "" {
			t.Errorf("an as-run line without its tick and timecode: %+v", l)
		}
		got = append(got, fmt.Sprintf("%s %s%s %s %v", l.Event, l.Source, strings.Join(l.Elements, ","), l.Origin, strings.Contains(l.Error, "no-such-clip.nv12")))
	}
	want := []string{"source_error source.gone  true", "source_ok source.gone  false", "live_change bus.pgm apply false"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the as-run log holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
