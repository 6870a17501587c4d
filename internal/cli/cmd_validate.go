package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/lang"
)

func init() {
	register(&command{
		name:    "validate",
		summary: "Check show files: syntax, references, types and ranges. Exit 0 when valid, 1 on errors.",
		usage:   "[-json] [-var NAME=VALUE]... [-var-file FILE]... PATH...",
		run:     runValidate,
	})
}

func runValidate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["validate"], stderr)
	asJSON := fs.Bool("json", false, "print the result as JSON on stdout")
	vf := addVarFlags(fs)
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	// Each PATH is a show; a directory of shows (each file with its own
	// show block, like shows/) is checked file by file.
	var diags hcl.Diagnostics
	files := map[string][]byte{}
	opts := vf.options()
	shows := lang.SplitShows(fs.Args())
	for _, paths := range shows {
		show, d := lang.Load(paths, opts)
		diags = append(diags, d...)
		if show != nil && !d.HasErrors() {
			diags = append(diags, checkEncoders(show)...)
		}
		if show != nil {
			for name, data := range show.Files {
				files[name] = data
			}
		}
	}
	if *asJSON {
		out, err := lang.DiagnosticsJSON(diags)
		if err != nil {
			io.WriteString(stderr, "onair validate: "+err.Error()+"\n")
			return 1
		}
		stdout.Write(append(out, '\n'))
	} else {
		lang.WriteDiagnostics(stderr, files, diags, isTerminal(stderr))
		if !diags.HasErrors() {
			if len(shows) == 1 {
				io.WriteString(stdout, "The show is valid.\n")
			} else {
				fmt.Fprintf(stdout, "The %d shows are valid.\n", len(shows))
			}
		}
	}
	if diags.HasErrors() {
		return 1
	}
	return 0
}

// isTerminal reports whether w is a character device, for colour.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == ""
}
