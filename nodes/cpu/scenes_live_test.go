package cpu

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

const twoBuses = `
show {
  name       = "live"
  size       = "320x180"
  frame_rate = "30"
}
source "test_pattern" "a" {
  size = "320x180"
}
source "test_pattern" "b" {
  pattern = "ramp"
  size    = "320x180"
}
scene "one" {
  layer {
    source = source.a
    rect   = [0, 0, 160, 180]
  }
}
bus "program" "pgm" {
  scene = scene.one
}
bus "aux" "b" {
  source = source.b
}
output "null" "pgm" {
  bus = bus.pgm
}
output "preview" "b" {
  bus         = bus.b
  interval_ms = 40
  quality     = 100
}
`

// ApplyLive on a running show: a layer of a source that feeds the bus
// moves, a scene joins the Program bus, which then cuts to it, and the bus
// looks at every arriving frame (input_poll_ms 0), and a preview output
// snapshots at another quality; a layer
// of a source that feeds only another bus, a scene on an AUX bus, twice on
// a bus, or missing, a bus the show lacks and an input_poll_ms out of the
// registry's range are refused, change nothing and say why.
//
// (The updates are nodes.Updates, as compiler/diff's Live yields them.)
func TestApplyLiveOnAir(t *testing.T) {
	p := compile(t, writeShow(t, twoBuses), nil)
	s := startShow(t, p)
	defer s.Stop()
	layer := func(src string, x int) []plan.Layer {
		return []plan.Layer{{Source: src, Rect: [4]int{x, 0, 160, 180}, Fit: "stretch", Opacity: 1}}
	}
	err := s.ApplyLive(show.LiveChange{Scenes: []plan.Scene{{Address: "scene.one", Layers: layer("source.b", 0)}}}, []byte(`{}`))
	if !errors.Is(err, show.ErrInvalid) || !strings.Contains(err.Error(), "source.b, which does not feed bus.pgm") {
		t.Errorf("a layer of a source the bus is not fed: %v", err)
	}
	two := []plan.Scene{{Address: "scene.two", Layers: layer("source.a", 80)}}
	for _, c := range []struct {
		add  map[string][]string
		want error
		msg  string
	}{
		{map[string][]string{"bus.b": {"scene.two"}}, show.ErrInvalid, "bus.b is an AUX bus"},
		{map[string][]string{"bus.pgm": {"scene.one"}}, show.ErrInvalid, "bus.pgm shows scene.one already"},
		{map[string][]string{"bus.pgm": {"scene.three"}}, show.ErrInvalid, "no scene scene.three"},
		{map[string][]string{"bus.zz": {"scene.two"}}, show.ErrNotFound, "bus.zz"},
	} {
		// Each refusal says its own cause (issue 27, item 15: every one
		// ended "a new source on a bus needs the show restarted").
		if err := s.ApplyLive(show.LiveChange{Scenes: two, Updates: addScenes(s, c.add)}, []byte(`{}`)); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "restarted") {
			t.Errorf("adding %v: %v, want %v saying %q, and no restart", c.add, err, c.want, c.msg)
		}
	}
	if err := s.ApplyLive(show.LiveChange{Updates: append(addScenes(s, map[string][]string{"bus.pgm": {"scene.two"}}), update("bus.pgm", "compositor", "input_poll_ms", 5000)), Scenes: two}, []byte(`{}`)); !errors.Is(err, show.ErrInvalid) || !strings.Contains(err.Error(), "bus.pgm: input_poll_ms must be in") || strings.Contains(err.Error(), "restarted") {
		t.Errorf("input_poll_ms 5000: %v, want ErrInvalid naming bus.pgm", err)
	}
	if got := string(s.Plan()); got == `{}` {
		t.Fatal("a refused update replaced the plan served")
	}
	if err := s.Switch("bus.pgm", "scene.two", "cut", 0); !errors.Is(err, show.ErrNotFound) {
		t.Fatalf("a cut to a scene before it was added: %v", err)
	}
	if err := s.ApplyLive(show.LiveChange{Scenes: append(two, plan.Scene{Address: "scene.one", Layers: layer("source.a", 160)}), Updates: append(addScenes(s, map[string][]string{"bus.pgm": {"scene.two"}}), update("bus.pgm", "compositor", "input_poll_ms", 0))}, []byte(`{"applied":1}`)); err != nil {
		t.Fatalf("moving a layer and adding a scene: %v", err)
	}
	// The operator's event stream says what changed.
	testwait.Until(t, testwait.Bound, "an apply event", func() bool {
		evs, _, _ := s.Events().Since(0, nil)
		for _, e := range evs {
			if e.Type == "apply" {
				got := fmt.Sprint(e.Data.(map[string]any)["changed"])
				if got != "[bus.pgm scene.one scene.two]" {
					t.Fatalf("the apply event lists %s", got)
				}
				return true
			}
		}
		return false
	})
	if got := string(s.Plan()); got != `{"applied":1}` {
		t.Errorf("after the update the show serves plan %.40s, want the applied one", got)
	}
	if err := s.Switch("bus.pgm", "scene.two", "cut", 0); err != nil {
		t.Fatalf("a cut to the added scene: %v", err)
	}
	waitShow(t, s, "bus.pgm on air with scene.two", func(sum show.Summary) bool { return busOf(sum, "bus.pgm").OnAir == "scene.two" })
	// The preview of bus.b (a ramp) at quality 100, then 1.
	var big int
	waitShow(t, s, "a preview of bus.b", func(show.Summary) bool { jpg, ok := s.State.Preview("b"); big = len(jpg); return ok })
	if err := s.ApplyLive(show.LiveChange{Updates: preview("output.b", 40, 1)}, []byte(`{"applied":2}`)); err != nil {
		t.Fatalf("preview quality 1: %v", err)
	}
	waitShow(t, s, "a preview of bus.b at quality 1", func(show.Summary) bool { jpg, _ := s.State.Preview("b"); return len(jpg) < big/2 })
	if err := s.ApplyLive(show.LiveChange{Updates: preview("output.b", 5, 100)}, nil); !errors.Is(err, show.ErrInvalid) {
		t.Errorf("preview interval_ms 5: %v, want ErrInvalid", err)
	}
	if err := s.ApplyLive(show.LiveChange{Updates: preview("output.pgm", 40, 50)}, nil); !errors.Is(err, show.ErrNotFound) {
		t.Errorf("a null output as a preview: %v, want ErrNotFound", err)
	}
	// Issue 27: a layer 2^40 pixels wide was applied and the next cut ran
	// the show out of memory. Rects and crops past the geometry limits on
	// the canvas on air (320x180) are refused and change nothing.
	for _, l := range []plan.Layer{
		{Source: "source.a", Rect: [4]int{0, 0, 1 << 40, 120}, Fit: "stretch", Opacity: 1},
		{Source: "source.a", Rect: [4]int{0, 0, 1e14, 120}, Fit: "stretch", Opacity: 1},
		{Source: "source.a", Rect: [4]int{-1 << 30, -1 << 30, 1 << 30, 1 << 30}, Fit: "cover", Opacity: 1},
		{Source: "source.a", Rect: [4]int{0, 0, 160, 180}, Crop: &[4]int{0, 0, 322, 180}, Fit: "stretch", Opacity: 1},
	} {
		err := s.ApplyLive(show.LiveChange{Scenes: []plan.Scene{{Address: "scene.one", Layers: []plan.Layer{l}}}}, nil)
		if !errors.Is(err, show.ErrInvalid) || !strings.Contains(err.Error(), "scene.one layer 0: ") || !strings.Contains(err.Error(), "_reach limit") {
			t.Errorf("a layer at %v crop %v: %v, want ErrInvalid naming the layer and the limit", l.Rect, l.Crop, err)
		}
	}
	// At the edge of rect_reach: taken, and drawn at the cost of what is
	// on the canvas.
	edge := []plan.Layer{{Source: "source.a", Rect: [4]int{-1280, -720, 2880, 1620}, Fit: "stretch", Opacity: 1}}
	if err := s.ApplyLive(show.LiveChange{Scenes: []plan.Scene{{Address: "scene.two", Layers: edge}}}, []byte(`{"applied":3}`)); err != nil {
		t.Fatalf("a layer at the edge of rect_reach: %v", err)
	}
	// The bus keeps drawing: 10 more ticks after the change.
	ticks := busOf(s.State.Summary(), "bus.pgm").Ticks
	waitShow(t, s, "10 ticks after the change", func(sum show.Summary) bool { return busOf(sum, "bus.pgm").Ticks >= ticks+10 })
}

// update is the live change of one param of a node of kind.
func update(addr, kind, param string, v any) nodes.Update {
	return nodes.Update{Node: addr + "/" + kind, Address: addr, Kind: kind, Param: param, Value: v}
}

// addScenes are the updates of the buses' scenes that add scenes at the
// end of each bus's list on air, as a diff yields them.
func addScenes(s *show.Show[Frame], add map[string][]string) []nodes.Update {
	var out []nodes.Update
	for _, bus := range slices.Sorted(maps.Keys(add)) {
		out = append(out, update(bus, "compositor", "scenes", append(slices.Clone(s.State.Scenes(bus)), add[bus]...)))
	}
	return out
}

// preview is the updates of a preview output's interval and quality.
func preview(addr string, intervalMs, quality int) []nodes.Update {
	return []nodes.Update{update(addr, "output_preview", "interval_ms", intervalMs), update(addr, "output_preview", "quality", quality)}
}
