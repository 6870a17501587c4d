package lang

import (
	"github.com/onairhq/onair/internal/golden"
	"strings"
	"testing"
)

// TestReferenceIsCurrent fails when docs/REFERENCE.md differs from what the
// schema generates; run `go test ./lang -run TestReferenceIsCurrent -update`.
func TestReferenceIsCurrent(t *testing.T) {
	const path = "../docs/REFERENCE.md"
	golden.Check(t, path, []byte(Reference(true)))
}

// TestReferenceCoversSchema: every block, kind, attribute, enum value and
// range of the schema appears in both renderings.
func TestReferenceCoversSchema(t *testing.T) {
	for _, md := range []bool{true, false} {
		ref := Reference(md)
		var walk func(b *Block)
		walk = func(b *Block) {
			if !strings.Contains(ref, header(b)) {
				t.Errorf("markdown=%v: reference lacks block %s", md, header(b))
			}
			for _, a := range b.Attrs {
				if !strings.Contains(ref, a.Name) || !strings.Contains(ref, a.Doc) {
					t.Errorf("markdown=%v: reference lacks %s.%s", md, header(b), a.Name)
				}
				for _, e := range a.Enum {
					if !strings.Contains(ref, e) {
						t.Errorf("markdown=%v: reference lacks enum value %s of %s", md, e, a.Name)
					}
				}
				if a.Range != nil && !strings.Contains(ref, allowedText(a)) {
					t.Errorf("markdown=%v: reference lacks range of %s", md, a.Name)
				}
			}
			for _, c := range b.Blocks {
				walk(c)
			}
		}
		for _, b := range Schema {
			walk(b)
		}
	}
}

// TestReferenceListsLimits: every limit appears in both renderings, with
// its default and its doc, so the reference says what each error means.
func TestReferenceListsLimits(t *testing.T) {
	for _, md := range []bool{true, false} {
		ref := Reference(md)
		for _, l := range limitTable {
			if !strings.Contains(ref, l.Name) || !strings.Contains(ref, limitDefaultText(l)) || !strings.Contains(ref, l.Doc) {
				t.Errorf("markdown=%v: reference lacks limit %s", md, l.Name)
			}
		}
	}
}
