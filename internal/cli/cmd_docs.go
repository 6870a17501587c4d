package cli

import (
	"io"

	"github.com/onairhq/onair/lang"
)

func init() {
	register(&command{
		name:    "docs",
		summary: "Print the show language reference: every block, kind, attribute, type, default and range.",
		usage:   "[-markdown]",
		run: func(args []string, stdout, stderr io.Writer) int {
			fs := newFlags(commands["docs"], stderr)
			md := fs.Bool("markdown", false, "print Markdown (the text of docs/REFERENCE.md)")
			if rc := parseFlags(fs, args); rc >= 0 {
				return rc
			}
			if fs.NArg() != 0 {
				fs.Usage()
				return 2
			}
			io.WriteString(stdout, lang.Reference(*md))
			return 0
		},
	})
}
