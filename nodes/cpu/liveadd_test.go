package cpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/compiler/diff"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
	"github.com/onairhq/onair/showerr"
)

// addRate is the frame rate of the shows sources are added to: the test
// is about order and counts, not speed (loopsRate says why it is low).
const addRate = 5

// addShow is a show of one test pattern on a recorded Program bus and an
// AUX bus; more is what the edited show adds (sources, scenes) and
// auxRoutes the AUX bus's routes.
func addShow(more, auxRoutes string) string {
	return fmt.Sprintf(`show {
  name       = "grow"
  size       = "320x180"
  frame_rate = "%d"
  format     = "nv12"
}
source "test_pattern" "a" {
  size = "320x180"
}
scene "one" {
  layer {
    source = source.a
    rect   = [0, 0, 320, 180]
  }
}
bus "program" "pgm" {
  scene = scene.one
}
bus "aux" "mon" {
  source = source.a
  routes = [%s]
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
output "record" "mon" {
  bus  = bus.mon
  path = "mon.y4m"
}
%s`, addRate, auxRoutes, more)
}

// liveOf is the change on air that takes the show from cur to next, as
// onair apply makes it (compiler/diff's Live); it fails the test on a
// refusal.
func liveOf(t *testing.T, cur, next *plan.Plan) show.LiveChange {
	t.Helper()
	lv := diff.Diff(cur, next).Live
	if len(lv.Refused) > 0 {
		t.Fatalf("the diff refuses the change on air: %s", strings.Join(lv.Refused, "; "))
	}
	return show.LiveChange{Scenes: lv.Scenes, RenameScenes: lv.Renames, Updates: lv.Updates,
		Grow: runtime.Extension{Nodes: lv.Add.Nodes, Edges: lv.Add.Edges, Groups: lv.Add.Groups, Loops: lv.Add.Loops}}
}

