package cli

import (
	"fmt"
	"io"

	"github.com/onairhq/onair/compiler"
)

func init() {
	register(&command{
		name:    "graph",
		summary: "Print a show's compiled graph for Graphviz (dot) or Mermaid: formats and queue sizes on edges, event loops as clusters.",
		usage:   "[-format dot|mermaid] [-backend auto|cuda|cpu] [-profile NAME] [-trace PASS] [-var NAME=VALUE]... [-var-file FILE]... PATH...",
		run:     runGraph,
	})
}

func runGraph(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["graph"], stderr)
	cf := addCompileFlags(fs)
	format := fs.String("format", "dot", "output `FORMAT`: dot or mermaid")
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if *format != "dot" && *format != "mermaid" {
		fmt.Fprintf(stderr, "onair graph: -format must be dot or mermaid, got %q\n", *format)
		return 2
	}
	if rc := cf.check("graph", stderr); rc >= 0 {
		return rc
	}
	res, rc := cf.compileShow(fs.Args(), stderr)
	if rc != 0 {
		return rc
	}
	var err error
	if *format == "mermaid" {
		err = compiler.WriteMermaid(stdout, res.Plan)
	} else {
		err = compiler.WriteDot(stdout, res.Plan)
	}
	if err != nil {
		fmt.Fprintf(stderr, "onair graph: %v\n", err)
		return 1
	}
	return 0
}
