// Package compiler turns a show (lang.Show) into a plan (plan.Plan): it
// builds the naive node graph per source kind and canvas setting, runs the
// checks (rules over node traits declared in nodes/), fuses what the canvas
// allows, places nodes on event loops and threads, estimates the cost
// against a GPU capacity profile, and emits a deterministic plan.
//
// The pipeline is one table of named passes (passes.go); each pass lives in
// its own file whose doc comment says what it needs and what it leaves.
//
// This package must never import runtime/ or the CLI: the runtime executes
// the plan it emits, through plan/ only.
package compiler

import (
	"fmt"
	"io"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

// Options steer a compilation.
type Options struct {
	// ToolVersion is stamped into the plan; a saved plan refuses to load in
	// another version.
	ToolVersion string
	// Target is the lowering of the backend to compile for (its package
	// declares it; the backend table hands it over): which chain each
	// source kind becomes and where its frames live. Required.
	Target *nodes.Lowering
	// Profile names a capacity profile, overriding the show's; CustomProfile,
	// when set, overrides both.
	Profile       string
	CustomProfile *Profile
	// DeviceProfile is the profile of the GPU the show will run on (found
	// by the backend's probe: ProfileForDevice), used when the show names
	// none; the backend's lowering names the default.
	DeviceProfile string
	// HostProfile is the CPU profile of the machine (HostProfile) a show
	// compiled for a backend that draws in host memory is scored against;
	// nil: the lowering's profile, with the profile file's figures.
	HostProfile *Profile
	// Trace names a pass after which the graph is printed to TraceOut
	// ("all" prints after every pass).
	Trace    string
	TraceOut io.Writer
	// StatFile returns a file's size; nil uses os.Stat. The estimate pass
	// uses it for resident raw sources.
	StatFile func(path string) (int64, error)
	// BeyondCapacity reports an exceeded budget of the capacity profile as
	// a warning instead of an error: for measuring where a GPU's real limit
	// is (onair bench -beyond-capacity), never for a show on air.
	BeyondCapacity bool
}

// Result is a compilation: the plan, the findings of the checks, and what
// lint rules need to run over the same graph.
type Result struct {
	Show     *lang.Show
	Graph    *Graph
	Plan     *plan.Plan
	Profile  *Profile
	Options  Options
	Findings []Finding
}

// Compile runs the pass table over a show. The diagnostics hold every
// finding of the checks and every error a pass met; when they have errors
// the plan may be incomplete and must not be run.
func Compile(show *lang.Show, opts Options) (*Result, hcl.Diagnostics) {
	st := &state{Result: Result{Show: show, Options: opts}}
	if show == nil {
		return &st.Result, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "No show to compile"}}
	}
	if opts.Target == nil {
		return &st.Result, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "No backend to compile for",
			Detail: "Options.Target is nil: pass the lowering of a backend from the backend table."}}
	}
	for _, p := range passes {
		p.fn(st)
		if opts.Trace != "" && (opts.Trace == p.name || opts.Trace == "all") && opts.TraceOut != nil && st.Graph != nil {
			fmt.Fprintf(opts.TraceOut, "== after %s ==\n", p.name)
			WriteGraphText(opts.TraceOut, st.Graph)
		}
		if st.diags.HasErrors() && p.stopOnError {
			break
		}
	}
	if st.Plan != nil && len(st.Plan.Nodes) == 0 && !st.diags.HasErrors() {
		// plan.Validate refuses a plan without nodes (a saved plan that
		// has none is corrupt), so the compiler does not write one.
		rng := show.DeclRange
		st.errorf(&rng, "Nothing to run",
			"The show %q declares no source, bus or output, so it compiles to no nodes. Add a source, a scene, a bus that shows it and an output that takes the bus.", show.Name)
		st.Plan = nil
	}
	return &st.Result, st.diags
}

// state is what passes share.
type state struct {
	Result
	diags   hcl.Diagnostics
	fusions []plan.Fusion
	// decodeLoops is how many decode loops the decoders were placed on.
	decodeLoops int
	groups      []string // group start order, set by emit
}

func (st *state) errorf(rng *hcl.Range, summary, detailFormat string, args ...any) {
	st.diags = append(st.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(detailFormat, args...), Subject: rng})
}

// PassNames lists the pass table in order, for -trace's help.
func PassNames() []string {
	out := make([]string, len(passes))
	for i, p := range passes {
		out[i] = p.name
	}
	return out
}
