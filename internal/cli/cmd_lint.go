package cli

import (
	"fmt"
	"github.com/onairhq/onair/internal/backends"
	"io"
	"strings"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/lint"
	"github.com/onairhq/onair/lang"
)

func init() {
	register(&command{
		name:    "lint",
		summary: "Check shows against the compiler's checks and the lint rules; exit 1 on errors (or warnings with -strict).",
		usage: "[-format text|json|sarif|github] [-strict] [-backend auto|cuda|cpu] [-profile NAME] [-var NAME=VALUE]... [-var-file FILE]... PATH...\n" +
			"       onair lint -explain [RULE-ID]...\n\n" +
			"Each PATH is a show: a .hcl file, or a directory whose .hcl files make one show.\n" +
			"A directory in which several files each hold a show block is a directory of shows;\n" +
			"each of its files is linted on its own. Silence a finding with a comment on the line\n" +
			"before it (or at the end of its line): # onair-lint-ignore RULE-ID: reason",
		run: runLint,
	})
}

func runLint(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["lint"], stderr)
	format := fs.String("format", "text", "output `FORMAT`: "+strings.Join(lint.Formats, ", "))
	strict := fs.Bool("strict", false, "exit 1 on warnings too")
	explain := fs.Bool("explain", false, "print what the named rules check (all rules when none is named) and exit")
	profile := fs.String("profile", "", "capacity profile `NAME` to check against, overriding the show's")
	vf := addVarFlags(fs)
	backend := fs.String("backend", "auto", "check shows as compiled for `BACKEND`: auto (the first usable here, as onair run picks) or "+strings.Join(backends.Names(), " or "))
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if *explain {
		return lintExplain(fs.Args(), stdout, stderr)
	}
	if !validFormat(*format) {
		fmt.Fprintf(stderr, "onair lint: unknown -format %q: use one of %s\n", *format, strings.Join(lint.Formats, ", "))
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	shows := lang.SplitShows(fs.Args())
	report := &lint.Report{Files: map[string][]byte{}, Rules: lint.Infos(), ToolVersion: version}
	be, err := compileBackend(*backend)
	if err != nil {
		fmt.Fprintf(stderr, "onair lint: -backend: %v\n", err)
		return 2
	}
	copts := compiler.Options{ToolVersion: version, Profile: *profile, Target: be.Lowering, HostProfile: hostProfile(be.Lowering)}
	for _, paths := range shows {
		findings, files := lint.Show(paths, vf.options(), copts)
		report.Findings = append(report.Findings, findings...)
		for n, b := range files {
			report.Files[n] = b
		}
	}
	lint.Sort(report.Findings)
	out := stdout
	if *format == "text" {
		out = stderr // findings are diagnostics; the summary line follows them
	}
	if err := report.Write(out, *format); err != nil {
		fmt.Fprintf(stderr, "onair lint: %v\n", err)
		return 1
	}
	errs, warns, _ := lint.Counts(report.Findings)
	if errs > 0 || (*strict && warns > 0) {
		return 1
	}
	return 0
}

func validFormat(f string) bool {
	for _, x := range lint.Formats {
		if x == f {
			return true
		}
	}
	return false
}

func lintExplain(ids []string, stdout, stderr io.Writer) int {
	if len(ids) == 0 {
		fmt.Fprintln(stdout, "Rules (onair lint -explain RULE-ID for one):")
		for _, r := range lint.Infos() {
			sev, ign := lint.SeverityName(r.Severity), ""
			switch {
			case !r.Ignorable:
				ign = ", not ignorable"
			case r.WarningsOnly:
				sev, ign = "error or warning", ", only warnings ignorable"
			}
			fmt.Fprintf(stdout, "  %-24s %s%s: %s\n", r.ID, sev, ign, r.Title())
		}
		return 0
	}
	rc := 0
	for i, id := range ids {
		text, err := lint.Explain(id)
		if err != nil {
			fmt.Fprintf(stderr, "onair lint: %v\n", err)
			rc = 2
			continue
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		io.WriteString(stdout, text)
	}
	return rc
}
