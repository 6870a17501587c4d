package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/onairhq/onair/control"
)

func init() {
	register(&command{
		name:    "status",
		summary: "Print the status of a running show (buses, sources, loops, edges, timing).",
		usage:   "[-addr HOST:PORT] [-token TOKEN]",
		run:     runStatus,
	})
	register(&command{
		name:    "cut",
		summary: "Put a scene on a bus of a running show: a cut, or a fade or wipe with -fade/-wipe.",
		usage:   "[-addr HOST:PORT] [-token TOKEN] [-fade D | -wipe D] BUS SCENE",
		run:     runCut,
	})
}

// controlCLI is the flags the commands that talk to a running show share.
type controlCLI struct {
	fs         *flag.FlagSet
	client     control.Client
	fade, wipe time.Duration
}

func newControlCLI(c *command, stderr io.Writer) *controlCLI {
	cc := &controlCLI{fs: newFlags(c, stderr)}
	cc.fs.StringVar(&cc.client.Addr, "addr", control.DefaultAddr, "address of the show's status server (onair run -listen)")
	cc.fs.StringVar(&cc.client.Token, "token", os.Getenv("ONAIR_TOKEN"), "token for a server on a non-loopback address (default $ONAIR_TOKEN)")
	if c.name == "cut" {
		cc.fs.DurationVar(&cc.fade, "fade", 0, "fade to the scene over this duration instead of cutting")
		cc.fs.DurationVar(&cc.wipe, "wipe", 0, "wipe to the scene over this duration instead of cutting")
	}
	return cc
}

// transition is the kind and duration -fade and -wipe ask for.
func (cc *controlCLI) transition() (string, time.Duration) {
	switch {
	case cc.fade > 0:
		return "fade", cc.fade
	case cc.wipe > 0:
		return "wipe", cc.wipe
	}
	return "cut", 0
}

func runStatus(args []string, stdout, stderr io.Writer) int {
	cc := newControlCLI(commands["status"], stderr)
	if rc := parseFlags(cc.fs, args); rc >= 0 {
		return rc
	}
	if cc.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "onair status: unexpected arguments %v\n", cc.fs.Args())
		return 2
	}
	b, err := cc.client.Status()
	if err != nil {
		fmt.Fprintf(stderr, "onair status: %v\n", err)
		return 1
	}
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		out.Reset()
		out.Write(b)
	}
	stdout.Write(bytes.TrimRight(out.Bytes(), "\n"))
	fmt.Fprintln(stdout)
	return 0
}

func runCut(args []string, stdout, stderr io.Writer) int {
	cc := newControlCLI(commands["cut"], stderr)
	if rc := parseFlags(cc.fs, args); rc >= 0 {
		return rc
	}
	a := cc.fs.Args()
	if len(a) != 2 {
		fmt.Fprintln(stderr, "usage: onair cut [-fade D | -wipe D] BUS SCENE   (for example: onair cut bus.pgm scene.grid)")
		return 2
	}
	if cc.fade > 0 && cc.wipe > 0 {
		fmt.Fprintln(stderr, "onair cut: -fade and -wipe exclude each other")
		return 2
	}
	kind, d := cc.transition()
	if err := cc.client.Switch(a[0], a[1], kind, d); err != nil {
		fmt.Fprintf(stderr, "onair cut: %v\n", err)
		return 1
	}
	if d > 0 {
		fmt.Fprintf(stdout, "%s %s to %s over %v\n", kind, a[0], a[1], d)
	} else {
		fmt.Fprintf(stdout, "cut %s to %s\n", a[0], a[1])
	}
	return 0
}
