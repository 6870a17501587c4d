package lint

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/onairhq/onair/lang"
)

// Ignore is one inline ignore comment:
//
//	# onair-lint-ignore RULE-ID: reason
//
// on the line before a finding's range start, or at the end of that line.
// Several ids may share one comment, separated by commas. The reason is
// required.
type Ignore struct {
	Rules  []string
	Reason string
	Range  hcl.Range // the comment
	Line   int       // the line whose findings it ignores
	used   map[string]bool
}

// The ids of the findings an ignore comment itself can cause. They are
// rules like any other (`onair lint -explain ignore-without-reason`) and
// none of them can be ignored.
const (
	RuleIgnoreWithoutReason = "ignore-without-reason"
	RuleIgnoreUnknownRule   = "ignore-unknown-rule"
	RuleIgnoreNotAllowed    = "ignore-not-allowed"
	RuleIgnoreUnused        = "ignore-unused"
)

var directiveRE = regexp.MustCompile(`^(?:#|//|/\*)\s*onair-lint-ignore\b(.*?)(?:\*/)?\s*$`)
var idListRE = regexp.MustCompile(`^\s*([A-Za-z0-9_.-]+(?:\s*,\s*[A-Za-z0-9_.-]+)*)\s*(?::(.*))?$`)

// ParseIgnores finds the ignore comments in one show file. Comments are
// found with HCL's own lexer, so a "#" inside a string is not a comment.
// A malformed comment (no rule id) comes back as a finding.
func ParseIgnores(filename string, src []byte) ([]*Ignore, []Finding) {
	toks, _ := hclsyntax.LexConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
	codeLines := map[int]bool{} // lines holding something other than comments
	type cmt struct {
		text     string
		rng      hcl.Range
		trailing bool
	}
	var cmts []cmt
	for _, t := range toks {
		switch t.Type {
		case hclsyntax.TokenComment:
			cmts = append(cmts, cmt{text: strings.TrimSpace(string(t.Bytes)), rng: t.Range, trailing: codeLines[t.Range.Start.Line]})
		case hclsyntax.TokenNewline, hclsyntax.TokenEOF:
		default:
			for l := t.Range.Start.Line; l <= t.Range.End.Line; l++ {
				codeLines[l] = true
			}
		}
	}
	commentLines := map[int]bool{} // lines holding only comments
	for _, c := range cmts {
		if !codeLines[c.rng.Start.Line] {
			commentLines[c.rng.Start.Line] = true
		}
	}

	var igs []*Ignore
	var bad []Finding
	for _, c := range cmts {
		m := directiveRE.FindStringSubmatch(c.text)
		if m == nil {
			continue
		}
		rng := c.rng
		if rng.End.Line > rng.Start.Line { // a # comment token holds its newline
			rng.End = hcl.Pos{Line: rng.Start.Line, Column: rng.Start.Column + len(strings.TrimRight(c.text, "\r\n")), Byte: rng.Start.Byte + len(c.text)}
		}
		ig := &Ignore{Range: rng, used: map[string]bool{}}
		if c.trailing {
			ig.Line = c.rng.Start.Line
		} else {
			// The next line, past any comment-only lines, so that several
			// ignore comments can stack above one line. A blank line
			// ends the search: the comment then ignores nothing.
			ig.Line = c.rng.Start.Line + 1
			for commentLines[ig.Line] {
				ig.Line++
			}
		}
		lm := idListRE.FindStringSubmatch(m[1])
		if lm == nil {
			bad = append(bad, Finding{
				Rule: RuleIgnoreWithoutReason, Severity: hcl.DiagError,
				Summary: "Malformed onair-lint-ignore comment",
				Detail:  "Write the rule id and the reason: # onair-lint-ignore RULE-ID: why this finding does not apply here.",
				Subject: rng,
			})
			continue
		}
		for _, id := range strings.Split(lm[1], ",") {
			ig.Rules = append(ig.Rules, strings.TrimSpace(id))
		}
		ig.Reason = strings.TrimSpace(lm[2])
		igs = append(igs, ig)
	}
	return igs, bad
}

