package lint

import (
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Finding is one problem reported by a compiler check or a lint rule,
// pointing at the show file. Every renderer (text, JSON, SARIF, GitHub)
// prints the same findings.
type Finding struct {
	Rule     string                 // the rule's stable id, "browser-return-queue"
	Severity hcl.DiagnosticSeverity // hcl.DiagError or hcl.DiagWarning
	Summary  string                 // one line: what is wrong
	Detail   string                 // why it matters and what to do
	Subject  hcl.Range              // where; zero when the finding has no place in a file
	// Ignored is set when an inline `# onair-lint-ignore ID: reason`
	// comment suppressed the finding.
	Ignored *Ignore
}

// HasRange reports whether the finding points at a file.
func (f *Finding) HasRange() bool { return f.Subject.Filename != "" && f.Subject.Start.Line > 0 }

// SeverityName is "error" or "warning".
func SeverityName(s hcl.DiagnosticSeverity) string {
	if s == hcl.DiagError {
		return "error"
	}
	return "warning"
}

// RuleInfo is what the renderers need to know about a rule: its id, its
// doc (title, blank line, explanation) and its default severity.
type RuleInfo struct {
	ID        string
	Doc       string
	Severity  hcl.DiagnosticSeverity
	Ignorable bool
	// WarningsOnly is set for a rule that reports errors and warnings
	// (show-load) and whose warnings alone can be ignored. No error is
	// ever ignored, whichever rule reports it.
	WarningsOnly bool
}

// Title is the first line of the doc.
func (r RuleInfo) Title() string {
	t, _, _ := strings.Cut(strings.TrimSpace(r.Doc), "\n")
	return strings.TrimSpace(t)
}

// Explanation is the doc's first paragraph, what `onair lint -explain`
// prints: the title and the text up to the first blank line after it.
func (r RuleInfo) Explanation() string {
	return FirstParagraph(r.Doc)
}

// FirstParagraph returns the title line plus the paragraph that follows
// it: the lines up to the second blank line.
func FirstParagraph(doc string) string {
	lines := strings.Split(strings.TrimSpace(doc), "\n")
	var out []string
	blanks := 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			blanks++
			if blanks == 2 {
				break
			}
			out = append(out, "")
			continue
		}
		out = append(out, strings.TrimRight(l, " \t"))
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// Sort orders findings by file, line and column, then rule id, so every
// renderer prints them in the same, deterministic order. Findings without
// a range come first.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i].Subject, fs[j].Subject
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Start.Line != b.Start.Line {
			return a.Start.Line < b.Start.Line
		}
		if a.Start.Column != b.Start.Column {
			return a.Start.Column < b.Start.Column
		}
		if fs[i].Rule != fs[j].Rule {
			return fs[i].Rule < fs[j].Rule
		}
		return fs[i].Summary < fs[j].Summary
	})
}

// Counts returns how many findings are errors, warnings and ignored.
func Counts(fs []Finding) (errors, warnings, ignored int) {
	for _, f := range fs {
		switch {
		case f.Ignored != nil:
			ignored++
		case f.Severity == hcl.DiagError:
			errors++
		default:
			warnings++
		}
	}
	return
}
