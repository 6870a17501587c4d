package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/onairhq/onair/internal/files"
	"io"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/runtime"
)

func init() {
	register(&command{
		name:    "bench",
		summary: "Run a show for a fixed time and measure it the way the seed articles did: CPU, threads, run-queue time, CPU by group, deadlines and drops, GPU; a table and JSON.",
		usage:   "[-backend auto|BACKEND] [-warmup D] [-window D] [-switch-every D] [-json FILE] [-var NAME=VALUE]... PATH...",
		run:     runBench,
	})
}

// BenchResult is what `onair bench` measures over its window.
type BenchResult struct {
	Show      string  `json:"show"`
	Backend   string  `json:"backend"`
	Sources   int     `json:"sources"`
	Buses     int     `json:"buses"`
	WarmupS   float64 `json:"warmup_s"`
	WindowS   float64 `json:"window_s"`
	SwitchesS float64 `json:"switch_every_s,omitempty"`
	// Process CPU over the window, % of one core.
	CPUPercent    float64 `json:"cpu_percent"`
	UserPercent   float64 `json:"user_percent"`
	SystemPercent float64 `json:"system_percent"`
	Threads       int     `json:"threads"`
	// RunQueueMs is the time the process's threads spent runnable without
	// a CPU during the window (schedstat), summed.
	RunQueueMs float64 `json:"run_queue_ms"`
	// GroupCPU is % of one core by what the threads do: sources (readers,
	// uploads, decoders on threads of their own), pacing loops, the default
	// loop, compositors, outputs; "other" is the rest (Go's runtime, reader
	// pools, GC).
	GroupCPU map[string]float64 `json:"group_cpu_percent"`
	// Per bus over the window.
	BusFrames      uint64 `json:"bus_frames"`
	MissedDeadline uint64 `json:"missed_deadlines"`
	Repeats        uint64 `json:"repeats"`
	Skipped        uint64 `json:"skipped"`
	OutputDrops    uint64 `json:"output_drops"`
	SourceDrops    uint64 `json:"source_drops"`
	Underruns      uint64 `json:"underruns"`
	PinnedBytes    int64  `json:"locked_host_bytes"` // VmLck + VmPin: page-locked host memory
	RSSBytes       int64  `json:"rss_bytes"`
	Device         any    `json:"device,omitempty"` // the GPU (NVML) at the end of the window
	// Browser is the browser sources' counts over the window (nil for a
	// show without any).
	Browser *BenchBrowser `json:"browser,omitempty"`
}

// BenchBrowser is what a show's browser sources did over the window, all
// together: ImportsPerS is the seeds' churn figure, new buffers imported a
// second (0 once warm, with the return queue); an import is released when
// its buffer dies (the producer's pool destroyed it) or idles past the TTL.
type BenchBrowser struct {
	Sources        int     `json:"sources"`
	Frames         uint64  `json:"frames"`
	Converted      uint64  `json:"converted"`
	Imports        uint64  `json:"imports"`
	ImportsPerS    float64 `json:"imports_per_s"`
	ImportReleases uint64  `json:"import_releases"`
	ImportsLive    int64   `json:"imports_live"` // at the end of the window
	Dropped        uint64  `json:"dropped"`
}

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["bench"], stderr)
	vars := addVarFlags(fs)
	backend := fs.String("backend", "auto", "`BACKEND` to run on: auto or one of "+strings.Join(backends.Names(), ", "))
	warmup := fs.Duration("warmup", 10*time.Second, "run this long before measuring (the seeds read 20 s a few minutes after start)")
	window := fs.Duration("window", 20*time.Second, "measure over this long")
	every := fs.Duration("switch-every", 0, "switch every Program bus to its next scene this often, cut, fade and wipe in turn (0: no switches)")
	out := fs.String("json", "", "also write the result as JSON to `FILE`")
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if *warmup < 0 || *window <= 0 || *every < 0 {
		fmt.Fprintln(stderr, "onair bench: -warmup and -switch-every must be 0 or more, -window more than 0")
		return 2
	}
	be, why := pickBackend(*backend)
	if be == nil {
		fmt.Fprintf(stderr, "onair bench: %s\n", why)
		return 1
	}
	fmt.Fprintf(stdout, "backend: %s (%s)\n", be.Name, why)
	res, rc := compileShow(fs.Args(), vars.options(), compiler.Options{ToolVersion: version, Target: be.Lowering}, stderr)
	if rc != 0 {
		return rc
	}
	p := res.Plan
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	running, err := be.Start(context.Background(), p, nil, show.Options{BaseDir: res.Show.Dir}, log)
	if err != nil {
		fmt.Fprintf(stderr, "onair bench: %v\n", err)
		return 1
	}
	stopSwitching := make(chan struct{})
	if *every > 0 {
		go switchEvery(running, *every, stopSwitching)
	}
	fmt.Fprintf(stdout, "on air: %s; measuring %v after %v\n", p.Show, *window, *warmup)
	wait := func(d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case <-running.Failed():
			return false
		}
	}
	if !wait(*warmup) {
		fmt.Fprintf(stderr, "onair bench: %v\n", running.Err())
		running.Stop()
		return 1
	}
	a := takeSnapshot(running)
	if !wait(*window) {
		fmt.Fprintf(stderr, "onair bench: %v\n", running.Err())
		running.Stop()
		return 1
	}
	b := takeSnapshot(running)
	close(stopSwitching)
	r := b.since(a)
	r.Show, r.Backend, r.WarmupS, r.SwitchesS = p.Show, be.Name, warmup.Seconds(), every.Seconds()
	for _, n := range p.Nodes {
		if k, ok := nodes.Lookup(n.Kind); ok && k.Has(nodes.Compositor) {
			r.Buses++
		}
	}
	r.Sources = len(b.sum.Sources)
	if err := running.Stop(); err != nil {
		fmt.Fprintf(stderr, "onair bench: stopping: %v\n", err)
	}
	r.write(stdout)
	if *out != "" {
		data, _ := json.MarshalIndent(r, "", "  ")
		if err := files.WriteAtomic(*out, append(data, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "onair bench: %v\n", err)
			return 1
		}
	}
	return 0
}

