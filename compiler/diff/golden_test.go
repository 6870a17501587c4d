package diff_test

import (
	"bytes"
	"encoding/json"
	"github.com/onairhq/onair/internal/golden"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
	"path/filepath"
	"testing"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/diff"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/plan"
)

// compile loads and compiles a show file of the test suite.
func compile(t *testing.T, path string) *plan.Plan {
	t.Helper()
	show, diags := lang.Load([]string{path}, lang.Options{})
	if diags.HasErrors() {
		t.Fatalf("%s: %v", path, diags)
	}
	res, diags := compiler.Compile(show, compiler.Options{Target: &nodecuda.Lowering, ToolVersion: "test"})
	if diags.HasErrors() || res.Plan == nil {
		t.Fatalf("%s: %v", path, diags)
	}
	return res.Plan
}

// testdata/old.hcl is the show on air; each case in testdata is a directory
// with new.hcl (one change to it) and want.txt and want.json, the golden
// renderings; the table says what a user relies on in each.
func TestGoldenShowPairs(t *testing.T) {
	tests := []struct {
		dir      string
		actions  map[string]diff.Action // element -> action; every other element unchanged
		attr     map[string]string      // element -> the attribute that forced its replacement
		glitches []string
		restarts []string
	}{
		{dir: "path-replace",
			actions:  map[string]diff.Action{"source.vt": diff.Replace},
			attr:     map[string]string{"source.vt": "raw_video_file_cuda.path"},
			glitches: []string{"bus.pgm"}, restarts: []string{"source.vt"}},
		{dir: "opacity-update",
			actions: map[string]diff.Action{"scene.two": diff.Update}},
		{dir: "scene-cut",
			actions: map[string]diff.Action{"bus.pgm": diff.Update}},
		{dir: "added-source",
			actions: map[string]diff.Action{"source.slate": diff.Create, "scene.bars": diff.Update, "bus.pgm": diff.Update}},
		{dir: "rename-moved",
			actions: map[string]diff.Action{"source.playout": diff.Update}},
		{dir: "rename-no-moved",
			actions:  map[string]diff.Action{"source.vt": diff.Delete, "source.playout": diff.Create, "scene.two": diff.Update, "bus.pgm": diff.Update},
			glitches: []string{"bus.pgm"}},
		{dir: "raw-upload-chain",
			actions:  map[string]diff.Action{"source.vt": diff.Replace},
			attr:     map[string]string{"source.vt": "canvas.raw_upload"},
			glitches: []string{"bus.pgm"}, restarts: []string{"source.vt"}},
		{dir: "scene-rename-moved",
			actions: map[string]diff.Action{"scene.test": diff.Update}},
		{dir: "added-scene",
			actions: map[string]diff.Action{"scene.pip": diff.Create, "bus.pgm": diff.Update}},
		{dir: "kind-change",
			actions:  map[string]diff.Action{"output.mon": diff.Replace},
			attr:     map[string]string{"output.mon": "kind"},
			glitches: nil},
		// A tally block is a show setting: no element changes, and the
		// sender starts with the show.
		{dir: "tally-added"},
	}
	// What onair apply makes of each on air (diff.Live): the elements it
	// changes, and how many changes it refuses (any refusal refuses the
	// whole). A change it refuses is never an update with every attribute
	// "# live".
	onAir := map[string]struct {
		live    []string
		refused int
	}{
		"path-replace": {nil, 1}, "opacity-update": {[]string{"scene.two"}, 0}, "scene-cut": {[]string{"bus.pgm"}, 0},
		"added-source": {[]string{"source.slate", "scene.bars", "bus.pgm"}, 0}, "rename-moved": {nil, 1}, "rename-no-moved": {[]string{"source.playout", "scene.two"}, 2},
		"raw-upload-chain": {nil, 2}, "scene-rename-moved": {[]string{"scene.test"}, 0}, "tally-added": {nil, 1},
		"added-scene": {[]string{"scene.pip", "bus.pgm"}, 0}, "kind-change": {nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			dir := filepath.Join("testdata", tt.dir)
			old := compile(t, filepath.Join("testdata", "old.hcl"))
			nw := compile(t, filepath.Join(dir, "new.hcl"))
			r := diff.Diff(old, nw)
			r.Old.Label, r.New.Label = "old.hcl", "new.hcl"

			got := map[string]diff.Action{}
			gotAttr := map[string]string{}
			for _, c := range r.Changes {
				got[c.Address] = c.Action
				if c.Action == diff.Replace {
					gotAttr[c.Address] = c.Attribute
				}
			}
			if !equalMap(got, tt.actions) {
				t.Errorf("actions = %v, want %v", got, tt.actions)
			}
			if tt.attr == nil {
				tt.attr = map[string]string{}
			}
			if !equalMap(gotAttr, tt.attr) {
				t.Errorf("forcing attributes = %v, want %v", gotAttr, tt.attr)
			}
			if w := onAir[tt.dir]; !equalSlice(r.Live.Elements, w.live) || len(r.Live.Refused) != w.refused {
				t.Errorf("on air: changes %q and refuses %q, want %q and %d refusals", r.Live.Elements, r.Live.Refused, w.live, w.refused)
			}
			for _, c := range r.Changes {
				if c.Refused != "" && c.Action == diff.Update && c.MovedFrom == "" && allLive(c) { // a move says so itself
					t.Errorf("%s: refused (%s), yet every attribute it changes is marked live", c.Address, c.Refused)
				}
			}
			var gl []string
			for _, g := range r.Impact.Glitches {
				gl = append(gl, g.Bus)
			}
			if !equalSlice(gl, tt.glitches) || !equalSlice(r.Impact.Restarts, tt.restarts) {
				t.Errorf("glitches %v restarts %v, want %v and %v", gl, r.Impact.Restarts, tt.glitches, tt.restarts)
			}

			// A saved old plan diffs exactly like the compiled show.
			saved, err := json.Marshal(old)
			if err != nil {
				t.Fatal(err)
			}
			reloaded, err := plan.LoadVersion(bytes.NewReader(saved), "")
			if err != nil {
				t.Fatal(err)
			}
			r2 := diff.Diff(reloaded, nw)
			r2.Old.Label, r2.New.Label = "old.hcl", "new.hcl"

			var txt, js, txt2 bytes.Buffer
			if err := r.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			if err := r.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if err := r2.WriteText(&txt2); err != nil {
				t.Fatal(err)
			}
			if txt.String() != txt2.String() {
				t.Errorf("a saved plan diffs differently from the show:\n%s\nvs\n%s", txt2.String(), txt.String())
			}
			golden.Check(t, filepath.Join(dir, "want.txt"), txt.Bytes())
			golden.Check(t, filepath.Join(dir, "want.json"), js.Bytes())
		})
	}
}

func TestSameShowNoChanges(t *testing.T) {
	for _, show := range []string{"../../shows/minimal.hcl", "../../shows/studio.hcl", "../../shows/demo-192.hcl"} {
		p := compile(t, show)
		if r := diff.Diff(p, compile(t, show)); r.Changed() {
			var b bytes.Buffer
			r.WriteText(&b)
			t.Errorf("%s against itself:\n%s", show, b.String())
		}
	}
}

// allLive reports whether every attribute c and its nodes change is live.
func allLive(c diff.Change) bool {
	for _, a := range c.Attrs {
		if !a.Live {
			return false
		}
	}
	for _, n := range c.Nodes {
		if n.Action != diff.Update {
			return false
		}
		for _, a := range n.Attrs {
			if !a.Live {
				return false
			}
		}
	}
	return true
}

func equalMap[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func equalSlice(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