// TestSourcesAddedOnAirAreCleanFromTheirFirstTick (issue 23 item 2, issue
// 28 item 2): a show runs; a change on air adds a test pattern and a
// looped raw file, a scene of each on the Program bus, and routes the AUX
// bus to the new test pattern. The change returns once both sources are
// ready; until then a cut to their scenes is refused (or not found, before
// the change began), never taken. Then the Program bus cuts to each new
// scene and the AUX bus to the new source; the recordings, read by the
// stamps in their pictures, hold every frame of each source in order from
// the tick the bus cut to it, and the new sources count no underrun or
// drop, the buses no repeat, and the page has a tile of each.
func TestSourcesAddedOnAirAreCleanFromTheirFirstTick(t *testing.T) {
	const w, h, clipFrames = 320, 180, 2 * addRate
	const rawID = 14
	dir := t.TempDir()
	writeRawClip(t, filepath.Join(dir, "clip.nv12"), rawID, w, h, clipFrames, frame.Rational{Num: addRate, Den: 1})
	first := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(first, []byte(addShow("", "source.a")), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.hcl")
	more := `
source "test_pattern" "c" {
  pattern = "ramp"
  size    = "320x180"
}
source "raw_file" "r" {
  path   = "clip.nv12"
  size   = "320x180"
  format = "nv12"
  loop   = true
}
scene "two" {
  layer {
    source = source.c
    rect   = [0, 0, 320, 180]
  }
}
scene "three" {
  layer {
    source = source.r
    rect   = [0, 0, 320, 180]
  }
}
`
	if err := os.WriteFile(edited, []byte(addShow(more, "source.a, source.c")), 0o644); err != nil {
		t.Fatal(err)
	}
	cur, next := compile(t, first, nil), compile(t, edited, nil)
	s := startShow(t, cur)
	stopped := false
	defer func() {
		if !stopped {
			s.Stop()
		}
	}()
	waitShow(t, s, "bus.pgm on air", func(sum show.Summary) bool { return busOf(sum, "bus.pgm").Ticks >= 3 })

	// Cuts asked for while the change is made: refused until the scene is
	// on the bus, which is the last thing the change does.
	applied := make(chan struct{})
	tried := make(chan map[string]int, 1)
	go func() {
		seen := map[string]int{}
		defer func() { tried <- seen }()
		for {
			select {
			case <-applied:
				return
			case <-time.After(time.Millisecond):
			}
			err := s.Switch("bus.pgm", "scene.two", "cut", 0)
			switch {
			case err == nil:
				seen["taken"]++
				<-applied
				return
			case errors.Is(err, show.ErrNotFound):
				seen["not found"]++
			case errors.Is(err, show.ErrConflict) && strings.Contains(err.Error(), "source.c, which is not ready yet (started "):
				seen["not ready"]++
			default:
				t.Errorf("a cut while the source was added: %v", err)
				<-applied
				return
			}
		}
	}()
	ch := liveOf(t, cur, next)
	if got := strings.Join(ch.Elements(), " "); got != "bus.mon bus.pgm scene.three scene.two source.c source.r" {
		t.Errorf("the change touches %s", got)
	}
	if err := s.ApplyLive(ch, []byte(`{"grown":1}`)); err != nil {
		t.Fatalf("adding the sources on air: %v", err)
	}
	close(applied)
	t.Logf("cuts asked for while the sources were added: %v", <-tried)
	for _, a := range []string{"source.c", "source.r"} {
		if src := sourceOf(s.State.Summary(), a); src.Paced == 0 {
			t.Errorf("%s has paced no frame when the change returned", a)
		}
	}
	// Cut to each new scene in turn, some ticks apart, and the AUX bus to
	// the new source.
	if err := s.Switch("bus.pgm", "scene.two", "cut", 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Switch("bus.mon", "source.c", "cut", 0); err != nil {
		t.Fatalf("the AUX bus to its new route: %v", err)
	}
	ticks := busOf(s.State.Summary(), "bus.pgm").Ticks
	waitShow(t, s, "12 ticks of scene.two", func(sum show.Summary) bool { return busOf(sum, "bus.pgm").Ticks >= ticks+12 })
	if err := s.Switch("bus.pgm", "scene.three", "cut", 0); err != nil {
		t.Fatal(err)
	}
	ticks = busOf(s.State.Summary(), "bus.pgm").Ticks
	waitShow(t, s, "a pass and a half of the raw clip", func(sum show.Summary) bool {
		return busOf(sum, "bus.pgm").Ticks >= ticks+uint64(clipFrames*3/2)
	})
	// The page has a tile of each new source.
	for _, a := range []string{"source.c", "source.r"} {
		waitShow(t, s, "a tile of "+a, func(show.Summary) bool {
			jpg, _, err := s.State.Snapshot(a, 10)
			if err != nil && !errors.Is(err, showerr.ErrNotReady) {
				t.Fatalf("the tile of %s: %v", a, err)
			}
			return len(jpg) > 0
		})
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	sum := s.State.Summary()
	for _, a := range []string{"source.c", "source.r"} {
		if src := sourceOf(sum, a); src.Underruns != 0 || src.Drops != 0 || src.Errors != 0 {
			t.Errorf("%s: %d underruns, %d drops, %d errors (%s), want none", a, src.Underruns, src.Drops, src.Errors, src.LastError)
		}
	}
	for _, b := range []string{"bus.pgm", "bus.mon"} {
		if bs := busOf(sum, b); bs.Repeats != 0 || bs.OutputDrops != 0 {
			t.Errorf("%s: %d repeats, %d output drops, want none", b, bs.Repeats, bs.OutputDrops)
		}
	}
	idC := s.State.StampID("source.c")
	runs := stampRuns(t, readY4M(t, filepath.Join(dir, "pgm.y4m")), w, h, map[uint16]int{rawID: clipFrames})
	if len(runs) != 3 || runs[0].id != s.State.StampID("source.a") || runs[1].id != idC || runs[2].id != rawID {
		t.Fatalf("the Program recording shows %v, want source.a, then source.c, then the raw clip", runs)
	}
	if runs[1].frames < 12 || runs[2].frames < clipFrames*3/2 {
		t.Errorf("the Program recording shows %v: fewer frames of the new sources than the bus drew", runs)
	}
	mon := stampRuns(t, readY4M(t, filepath.Join(dir, "mon.y4m")), w, h, nil)
	if len(mon) != 2 || mon[1].id != idC || mon[1].frames < 12 {
		t.Errorf("the AUX recording shows %v, want source.a then source.c", mon)
	}
}

// stampRun is a run of recorded frames of one source, each the source's
// next frame.
type stampRun struct {
	id     uint16
	frames int
}

// stampRuns reads the stamps of recs and splits them into runs of one
// source each; within a run every frame must follow the one before (mod
// loop[id], a looped clip's length).
func stampRuns(t *testing.T, recs []*frame.Frame, w, h int, loop map[uint16]int) []stampRun {
	t.Helper()
	var runs []stampRun
	var prev int64
	for i, f := range recs {
		id, n, ok := media.ReadStamp(f, frame.Rect{W: w, H: h})
		if !ok {
			t.Fatalf("recorded frame %d carries no stamp", i)
		}
		cur := int64(n)
		if len(runs) == 0 || runs[len(runs)-1].id != id {
			runs = append(runs, stampRun{id: id})
		} else if want := prev + 1; cur != want && !(loop[id] > 0 && cur == want%int64(loop[id])) {
			t.Errorf("recorded frame %d shows frame %d of source %d after its frame %d", i, cur, id, prev)
		}
		runs[len(runs)-1].frames++
		prev = cur
	}
	return runs
}

// TestAddingASourceOnAirIsRefusedWhole: a change that adds a source and
// also a node the executor cannot run, or a source the show runs already,
// changes nothing and says why.
func TestAddingASourceOnAirIsRefusedWhole(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(first, []byte(addShow("", "source.a")), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.hcl")
	if err := os.WriteFile(edited, []byte(addShow("source \"test_pattern\" \"c\" {\n  size = \"320x180\"\n}\n", "source.a, source.c")), 0o644); err != nil {
		t.Fatal(err)
	}
	cur, next := compile(t, first, nil), compile(t, edited, nil)
	s := startShow(t, cur)
	defer s.Stop()
	ch := liveOf(t, cur, next)
	bad := ch
	bad.Grow.Nodes = append([]plan.Node{}, ch.Grow.Nodes...)
	bad.Grow.Nodes[0].Kind = "no_such_kind"
	if err := s.ApplyLive(bad, nil); !errors.Is(err, show.ErrConflict) || !strings.Contains(err.Error(), `kind "no_such_kind" has no constructor`) {
		t.Errorf("a node of no kind: %v", err)
	}
	again := ch
	again.Grow.Nodes = append([]plan.Node{}, ch.Grow.Nodes...)
	again.Grow.Nodes[0].Address = "source.a"
	if err := s.ApplyLive(again, nil); !errors.Is(err, show.ErrInvalid) || !strings.Contains(err.Error(), "the show runs this source already") {
		t.Errorf("a source on air again: %v", err)
	}
	if got := s.State.Scenes("bus.mon"); strings.Join(got, " ") != "source.a" {
		t.Errorf("after the refusals bus.mon routes to %v", got)
	}
	if src := sourceOf(s.State.Summary(), "source.c"); src.Address != "" {
		t.Errorf("a refused change left %s in the show", src.Address)
	}
	// The change itself still applies.
	if err := s.ApplyLive(ch, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Switch("bus.mon", "source.c", "cut", 0); err != nil {
		t.Fatal(err)
	}
	waitShow(t, s, "bus.mon on source.c", func(sum show.Summary) bool { return busOf(sum, "bus.mon").OnAir == "source.c" })
}
