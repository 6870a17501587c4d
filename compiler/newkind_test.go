package compiler

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
)

// slateOnce registers the test's kind once per process.
var slateOnce sync.Once

func registerSlate() {
	nodes.Register(&nodes.Kind{
		Name: "slate_for_test", Doc: "A test kind.",
		Params: []nodes.Param{{Name: "text", Type: nodes.String}, {Name: "logo", Type: nodes.String}, {Name: "size", Type: nodes.String}, {Name: "colour", Type: nodes.String}},
		Lower: func(e *nodes.Element) map[string]any {
			logo, _ := e.Attr("slate_logo")
			return map[string]any{"text": e.String("slate_text"), "logo": logo, "size": e.Size, "colour": e.Colour}
		},
		Traits:    nodes.Traits{Blocking: true, Roles: nodes.Source, Domain: nodes.Host, Emits: []string{nodes.FormatNV12, nodes.FormatP010}, MaxOutputs: 1},
		Readiness: "never, in a test",
	})
}

// TestANewKindTouchesNoCompilerCode: a source's attributes that the show
// language holds in no field of its own (lang.Source.Extra: attributes a
// kind adds to the schema, lang's TestExtraAttributes) reach a new node
// kind (one registry entry with its lowering) through a backend's chain,
// and the plan carries them, paths relative to the show, with no line of
// the compiler edited: what a live input, a delivery output or an audio
// kind does.
func TestANewKindTouchesNoCompilerCode(t *testing.T) {
	// Registered once per process: the registry refuses a kind twice, and
	// -count runs the test again in the same process.
	slateOnce.Do(registerSlate)
	target := &nodes.Lowering{Backend: "test", Domain: nodes.Host, Profile: targets["cpu"].Profile, Chains: map[string]nodes.Chain{
		"test_pattern": {Links: []nodes.Link{nodes.L("slate_for_test"), nodes.L("realtime"), nodes.L("one_to_many")}},
	}}
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(path, []byte(`
show {
  name       = "slate"
  size       = "320x180"
  frame_rate = "25"
}
source "test_pattern" "s" {
}
scene "s" {
  layer {
    source = source.s
  }
}
bus "program" "pgm" {
  scene = scene.s
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	show := load(t, path, nil)
	// As lang decodes them from two attributes a kind adds to the schema.
	for _, b := range lang.Schema {
		if b.Type == "source" && b.Kind == "test_pattern" {
			attrs := b.Attrs
			b.Attrs = append(slices.Clone(attrs), lang.Attr{Name: "slate_text", Type: lang.TypeString}, lang.Attr{Name: "slate_logo", Type: lang.TypePath})
			t.Cleanup(func() { b.Attrs = attrs })
		}
	}
	show.Sources[0].Extra = value.Settings{"slate_text": "back soon", "slate_logo": filepath.Join(dir, "art", "logo.png")}
	res := compile(t, show, Options{Target: target})
	for _, n := range res.Plan.Nodes {
		if n.Kind == "slate_for_test" {
			if n.Params["text"] != "back soon" || n.Params["logo"] != filepath.Join("art", "logo.png") || n.Params["size"] != "320x180" {
				t.Errorf("the new kind's params are %v", n.Params)
			}
			return
		}
	}
	t.Fatalf("no slate_for_test node in the plan: %+v", res.Plan.Nodes)
}
