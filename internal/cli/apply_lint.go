package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/lint"
	"github.com/onairhq/onair/lang"
)

// lintBeforeApply lints the show onair apply is about to send, as onair
// lint would for the backend and profile on air (copts), and prints what
// it finds on stderr: a warning goes on air with the change (a scene the
// CPU cannot draw in its frame period, a layer off the canvas), an error
// keeps the change from being sent. It returns the number of errors. A
// saved plan is not linted: the rules read the show it came from.
func lintBeforeApply(path string, lopts lang.Options, copts compiler.Options, stderr io.Writer) int {
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() && isSavedPlan(path) {
		return 0
	}
	findings, files := lint.Show([]string{path}, lopts, copts)
	lint.Sort(findings)
	errs, warns, _ := lint.Counts(findings)
	if errs+warns == 0 {
		return 0
	}
	fmt.Fprintln(stderr)
	r := &lint.Report{Files: files, Findings: findings, Rules: lint.Infos(), ToolVersion: version}
	if err := r.WriteText(stderr); err != nil {
		fmt.Fprintf(stderr, "onair apply: %v\n", err)
	}
	return errs
}
