package cli

import (
	"bytes"
	"fmt"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/internal/files"
	"io"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/diff"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

func init() {
	register(&command{
		name:    "diff",
		summary: "Show what changes between two shows or saved plans: create, update in place, replace, delete, and which buses glitch.",
		usage: "[-json] [-detailed-exitcode] [-backend auto|cuda|cpu] [-profile NAME] [-var NAME=VALUE]... [-var-file FILE]... OLD NEW\n\n" +
			"OLD and NEW are each a show (a .hcl file or a directory) or a plan saved with\n" +
			"onair plan -out (recognised by its content). A saved plan must have been written\n" +
			"by this onair: one from another version, or a corrupt one, is refused; compile\n" +
			"the show again. Variables apply to both shows.\n" +
			"Exit status: 0 success, 1 error; with -detailed-exitcode 0 no changes, 1 error, 2 changes.",
		run: runDiff,
	})
}

func runDiff(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["diff"], stderr)
	asJSON := fs.Bool("json", false, "print the diff as JSON")
	detailed := fs.Bool("detailed-exitcode", false, "exit 0 with no changes, 1 on error, 2 with changes")
	profile := fs.String("profile", "", "capacity profile `NAME` to compile shows against, overriding theirs")
	backend := fs.String("backend", "", "compile shows for `BACKEND` ("+strings.Join(backends.Names(), " or ")+", or auto: the first usable here); default: the saved plan's when one side is a saved plan, else auto, as onair run picks")
	vf := addVarFlags(fs)
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() != 2 {
		fmt.Fprintf(stderr, "onair diff: want two arguments, OLD and NEW, got %d\n", fs.NArg())
		fs.Usage()
		return 2
	}
	if *backend != "" {
		if _, err := compileBackend(*backend); err != nil {
			fmt.Fprintf(stderr, "onair diff: -backend: %v\n", err)
			return 2
		}
	}
	// Saved plans first: a show on the other side compiles for the saved
	// plan's backend, so that like is compared with like.
	sides := [2]*plan.Plan{}
	for pass := 0; pass < 2; pass++ {
		for i, path := range fs.Args() {
			if sides[i] != nil || (pass == 0) != isSavedPlan(path) {
				continue
			}
			be := *backend
			if be == "" {
				be = "auto"
				for _, other := range sides {
					if other != nil && other.Backend != "" {
						be = other.Backend
					}
				}
			}
			target, err := compileBackend(be)
			if err != nil { // a saved plan of a backend this build lacks
				fmt.Fprintf(stderr, "onair diff: %s: %v\n", path, err)
				return 1
			}
			p, err := loadPlanOrShow(path, vf.options(), compiler.Options{ToolVersion: version, Profile: *profile, Target: target.Lowering, HostProfile: hostProfile(target.Lowering)}, stderr)
			if err != nil {
				fmt.Fprintf(stderr, "onair diff: %s: %v\n", path, err)
				return 1
			}
			sides[i] = p
		}
	}
	r := diff.Diff(sides[0], sides[1])
	r.Old.Label, r.New.Label = fs.Arg(0), fs.Arg(1)
	var err error
	if *asJSON {
		err = r.WriteJSON(stdout)
	} else {
		err = r.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "onair diff: %v\n", err)
		return 1
	}
	if *detailed && r.Changed() {
		return 2
	}
	return 0
}

// maxPlanBytes bounds a saved plan the CLI reads (the 10,000-source show's
// plan is about 12 MB).
const maxPlanBytes = 256 << 20

// isSavedPlan reports whether path is a file holding a saved plan (JSON)
// rather than a show.
func isSavedPlan(path string) bool {
	data, err := files.ReadRegular(path, maxPlanBytes)
	if err != nil {
		return false
	}
	t := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	return len(t) > 0 && (t[0] == '{' || t[0] == '[' || bytes.Equal(t, []byte("null")))
}

// loadPlanOrShow reads a saved plan (a file whose content is a JSON
// object) or loads and compiles a show. Diagnostics with errors are
// printed to stderr with their snippets.
func loadPlanOrShow(path string, lopts lang.Options, copts compiler.Options, stderr io.Writer) (*plan.Plan, error) {
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		data, err := files.ReadRegular(path, maxPlanBytes)
		if err != nil {
			return nil, err
		}
		if isSavedPlan(path) {
			return loadSavedPlan(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
		}
	}
	show, diags := lang.Load([]string{path}, lopts)
	if diags.HasErrors() {
		writeErrors(stderr, show, diags)
		return nil, fmt.Errorf("the show does not load (%s above)", plural(countErrors(diags), "error"))
	}
	res, cdiags := compiler.Compile(show, copts)
	if cdiags.HasErrors() || res.Plan == nil {
		writeErrors(stderr, show, cdiags)
		return nil, fmt.Errorf("the show does not compile (%s above)", plural(countErrors(cdiags), "error"))
	}
	return res.Plan, nil
}

// loadSavedPlan reads a plan saved with onair plan -out and refuses one
// that is corrupt (no show, no nodes, dangling edges), from another format
// or tool version, or with node kinds this onair does not have: a diff
// against such a plan would report differences the tool versions made, not
// the shows.
func loadSavedPlan(data []byte) (*plan.Plan, error) {
	p, err := plan.LoadVersion(bytes.NewReader(data), version)
	if err != nil {
		return nil, err
	}
	if err := p.CheckKinds(func(k string) bool { _, ok := nodes.Lookup(k); return ok }); err != nil {
		return nil, err
	}
	// Every param as its kind declares it (names, types, ranges), as the
	// compiler checks the plans it writes.
	for _, n := range p.Nodes {
		k, _ := nodes.Lookup(n.Kind)
		if err := k.Validate(n.Params); err != nil {
			return nil, fmt.Errorf("plan: node %s: %v; compile the show again (onair plan -out FILE SHOW)", n.ID, err)
		}
	}
	return p, nil
}

func writeErrors(w io.Writer, show *lang.Show, diags hcl.Diagnostics) {
	var errs hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d)
		}
	}
	var files map[string][]byte
	if show != nil {
		files = show.Files
	}
	lang.WriteDiagnostics(w, files, errs, isTerminal(w))
}

func countErrors(diags hcl.Diagnostics) int {
	n := 0
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			n++
		}
	}
	return n
}

// plural writes "1 error", "3 errors".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