// ApplyIgnores marks the findings that inline ignore comments in files
// suppress (warnings only: no error is ever ignored), and adds a finding for every comment that is wrong: without a
// reason, naming an unknown rule, naming a rule that cannot be ignored, or
// matching nothing. A comment that is wrong suppresses nothing.
func ApplyIgnores(findings []Finding, files map[string][]byte, rules map[string]RuleInfo) []Finding {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var extra []Finding
	for _, name := range names {
		igs, bad := ParseIgnores(name, files[name])
		extra = append(extra, bad...)
		for _, ig := range igs {
			valid := map[string]bool{}
			for _, id := range ig.Rules {
				r, ok := rules[id]
				switch {
				case !ok:
					extra = append(extra, Finding{
						Rule: RuleIgnoreUnknownRule, Severity: hcl.DiagError,
						Summary: fmt.Sprintf("onair-lint-ignore names an unknown rule %q", id),
						Detail:  "No check or lint rule has this id" + suggestRule(id, rules) + ". Run 'onair lint -explain' for the list of rules.",
						Subject: ig.Range,
					})
				case !r.Ignorable:
					extra = append(extra, Finding{
						Rule: RuleIgnoreNotAllowed, Severity: hcl.DiagError,
						Summary: fmt.Sprintf("Rule %s cannot be ignored", id),
						Detail:  fmt.Sprintf("%s is marked not ignorable: the show cannot run correctly while it fails, so the finding stands. Fix what it reports instead.", id),
						Subject: ig.Range,
					})
				case ig.Reason == "":
					extra = append(extra, Finding{
						Rule: RuleIgnoreWithoutReason, Severity: hcl.DiagError,
						Summary: fmt.Sprintf("onair-lint-ignore %s has no reason", id),
						Detail:  fmt.Sprintf("Say why the finding does not apply here, after a colon: # onair-lint-ignore %s: REASON. An ignore without a reason ignores nothing.", id),
						Subject: ig.Range,
					})
				default:
					valid[id] = true
				}
			}
			errHit := map[string]bool{} // a rule whose error on the line the comment tried to ignore
			for i := range findings {
				f := &findings[i]
				if f.Ignored == nil && valid[f.Rule] && f.Subject.Filename == name && f.Subject.Start.Line == ig.Line {
					if f.Severity == hcl.DiagError {
						// An error is never ignored, even when its rule's
						// warnings may be (show-load).
						errHit[f.Rule] = true
						continue
					}
					f.Ignored = ig
					ig.used[f.Rule] = true
				}
			}
			for _, id := range ig.Rules {
				if valid[id] && !ig.used[id] && errHit[id] {
					extra = append(extra, Finding{
						Rule: RuleIgnoreNotAllowed, Severity: hcl.DiagError,
						Summary: fmt.Sprintf("An error of %s cannot be ignored", id),
						Detail:  fmt.Sprintf("Only the warnings of %s can be ignored; the error on line %d stands. Fix what it reports instead.", id, ig.Line),
						Subject: ig.Range,
					})
					continue
				}
				if valid[id] && !ig.used[id] {
					extra = append(extra, Finding{
						Rule: RuleIgnoreUnused, Severity: hcl.DiagWarning,
						Summary: fmt.Sprintf("onair-lint-ignore %s matches no finding", id),
						Detail:  fmt.Sprintf("Nothing on line %d reports %s any more. Remove the comment so that it cannot hide a future finding.", ig.Line, id),
						Subject: ig.Range,
					})
				}
			}
		}
	}
	out := append(findings, extra...)
	Sort(out)
	return out
}

// suggestRule returns ` (did you mean "x"?)` for a near miss, or "".
func suggestRule(id string, rules map[string]RuleInfo) string {
	best, bestD := "", len(id)/3+2
	for r := range rules {
		if d := lang.EditDistance(id, r); d < bestD || (d == bestD && r < best) {
			best, bestD = r, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}
