// Package cli is onair's command line: each command registers itself in init
// from a cmd_*.go file of its own or of its family (cmd_control.go: status
// and cut); Main dispatches. The root main.go only
// calls Main.
package cli

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/onairhq/onair/lang"
)

// version is set at build time with -ldflags "-X github.com/onairhq/onair/internal/cli.version=...".
var version = defaultVersion // cmd_version.go: or the module version go install recorded

// command is one subcommand of onair.
type command struct {
	name    string
	summary string // one line for `onair help`
	usage   string // the synopsis after "onair NAME"
	// run parses its own flags from args and returns the process exit code.
	run func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("onair: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// newFlags returns a flag set for a command whose -h prints the command's
// usage and flags on stderr.
func newFlags(c *command, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("onair "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: onair %s %s\n\n%s\n", c.name, c.usage, c.summary)
		var any bool
		fs.VisitAll(func(*flag.Flag) { any = true })
		if any {
			fmt.Fprintln(stderr, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args and maps the outcome to an exit code: -1 means go
// on, 0 means -h was asked for, 2 means bad flags.
func parseFlags(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	// Go's flags stop at the first path: a flag written after it would be
	// taken for a file name. Say so instead.
	for _, a := range fs.Args() {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && fs.Lookup(name) != nil {
			fmt.Fprintf(fs.Output(), "%s: flag %s comes after the paths; put flags first, as in: %s %s ... PATH\n", fs.Name(), a, fs.Name(), a)
			return 2
		}
	}
	return -1
}

func init() {
	register(&command{
		name:    "help",
		summary: "Show the list of commands, or one command's usage.",
		usage:   "[COMMAND]",
		run: func(args []string, stdout, stderr io.Writer) int {
			if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
				fmt.Fprintf(stderr, "usage: onair help [COMMAND]\n\nShow the list of commands, or one command's usage.\n")
				return 0
			}
			if len(args) > 0 {
				c, ok := commands[args[0]]
				if !ok {
					fmt.Fprintf(stderr, "onair help: unknown command %q%s\n", args[0], suggestCommand(args[0]))
					return 2
				}
				return c.run([]string{"-h"}, stdout, stdout)
			}
			printHelp(stdout)
			return 0
		},
	})
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "onair %s: a compiler and runtime for live GPU video mixers.\n\nusage: onair COMMAND [flags] [args]\n\ncommands:\n", version)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'onair COMMAND -h' for a command's flags.")
}

// suggestCommand returns ` (did you mean "x"?)` for a near miss, or "".
func suggestCommand(name string) string {
	best, bestD := "", 3
	for n := range commands {
		if d := lang.EditDistance(name, n); d < bestD || (d == bestD && n < best) {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printHelp(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		printHelp(stdout)
		return 0
	case "-version", "--version":
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "onair: unknown command %q%s\nRun 'onair help' for the list.\n", name, suggestCommand(strings.TrimLeft(name, "-")))
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

// Main runs the command args name and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int { return run(args, stdout, stderr) }
