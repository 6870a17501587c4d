package compiler

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBrowserKeyReachesTheImport: a browser source's key attribute is its
// gpu_import's key param; the default (alpha, the kind's) is left to the
// kind, so plans of shows that do not say it are unchanged.
func TestBrowserKeyReachesTheImport(t *testing.T) {
	for _, c := range []struct {
		attr string
		want any
	}{{"", nil}, {`key = "alpha"`, nil}, {`key = "none"`, "none"}} {
		path := filepath.Join(t.TempDir(), "show.hcl")
		src := `
show {
  name = "k"
  size = "320x180"
  frame_rate = "30"
}
source "browser" "gfx" {
  socket = "gfx.sock"
  ` + c.attr + `
}
scene "s" {
  layer {
    source = source.gfx
  }
}
bus "program" "pgm" {
  scene = scene.s
}
`
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		res := compile(t, load(t, path, nil), Options{})
		found := false
		for _, n := range res.Plan.Nodes {
			if n.Kind == "gpu_import" {
				found = true
				if got := n.Params["key"]; got != c.want {
					t.Errorf("%q: gpu_import's key is %v, want %v", c.attr, got, c.want)
				}
			}
		}
		if !found {
			t.Fatalf("%q: no gpu_import in the plan", c.attr)
		}
	}
}
