package cli

import (
	"fmt"
	"github.com/onairhq/onair/internal/backends"
	"io"

	"github.com/onairhq/onair/nodes"
)

func init() {
	register(&command{
		name:    "nodes",
		summary: "Print the reference of every node kind: parameters, traits, formats and readiness, from the registry's declarations.",
		usage:   "[-markdown]",
		run: func(args []string, stdout, stderr io.Writer) int {
			fs := newFlags(commands["nodes"], stderr)
			md := fs.Bool("markdown", false, "print Markdown (for docs/)")
			if rc := parseFlags(fs, args); rc >= 0 {
				return rc
			}
			if fs.NArg() > 0 {
				fmt.Fprintf(stderr, "onair nodes: takes no arguments, got %q\n", fs.Args())
				return 2
			}
			if err := nodes.WriteReference(stdout, *md, backends.RunsOn); err != nil {
				fmt.Fprintf(stderr, "onair nodes: %v\n", err)
				return 1
			}
			return 0
		},
	})
}
