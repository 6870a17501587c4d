// Command onair is a declarative compiler and runtime for live GPU video
// mixers: it validates a show written in HCL, compiles it into a plan,
// diffs and lints plans, and runs them on CUDA or on the embedded CPU
// backend. The commands live in internal/cli, one file each.
package main

import (
	"os"

	"github.com/onairhq/onair/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
