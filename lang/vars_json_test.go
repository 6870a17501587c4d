package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONVarFile: a -var-file ending in .json is one JSON object, a
// property per variable, with numbers, strings and objects as JSON writes
// them; a broken one is reported at its line, and an HCL file named .json
// is read as JSON (and refused as such).
func TestJSONVarFile(t *testing.T) {
	show := []string{"testdata/good/features.hcl"}
	dir := t.TempDir()
	good := filepath.Join(dir, "vars.json")
	os.WriteFile(good, []byte(`{"cams": 2, "label": "from-json", "gfx": {"left": "/j.sock"}}`), 0o644)
	s := mustLoad(t, show, Options{VarFiles: []string{good}})
	n := 0
	for _, src := range s.Sources {
		if src.Kind == "hevc_file" {
			n++
		}
	}
	if n != 2 || s.Name != "from-json" || s.Sources[n+1].Socket != "/j.sock" {
		t.Errorf("from vars.json: %d cams, label %q, socket %q; want 2, from-json, /j.sock", n, s.Name, s.Sources[n+1].Socket)
	}
	hcl := mustLoad(t, show, Options{VarFiles: []string{"testdata/good/vars.hcl"}})
	if hcl.Name != "from-file" {
		t.Errorf("an HCL var file beside: label %q", hcl.Name)
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\n  \"cams\": 2,\n  \"label\": \n}"), 0o644)
	_, diags := Load(show, Options{VarFiles: []string{bad}})
	if !diags.HasErrors() || diags[0].Subject == nil || diags[0].Subject.Filename != bad || diags[0].Subject.Start.Line != 4 {
		t.Errorf("a broken JSON var file: %v, want an error at %s:4", diags, bad)
	}
	hclNamedJSON := filepath.Join(dir, "hcl.json")
	os.WriteFile(hclNamedJSON, []byte("cams = 2\n"), 0o644)
	if _, diags := Load(show, Options{VarFiles: []string{hclNamedJSON}}); !diags.HasErrors() || !strings.Contains(diags.Error(), "hcl.json") {
		t.Errorf("HCL in a .json file: %v, want a JSON syntax error naming the file", diags)
	}
}
