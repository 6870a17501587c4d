// Package lint is onair's show linter: rules with stable ids over a
// compiled show, on top of the compiler's own checks; inline ignores
// (`# onair-lint-ignore ID: reason`); and one renderer per output format
// (text, JSON, SARIF 2.1.0, GitHub workflow commands) over the same
// findings.
//
// A rule is a compiler.Rule, so the compiler's checks and the lint rules
// are run and reported alike. Rules read node traits and the show model,
// never node kind names.
//
// This package must never import runtime/, cuda/ or the CLI.
package lint

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/lang"
)

// Rule ids for diagnostics that no rule reported: a show that does not
// load, or a compiler pass that failed outside its checks.
const (
	RuleLoad    = "show-load"
	RuleCompile = "compile"
)

var driverRules = []*compiler.Rule{
	{ID: RuleLoad, Severity: hcl.DiagError, Ignorable: true, Doc: `The show must load.

The show files must parse, every reference must resolve and every value must
have the right type. These are the language's own diagnostics: its errors
stop everything else until they are fixed and cannot be ignored, and its
warnings (a media file that is not on disk yet, say) can be silenced with
"# onair-lint-ignore show-load: REASON" on the line before the warning's
range.

An error means the show has no meaning the compiler could check. A warning
means the show is well formed but something around it is not ready: the
reason says why that is expected here (the media is copied onto the playout
host by the deployment, for instance).`},
	{ID: RuleCompile, Severity: hcl.DiagError, Doc: `The show must compile to a plan.

A compiler pass failed for a reason none of its checks names. The message
says which pass and why. There is no plan to run until it is fixed, so the
finding cannot be ignored.`},
}

// warningsOnly holds the ids of rules that report errors and warnings
// alike where only the warnings can be ignored. ApplyIgnores never
// suppresses an error, whichever rule reports it.
var warningsOnly = map[string]bool{RuleLoad: true}

func info(r *compiler.Rule) RuleInfo {
	return RuleInfo{ID: r.ID, Doc: r.Doc, Severity: r.Severity, Ignorable: r.Ignorable, WarningsOnly: warningsOnly[r.ID]}
}

// Infos returns the renderers' view of every rule lint can report.
func Infos() []RuleInfo {
	var out []RuleInfo
	for _, r := range AllRules() {
		out = append(out, info(r))
	}
	return out
}

// FromDiagnostics turns diagnostics that no rule reported (lang.Load's,
// or a pass's) into findings with the given rule id.
func FromDiagnostics(rule string, diags hcl.Diagnostics) []Finding {
	var out []Finding
	for _, d := range diags {
		f := Finding{Rule: rule, Severity: d.Severity, Summary: d.Summary, Detail: d.Detail}
		if d.Subject != nil {
			f.Subject = *d.Subject
		}
		out = append(out, f)
	}
	return out
}

// fromCompiler turns the compiler's findings into lint findings.
func fromCompiler(fs []compiler.Finding) []Finding {
	out := make([]Finding, 0, len(fs))
	for _, cf := range fs {
		f := Finding{Rule: cf.Rule.ID, Severity: cf.Diag.Severity, Summary: cf.Diag.Summary, Detail: cf.Diag.Detail}
		if cf.Diag.Subject != nil {
			f.Subject = *cf.Diag.Subject
		}
		out = append(out, f)
	}
	return out
}

// Show loads and compiles a show and lints it: every finding of lang.Load
// (as show-load), of the compiler's checks and other passes, and of the
// lint rules, with inline ignores applied (to the language's warnings
// too). files are the show's files, for snippets.
func Show(paths []string, lopts lang.Options, copts compiler.Options) (findings []Finding, files map[string][]byte) {
	show, diags := lang.Load(paths, lopts)
	if show != nil {
		files = show.Files
	}
	if diags.HasErrors() || show == nil {
		// Nothing else ran, so whether an ignore comment matches a finding
		// cannot be judged (ignore-unused is left out); everything else
		// about it can, and an ignore aimed at one of the language's
		// errors is refused (ignore-not-allowed) as it is for any other
		// error.
		fs := FromDiagnostics(RuleLoad, diags)
		if files == nil {
			Sort(fs)
			return fs, files
		}
		all := ApplyIgnores(fs, files, infoMap())
		out := all[:0]
		for _, f := range all {
			if f.Rule != RuleIgnoreUnused {
				out = append(out, f)
			}
		}
		return out, files
	}
	fs := FromDiagnostics(RuleLoad, diags) // warnings
	res, cdiags := compiler.Compile(show, copts)
	fs = append(fs, result(res, cdiags)...)
	if res.Show != nil {
		files = res.Show.Files
	}
	return ApplyIgnores(fs, files, infoMap()), files
}

// Result lints a compilation: the compiler's findings, any other
// diagnostic Compile returned (as compile), and, when the plan was built,
// the lint rules; then applies the inline ignores in the show's files.
func Result(res *compiler.Result, diags hcl.Diagnostics) []Finding {
	fs := result(res, diags)
	var files map[string][]byte
	if res.Show != nil {
		files = res.Show.Files
	}
	return ApplyIgnores(fs, files, infoMap())
}

// result is Result without the ignores.
func result(res *compiler.Result, diags hcl.Diagnostics) []Finding {
	fs := fromCompiler(res.Findings)
	reported := map[*hcl.Diagnostic]bool{}
	for _, f := range res.Findings {
		reported[f.Diag] = true
	}
	for _, d := range diags {
		if reported[d] || inFindings(res.Findings, d) {
			continue
		}
		fs = append(fs, FromDiagnostics(RuleCompile, hcl.Diagnostics{d})...)
	}
	// The lint rules need the plan; a check's error does not stop them
	// (the capacity check fails after the plan is built).
	if res.Plan != nil && res.Graph != nil {
		fs = append(fs, fromCompiler(res.Run(rules...))...)
	}
	return fs
}

// infoMap returns every rule lint can report, by id.
func infoMap() map[string]RuleInfo {
	infos := map[string]RuleInfo{}
	for _, r := range AllRules() {
		infos[r.ID] = info(r)
	}
	return infos
}

// inFindings reports whether d is a finding's diagnostic by content: the
// compiler returns a copy of each finding's diagnostic with " [RULE-ID]"
// after its summary.
func inFindings(fs []compiler.Finding, d *hcl.Diagnostic) bool {
	for _, f := range fs {
		sum := f.Diag.Summary == d.Summary || f.Diag.Summary+" ["+f.Rule.ID+"]" == d.Summary
		if sum && f.Diag.Detail == d.Detail && sameSubject(f.Diag.Subject, d.Subject) {
			return true
		}
	}
	return false
}

func sameSubject(a, b *hcl.Range) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
