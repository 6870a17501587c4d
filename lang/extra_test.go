package lang

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExtraAttributes: the attributes a kind adds to the schema that no
// field of Source holds come through, decoded by their schema types (a
// path resolved against the show's directory), in Source.Extra, where
// the kind's node kinds read them (nodes.Element.Attrs); one written
// wrong is one clear error at its line.
func TestExtraAttributes(t *testing.T) {
	b := topBlockOfKind("source", "test_pattern")
	attrs := b.Attrs
	b.Attrs = append(slices.Clone(attrs),
		Attr{Name: "slate_text", Type: TypeString, Doc: "test"},
		Attr{Name: "slate_logo", Type: TypePath, Doc: "test"},
		Attr{Name: "slate_seconds", Type: TypeInt, Doc: "test"},
		Attr{Name: "slate_on", Type: TypeBool, Doc: "test"})
	b.schema = b.buildSchema()
	t.Cleanup(func() { b.Attrs = attrs; b.schema = b.buildSchema() })

	dir := t.TempDir()
	write := func(extra string) string {
		path := filepath.Join(dir, "show.hcl")
		src := "show {\n  name = \"x\"\n  size = \"320x180\"\n  frame_rate = \"25\"\n}\nsource \"test_pattern\" \"s\" {\n" + extra + "}\n"
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	s := mustLoad(t, []string{write("  pattern = \"ramp\"\n  slate_text = \"back soon\"\n  slate_logo = \"art/logo.png\"\n  slate_seconds = 10\n")}, Options{})
	ex := s.Sources[0].Extra
	if ex["slate_text"] != "back soon" || ex["slate_logo"] != filepath.Join(dir, "art", "logo.png") || ex["slate_seconds"] != 10 {
		t.Errorf("Extra = %v", ex)
	}
	if _, set := ex["slate_on"]; set {
		t.Errorf("an attribute the show left out is in Extra: %v", ex)
	}
	if _, typed := ex["pattern"]; typed {
		t.Errorf("an attribute Source holds in a field is in Extra too: %v", ex)
	}
	_, diags := Load([]string{write("  slate_on = \"maybe\"\n")}, Options{})
	if n := len(diags.Errs()); n != 1 || !strings.Contains(diags.Error(), "show.hcl:7") || !strings.Contains(diags.Error(), "slate_on must be true or false") {
		t.Errorf("slate_on = \"maybe\": %d errors: %v", n, diags)
	}
}

func topBlockOfKind(typ, kind string) *Block {
	for _, b := range Schema {
		if b.Type == typ && b.Kind == kind {
			return b
		}
	}
	return nil
}
