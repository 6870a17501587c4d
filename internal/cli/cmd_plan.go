package cli

import (
	"flag"
	"fmt"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/internal/files"
	"io"
	"strings"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

func init() {
	// A saved plan runs only with the onair that compiled it.
	plan.ToolVersion = version
	register(&command{
		name:    "plan",
		summary: "Compile a show into a plan and show it: nodes, loops, threads, fusions and estimates against the GPU profile. Exit 1 when the show has errors or a check fails.",
		usage:   "[-json] [-out FILE] [-summary] [-backend auto|cuda|cpu] [-profile NAME] [-trace PASS] [-var NAME=VALUE]... [-var-file FILE]... PATH...",
		run:     runPlan,
	})
}

// compileFlags are the flags plan and graph share.
type compileFlags struct {
	vars    *varFlags
	backend *string
	profile *string
	trace   *string
}

func addCompileFlags(fs *flag.FlagSet) *compileFlags {
	return &compileFlags{
		vars:    addVarFlags(fs),
		backend: fs.String("backend", "auto", "compile for the `BACKEND`: auto (the first usable here, as onair run picks) or "+strings.Join(backends.Names(), " or ")),
		profile: fs.String("profile", "", "compare against capacity profile `NAME` instead of the show's ("+strings.Join(compiler.ProfileNames(), ", ")+")"),
		trace:   fs.String("trace", "", "print the graph after pass `PASS` on stderr (all: after every pass): "+strings.Join(compiler.PassNames(), ", ")),
	}
}

// check validates the flag values; it returns 2 (usage error) or -1.
func (cf *compileFlags) check(name string, stderr io.Writer) int {
	if _, err := compileBackend(*cf.backend); err != nil {
		fmt.Fprintf(stderr, "onair %s: -backend: %v\n", name, err)
		return 2
	}
	if *cf.profile != "" {
		if _, ok := compiler.LookupProfile(*cf.profile); !ok {
			fmt.Fprintf(stderr, "onair %s: no capacity profile %q; the profiles are %s\n", name, *cf.profile, strings.Join(compiler.ProfileNames(), ", "))
			return 2
		}
	}
	if t := *cf.trace; t != "" && t != "all" {
		ok := false
		for _, p := range compiler.PassNames() {
			ok = ok || p == t
		}
		if !ok {
			fmt.Fprintf(stderr, "onair %s: -trace names no pass %q; the passes are: all, %s\n", name, t, strings.Join(compiler.PassNames(), ", "))
			return 2
		}
	}
	return -1
}

// compileBackend is the backend -backend names: one of the table's, or
// auto, the first usable on this machine (as onair run picks it).
func compileBackend(name string) (*backends.Backend, error) {
	if name != "auto" {
		return backends.Lookup(name)
	}
	be, why := backends.Auto()
	if be == nil {
		return nil, fmt.Errorf("%s; name one of %s", why, strings.Join(backends.Names(), ", "))
	}
	return be, nil
}

// hostProfile is this machine's CPU profile for a backend that draws in
// host memory (a cpu plan is scored against the machine's cores and
// memory), else nil.
func hostProfile(l *nodes.Lowering) *compiler.Profile {
	if l == nil || l.Domain != nodes.Host {
		return nil
	}
	return compiler.HostProfile()
}

// compileShow loads and compiles a show, printing diagnostics on stderr.
// It returns the result and 0, or 1 when the show or a check has errors.
func (cf *compileFlags) compileShow(paths []string, stderr io.Writer) (*compiler.Result, int) {
	be, err := compileBackend(*cf.backend)
	if err != nil {
		fmt.Fprintf(stderr, "onair: -backend: %v\n", err)
		return nil, 2
	}
	return compileShow(paths, cf.vars.options(), compiler.Options{
		ToolVersion: version, Target: be.Lowering, Profile: *cf.profile, HostProfile: hostProfile(be.Lowering),
		Trace: *cf.trace, TraceOut: stderr,
	}, stderr)
}

// compileShow loads the show at paths and compiles it, printing every
// diagnostic on stderr. It returns the result and 0, or 1 when the show or a
// check has errors (the result may then be nil or hold no plan).
func compileShow(paths []string, lopts lang.Options, copts compiler.Options, stderr io.Writer) (*compiler.Result, int) {
	show, diags := lang.Load(paths, lopts)
	var files map[string][]byte
	if show != nil {
		files = show.Files
		if !diags.HasErrors() {
			diags = append(diags, checkEncoders(show)...)
		}
	}
	if diags.HasErrors() {
		lang.WriteDiagnostics(stderr, files, diags, isTerminal(stderr))
		return nil, 1
	}
	res, cdiags := compiler.Compile(show, copts)
	all := append(diags, cdiags...)
	if len(all) > 0 {
		lang.WriteDiagnostics(stderr, files, all, isTerminal(stderr))
	}
	if all.HasErrors() {
		return res, 1
	}
	return res, 0
}

func runPlan(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["plan"], stderr)
	cf := addCompileFlags(fs)
	asJSON := fs.Bool("json", false, "print the plan as JSON instead of text")
	out := fs.String("out", "", "also save the plan's JSON to `FILE` (for onair run and onair diff)")
	summary := fs.Bool("summary", false, "print the summary only, not the detail by group")
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if rc := cf.check("plan", stderr); rc >= 0 {
		return rc
	}
	res, rc := cf.compileShow(fs.Args(), stderr)
	if rc != 0 {
		return rc
	}
	data, err := plan.Marshal(res.Plan)
	if err != nil {
		fmt.Fprintf(stderr, "onair plan: %v\n", err)
		return 1
	}
	if *out != "" {
		if err := files.WriteAtomic(*out, data, 0o644); err != nil {
			fmt.Fprintf(stderr, "onair plan: saving the plan: %v\n", err)
			return 1
		}
	}
	if *asJSON {
		stdout.Write(data)
		return 0
	}
	if err := compiler.WriteText(stdout, res.Plan, *summary); err != nil {
		fmt.Fprintf(stderr, "onair plan: %v\n", err)
		return 1
	}
	if *out != "" {
		fmt.Fprintf(stdout, "\nSaved the plan to %s.\n", *out)
	}
	return 0
}
