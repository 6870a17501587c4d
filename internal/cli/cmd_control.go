package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/nodes/show"
)

func init() {
	register(&command{
		name:    "status",
		summary: "Print the status of a running show (buses, sources, loops, edges, timing).",
		usage:   "[-addr HOST:PORT|https://HOST:PORT] [-token TOKEN] [-tls-ca FILE] [-json | -watch]",
		run:     runStatus,
	})
	register(&command{
		name:    "cut",
		summary: "Put a scene on a bus of a running show (on an AUX bus, one of its routes: a scene or a source): a cut, or a fade or wipe with -fade/-wipe.",
		usage:   "[-addr HOST:PORT|https://HOST:PORT] [-token TOKEN] [-tls-ca FILE] [-fade D | -wipe D] [-at TIMECODE] BUS SCENE|SOURCE",
		run:     runCut,
	})
}

// controlCLI is the flags the commands that talk to a running show share.
type controlCLI struct {
	fs         *flag.FlagSet
	client     control.Client
	fade, wipe string // durations as written: the show reads them (frames or seconds)
	json       bool
	watch      bool
	at         string
}

func newControlCLI(c *command, stderr io.Writer) *controlCLI {
	cc := &controlCLI{fs: newFlags(c, stderr)}
	cc.fs.StringVar(&cc.client.Addr, "addr", control.DefaultAddr, "address of the show's status server (onair run -listen)")
	cc.fs.StringVar(&cc.client.Token, "token", os.Getenv("ONAIR_TOKEN"), "token for a server on a non-loopback address (default $ONAIR_TOKEN)")
	cc.fs.StringVar(&cc.client.CA, "tls-ca", "", "trust the CA certificates in this PEM `FILE` for an https:// -addr (default: the system's)")
	if c.name == "status" {
		cc.fs.BoolVar(&cc.json, "json", false, "print the whole status as JSON (every loop, edge, node and thread)")
		cc.fs.BoolVar(&cc.watch, "watch", false, "follow the show's events (switches, tally, source errors, missed deadlines) as they happen, until Ctrl-C")
	}
	if c.name == "cut" {
		cc.fs.StringVar(&cc.fade, "fade", "", "fade to the scene over this duration instead of cutting: frames (15f, or 15) or seconds (0.5s, 500ms)")
		cc.fs.StringVar(&cc.wipe, "wipe", "", "wipe to the scene over this duration instead of cutting: frames (15f, or 15) or seconds (0.5s, 500ms)")
		cc.fs.StringVar(&cc.at, "at", "", "switch on exactly the tick of this `TIMECODE` (HH:MM:SS:FF, HH:MM:SS;FF at drop-frame rates; onair status shows the show's) instead of the next; a tick already drawn is refused")
	}
	return cc
}

