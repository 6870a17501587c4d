package lint_test

import (
	"bytes"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/compiler/lint"
)

// FuzzIgnores feeds arbitrary show text to the ignore parser and the
// renderers: whatever the comments look like, nothing panics, every ignore
// targets a line after (or on) its comment, and the text renderer prints a
// snippet for any range.
func FuzzIgnores(f *testing.F) {
	f.Add("# onair-lint-ignore unused-source: spare\nsource \"test_pattern\" \"x\" {}\n")
	f.Add("a = 1 # onair-lint-ignore a, b:\n")
	f.Add("/* onair-lint-ignore */\n// onair-lint-ignore x:y:z\n\"# onair-lint-ignore q: in a string\"")
	f.Add("\t#onair-lint-ignore\tx :  \r\nb = \"${\"")
	f.Fuzz(func(t *testing.T, src string) {
		igs, bad := lint.ParseIgnores("f.hcl", []byte(src))
		for _, ig := range igs {
			if ig.Line != 0 && ig.Line < ig.Range.Start.Line {
				t.Fatalf("ignore on line %d targets line %d", ig.Range.Start.Line, ig.Line)
			}
		}
		fs := append([]lint.Finding(nil), bad...)
		fs = append(fs, lint.Finding{Rule: "unused-source", Severity: hcl.DiagWarning, Summary: "s",
			Subject: hcl.Range{Filename: "f.hcl", Start: hcl.Pos{Line: 2, Column: 40}, End: hcl.Pos{Line: 1, Column: 1}}})
		rules := map[string]lint.RuleInfo{"unused-source": {ID: "unused-source", Ignorable: true}}
		fs = lint.ApplyIgnores(fs, map[string][]byte{"f.hcl": []byte(src)}, rules)
		r := &lint.Report{Findings: fs, Files: map[string][]byte{"f.hcl": []byte(src)}}
		for _, format := range lint.Formats {
			var b bytes.Buffer
			if err := r.Write(&b, format); err != nil {
				t.Fatal(err)
			}
		}
	})
}
