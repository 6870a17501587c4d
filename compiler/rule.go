package compiler

import (
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/plan"
)

// Rule is one check over a compiled show: the compiler's own checks (see
// Checks) and the lint rules of compiler/lint are values of this type, run
// by the same driver and reported the same way.
type Rule struct {
	// ID is stable: it names the rule in output, in -explain and in inline
	// ignores ("group-order", "queue-sizing").
	ID string
	// Doc is a title line, a blank line, then the explanation. Its first
	// paragraph is what `onair lint -explain ID` prints.
	Doc      string
	Severity hcl.DiagnosticSeverity
	// Ignorable rules may be silenced by an inline ignore; the compiler's
	// checks that make a plan impossible are not.
	Ignorable bool
	Run       func(*Pass)
}

// Summary returns the first paragraph of the rule's doc.
func (r *Rule) Summary() string {
	doc := strings.TrimSpace(r.Doc)
	if i := strings.Index(doc, "\n\n"); i >= 0 {
		doc = doc[:i]
	}
	return doc
}

// Pass is what a rule sees: the show, the graph with each node's kind
// declaration, the plan being built (or the final one), the capacity
// profile, and a way to report.
type Pass struct {
	Rule    *Rule
	Show    *lang.Show
	Graph   *Graph
	Plan    *plan.Plan // nil while the checks run before emit
	Profile *Profile
	Options Options

	findings *[]Finding
}

// Report records a diagnostic for the pass's rule. The severity defaults to
// the rule's.
func (p *Pass) Report(d hcl.Diagnostic) {
	if d.Severity == 0 {
		d.Severity = p.Rule.Severity
	}
	*p.findings = append(*p.findings, Finding{Rule: p.Rule, Diag: &d})
}

// Finding is one report of one rule.
type Finding struct {
	Rule *Rule
	Diag *hcl.Diagnostic
}

// Run runs rules against a compiled result and returns their findings in
// rule order. Lint rules use it; Compile runs Checks() the same way.
func (r *Result) Run(rules ...*Rule) []Finding {
	var fs []Finding
	for _, rule := range rules {
		p := &Pass{Rule: rule, Show: r.Show, Graph: r.Graph, Plan: r.Plan, Profile: r.Profile, Options: r.Options, findings: &fs}
		rule.Run(p)
	}
	return fs
}

// Checks returns the compiler's own checks, in the order they run.
func Checks() []*Rule { return checks }

// LookupRule returns the check with the given id.
func LookupRule(id string) (*Rule, bool) {
	for _, r := range checks {
		if r.ID == id {
			return r, true
		}
	}
	return nil, false
}