// transition is the kind and duration -fade and -wipe ask for.
func (cc *controlCLI) transition() (string, string) {
	switch {
	case cc.fade != "":
		return "fade", cc.fade
	case cc.wipe != "":
		return "wipe", cc.wipe
	}
	return "cut", ""
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
	if cc.watch {
		if cc.json {
			fmt.Fprintln(stderr, "onair status: -json and -watch exclude each other")
			return 2
		}
		return watchEvents(&cc.client, stdout, stderr)
	}
	b, err := cc.client.Status()
	if err != nil {
		fmt.Fprintf(stderr, "onair status: %v\n", err)
		return 1
	}
	if !cc.json {
		var rep show.StatusReport
		if err := json.Unmarshal(b, &rep); err != nil {
			fmt.Fprintf(stderr, "onair status: the server's answer is not a show's status: %v\n", err)
			return 1
		}
		writeStatus(stdout, &rep)
		return 0
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
	if cc.fade != "" && cc.wipe != "" {
		fmt.Fprintln(stderr, "onair cut: -fade and -wipe exclude each other")
		return 2
	}
	kind, d := cc.transition()
	if err := cc.client.SwitchAt(a[0], a[1], kind, d, cc.at); err != nil {
		fmt.Fprintf(stderr, "onair cut: %v\n", err)
		return 1
	}
	if cc.at != "" {
		fmt.Fprintf(stdout, "%s %s to %s at %s\n", kind, a[0], a[1], cc.at)
		return 0
	}
	if d != "" {
		fmt.Fprintf(stdout, "%s %s to %s over %s\n", kind, a[0], a[1], d)
	} else {
		fmt.Fprintf(stdout, "cut %s to %s\n", a[0], a[1])
	}
	return 0
}

// writeStatus prints what an operator looks at first: the process, the
// buses with their timing, the outputs, the sources, and the loops.
func writeStatus(w io.Writer, r *show.StatusReport) {
	fmt.Fprintf(w, "%s on the %s backend, up %s: %d threads, %.1f %% of a core, %.0f MB resident\n\n",
		r.Show, r.Backend, r.Uptime, r.Process.Threads, r.Process.CPUPercent, float64(r.Process.RSSBytes)/1e6)
	if tc := r.Timecode; tc.Now != "" {
		fmt.Fprintf(w, "Timecode %s (tick %d), %s, from %s (%s)", tc.Now, tc.Tick, tc.Rate, tc.Start, strings.ReplaceAll(tc.Origin, "_", " "))
		for _, a := range sortedBusKeys(tc.Buses) {
			if t := tc.Buses[a]; t != "" {
				fmt.Fprintf(w, "; %s %s", a, t)
			}
		}
		fmt.Fprintln(w)
	}
	if ar := r.AsRun; ar != nil {
		fmt.Fprintf(w, "As-run log %s: %d lines, %d lost", ar.Path, ar.Lines, ar.Lost)
		if ar.LastError != "" {
			fmt.Fprintf(w, " (last error: %s)", ar.LastError)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	r.Summary.WriteText(w)
	fmt.Fprintln(w, "Playout timing (draw, in frame periods):")
	for _, b := range r.Summary.Buses {
		fmt.Fprintf(w, "  %-22s", b.Address)
		for i, n := range b.Timing.Draw {
			if n > 0 {
				fmt.Fprintf(w, " %s:%d", b.Timing.Buckets[i], n)
			}
		}
		fmt.Fprintf(w, "  (longest %.1f ms)\n", b.Timing.MaxDrawMs)
	}
	fmt.Fprintln(w, "Loops:")
	for _, l := range r.Runtime.Loops {
		fmt.Fprintf(w, "  %-10s %8d wake-ups, %8d handlers, handler p99 %s, timers late p99 %s, cpu %.2f s, run queue %.2f s\n",
			l.Name, l.Wakeups, l.Handlers, bucketBound(l.HandlerNs.P99Ns), bucketBound(l.TimerLateNs.P99Ns), float64(l.Thread.CPUNs)/1e9, float64(l.Thread.RunQueueNs)/1e9)
	}
	var edges []string
	for _, e := range r.Runtime.Edges {
		if e.Drops > 0 || e.Occupied >= e.Capacity {
			edges = append(edges, fmt.Sprintf("  %-60s %d/%d queued, %d drops (%s)", e.Name, e.Occupied, e.Capacity, e.Drops, e.Policy))
		}
	}
	fmt.Fprintf(w, "Edges: %d, %d with drops or full now\n", len(r.Runtime.Edges), len(edges))
	for _, l := range edges {
		fmt.Fprintln(w, l)
	}
	var failed []string
	for _, g := range r.Runtime.Groups {
		if g.State != "running" || g.Restarts > 0 {
			failed = append(failed, fmt.Sprintf("%s (%s, %d restarts)", g.Name, g.State, g.Restarts))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "Groups not simply running: %s\n", strings.Join(failed, ", "))
	}
}

func sortedBusKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// bucketBound writes a quantile the runtime's histograms give as the
// upper bound of a power-of-two bucket (runtime.HistogramStatus) as the
// bound it is, to two figures: 8388607 ns is "≤ 8.4 ms", not 8388.6 µs.
func bucketBound(ns int64) string {
	if ns <= 0 {
		return "0"
	}
	v, unit := float64(ns), "ns"
	for _, u := range []struct {
		div  float64
		name string
	}{{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}} {
		if float64(ns) >= u.div {
			v, unit = float64(ns)/u.div, u.name
			break
		}
	}
	if v < 9.95 {
		return fmt.Sprintf("≤ %.1f %s", v, unit)
	}
	return fmt.Sprintf("≤ %.0f %s", v, unit)
}
