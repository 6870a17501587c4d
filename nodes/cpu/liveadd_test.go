package cpu

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/internal/showtest"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// TestSourcesAddedOnAirAreCleanFromTheirFirstTick: showtest.AddSourcesOnAir
// on the CPU backend (a test pattern and a looped raw file added on air,
// with their scenes and an AUX route: every frame in order from each
// bus's cut, no underrun, drop or repeat).
func TestSourcesAddedOnAirAreCleanFromTheirFirstTick(t *testing.T) {
	showtest.AddSourcesOnAir(t, &Lowering, func(p *plan.Plan, dir string) show.Running {
		showDirs.Store(p, dir)
		return startShow(t, p)
	})
}

// TestAddingASourceOnAirIsRefusedWhole: a change that adds a source with a
// node of no kind, of an output's kind or one that fails to start, or a
// source the show runs already,
// changes nothing and says why; the change itself then applies, and the
// new source's sound joins the AUX bus's mix.
func TestAddingASourceOnAirIsRefusedWhole(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(first, []byte(showtest.AddShow("", "source.a")), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(dir, "edited.hcl")
	if err := os.WriteFile(edited, []byte(showtest.AddShow("source \"test_pattern\" \"c\" {\n  size = \"320x180\"\n}\n", "source.a, source.c")), 0o644); err != nil {
		t.Fatal(err)
	}
	cur, next := compile(t, first, nil), compile(t, edited, nil)
	s := startShow(t, cur)
	defer s.Stop()
	ch := showtest.LiveOf(t, cur, next)
	for _, c := range []struct {
		kind, msg string
		want      error
	}{
		{"no_such_kind", "of kind no_such_kind is no source's", show.ErrInvalid},
		{"output_record", "of kind output_record is no source's", show.ErrInvalid},
		// Constructed and failing to start: the new group is stopped and
		// taken out again, so the change below can start source.c.
		{"gpu_import", `starting source.c: group "source.c": node source.c/test_pattern: gpu_import has one input`, show.ErrConflict},
	} {
		bad := ch
		bad.Grow.Nodes = append([]plan.Node{}, ch.Grow.Nodes...)
		bad.Grow.Nodes[0].Kind = c.kind
		if err := s.ApplyLive(bad, nil); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("a node of kind %s: %v, want %v saying %q", c.kind, err, c.want, c.msg)
		}
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
	// Its sound is on the bus's mix, for onair audio.
	gain := -6.0
	if err := s.SetAudio("bus.mon", audio.Change{Source: "source.c", GainDB: &gain}); err != nil {
		t.Fatalf("the new source's strip on bus.mon: %v", err)
	}
	if st := busOf(s.State.Summary(), "bus.mon").Audio; st == nil || st.Strips["source.c"].GainDB != -6 {
		t.Errorf("bus.mon's mix after the gain change: %+v", st)
	}
}