// switchEvery switches every Program bus to its next scene, cut, fade and
// wipe in turn (500 ms transitions), until stop is closed.
func switchEvery(r show.Running, d time.Duration, stop chan struct{}) {
	kinds := []string{"cut", "fade", "wipe"}
	t := time.NewTicker(d)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for _, b := range r.Summary().Buses {
			if b.Kind != "program" {
				continue
			}
			scenes := busScenes(r, b.Address)
			if len(scenes) < 2 {
				continue
			}
			next := scenes[(indexOf(scenes, b.OnAir)+1)%len(scenes)]
			dur := time.Duration(0)
			if kinds[i%3] != "cut" {
				dur = 500 * time.Millisecond
			}
			r.Switch(b.Address, next, kinds[i%3], dur)
		}
	}
}

// busScenes reads the scenes a bus may show from the plan it serves.
func busScenes(r show.Running, bus string) []string {
	var p struct {
		Nodes []struct {
			Kind    string         `json:"kind"`
			Address string         `json:"address"`
			Params  map[string]any `json:"params"`
		} `json:"nodes"`
	}
	json.Unmarshal(r.Plan(), &p)
	for _, n := range p.Nodes {
		if n.Kind == "compositor" && n.Address == bus {
			var out []string
			if l, ok := n.Params["scenes"].([]any); ok {
				for _, s := range l {
					out = append(out, fmt.Sprint(s))
				}
			}
			return out
		}
	}
	return nil
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

// snapshot is one reading of the running show.
type snapshot struct {
	at     time.Time
	usage  runtime.Usage
	sum    show.Summary
	status show.StatusReport
	groups map[string]int64 // CPU ns by group
	queue  int64            // run-queue ns, all threads
	locked int64
}

func takeSnapshot(r show.Running) snapshot {
	s := snapshot{at: time.Now(), usage: runtime.ReadUsage(), sum: r.Summary(), groups: map[string]int64{}}
	s.status, _ = r.Status().(show.StatusReport)
	rs := s.status.Runtime
	counted := map[int]bool{}
	for _, l := range rs.Loops {
		g := "pacing loops"
		if l.Name == "default" {
			g = "default loop"
		}
		s.groups[g] += l.Thread.CPUNs
		counted[l.Thread.Tid] = true
	}
	for _, n := range rs.Nodes {
		g := "sources"
		if k, ok := nodes.Lookup(n.Kind); ok {
			switch {
			case k.Has(nodes.Compositor):
				g = "compositors"
			case k.Has(nodes.Sink):
				g = "outputs"
			case k.Has(nodes.Decoder):
				g = "decode"
			}
		}
		for _, t := range n.Threads {
			s.groups[g] += t.CPUNs
			counted[t.Tid] = true
		}
	}
	var all int64
	for _, t := range rs.Threads {
		s.queue += t.RunQueueNs
		all += t.CPUNs
	}
	var mine int64
	for _, v := range s.groups {
		mine += v
	}
	s.groups["other"] = all - mine
	s.locked = lockedBytes()
	return s
}

// lockedBytes reads the page-locked memory of the process (VmLck, VmPin).
func lockedBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	var n int64
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "VmLck:" || f[0] == "VmPin:") {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			n += kb * 1024
		}
	}
	return n
}

