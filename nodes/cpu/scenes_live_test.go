package cpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/nodes/show"
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
  pattern = "checker"
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
output "null" "b" {
  bus = bus.b
}
`

// UpdateScenes on a running show: a layer of a source that feeds the bus
// moves; a layer of a source that feeds only another bus, or a scene the
// show lacks, is refused and changes nothing, saying why.
func TestUpdateScenesOnAir(t *testing.T) {
	p := compile(t, writeShow(t, twoBuses), nil)
	s := startShow(t, p)
	defer s.Stop()
	layer := func(src string, x int) []plan.Layer {
		return []plan.Layer{{Source: src, Rect: [4]int{x, 0, 160, 180}, Fit: "stretch", Opacity: 1}}
	}
	err := s.UpdateScenes([]plan.Scene{{Address: "scene.one", Layers: layer("source.b", 0)}}, []byte(`{}`))
	if !errors.Is(err, show.ErrInvalid) || !strings.Contains(err.Error(), "source.b, which does not feed bus.pgm") {
		t.Errorf("a layer of a source the bus is not fed: %v", err)
	}
	if err := s.UpdateScenes([]plan.Scene{{Address: "scene.two", Layers: layer("source.a", 0)}}, []byte(`{}`)); !errors.Is(err, show.ErrNotFound) {
		t.Errorf("a scene the show lacks: %v", err)
	}
	before := string(s.Plan())
	if before == `{}` {
		t.Fatal("a refused update replaced the plan served")
	}
	if err := s.UpdateScenes([]plan.Scene{{Address: "scene.one", Layers: layer("source.a", 160)}}, []byte(`{"applied":1}`)); err != nil {
		t.Fatalf("moving a layer: %v", err)
	}
	if got := string(s.Plan()); got != `{"applied":1}` {
		t.Errorf("after the update the show serves plan %.40s, want the applied one", got)
	}
	// The bus keeps drawing: 10 more ticks after the change.
	ticks := busOf(s.State.Summary(), "bus.pgm").Ticks
	waitShow(t, s, "10 ticks after the change", func(sum show.Summary) bool { return busOf(sum, "bus.pgm").Ticks >= ticks+10 })
}