func (b snapshot) since(a snapshot) BenchResult {
	d := b.at.Sub(a.at)
	pct := func(ns int64) float64 { return 100 * float64(ns) / float64(d.Nanoseconds()) }
	r := BenchResult{WindowS: d.Seconds(), GroupCPU: map[string]float64{},
		UserPercent:   pct(int64(b.usage.User - a.usage.User)),
		SystemPercent: pct(int64(b.usage.System - a.usage.System)),
		Threads:       b.usage.Threads, RSSBytes: b.usage.RSSBytes, PinnedBytes: b.locked,
		RunQueueMs: float64(b.queue-a.queue) / 1e6, Device: b.status.Device,
	}
	r.CPUPercent = r.UserPercent + r.SystemPercent
	for g, v := range b.groups {
		r.GroupCPU[g] = pct(v - a.groups[g])
	}
	busA := map[string]show.BusSummary{}
	for _, x := range a.sum.Buses {
		busA[x.Address] = x
	}
	for _, x := range b.sum.Buses {
		y := busA[x.Address]
		r.BusFrames += x.Ticks - y.Ticks
		r.MissedDeadline += x.Missed - y.Missed
		r.Repeats += x.Repeats - y.Repeats
		r.Skipped += x.Skipped - y.Skipped
		r.OutputDrops += x.OutputDrops - y.OutputDrops
	}
	srcA := map[string]show.SourceSummary{}
	for _, x := range a.sum.Sources {
		srcA[x.Address] = x
	}
	for _, x := range b.sum.Sources {
		y := srcA[x.Address]
		r.SourceDrops += x.Drops - y.Drops
		r.Underruns += x.Underruns - y.Underruns
		if x.Browser == nil {
			continue
		}
		if r.Browser == nil {
			r.Browser = &BenchBrowser{}
		}
		var was show.BrowserSummary
		if y.Browser != nil {
			was = *y.Browser
		}
		bb := r.Browser
		bb.Sources++
		bb.Frames += x.Browser.Frames - was.Frames
		bb.Converted += x.Browser.Converted - was.Converted
		bb.Imports += x.Browser.Imports - was.Imports
		bb.ImportReleases += x.Browser.ImportReleases - was.ImportReleases
		bb.ImportsLive += x.Browser.ImportsLive
		bb.Dropped += x.Browser.Dropped - was.Dropped
	}
	if r.Browser != nil {
		r.Browser.ImportsPerS = float64(r.Browser.Imports) / d.Seconds()
	}
	return r
}

func (r BenchResult) write(w io.Writer) {
	fmt.Fprintf(w, "\n%s on %s: %d sources, %d buses; %.0f s measured after %.0f s\n", r.Show, r.Backend, r.Sources, r.Buses, r.WindowS, r.WarmupS)
	fmt.Fprintf(w, "  CPU               %6.1f %% of one core (user %.1f %%, system %.1f %%)\n", r.CPUPercent, r.UserPercent, r.SystemPercent)
	fmt.Fprintf(w, "  threads           %6d\n", r.Threads)
	fmt.Fprintf(w, "  run queue         %6.1f ms (all threads, over the window)\n", r.RunQueueMs)
	groups := make([]string, 0, len(r.GroupCPU))
	for g := range r.GroupCPU {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		fmt.Fprintf(w, "    %-15s %6.1f %%\n", g, r.GroupCPU[g])
	}
	fmt.Fprintf(w, "  bus frames        %6d, %d missed deadlines, %d repeats, %d skipped, %d output drops\n", r.BusFrames, r.MissedDeadline, r.Repeats, r.Skipped, r.OutputDrops)
	fmt.Fprintf(w, "  sources           %6d drops, %d underruns\n", r.SourceDrops, r.Underruns)
	if b := r.Browser; b != nil {
		fmt.Fprintf(w, "  browser sources   %6d: %d frames, %d converted, %d dropped; %d imports (%.2f a second), %d released, %d live\n",
			b.Sources, b.Frames, b.Converted, b.Dropped, b.Imports, b.ImportsPerS, b.ImportReleases, b.ImportsLive)
	}
	fmt.Fprintf(w, "  page-locked host  %6.0f MB, resident %.0f MB\n", float64(r.PinnedBytes)/1e6, float64(r.RSSBytes)/1e6)
	if r.Device != nil {
		data, _ := json.Marshal(r.Device)
		fmt.Fprintf(w, "  device            %s\n", data)
	}
}
