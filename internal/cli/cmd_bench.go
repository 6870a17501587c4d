package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/internal/files"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/runtime"
)

func init() {
	register(&command{
		name:    "bench",
		summary: "Run a show for a fixed time and measure it the way the seed articles did: CPU, threads, run-queue time, CPU by group, deadlines and drops per bus, GPU; a table and JSON. -compare puts two results side by side.",
		usage:   "[-backend auto|BACKEND] [-warmup D] [-window D] [-switch-every D] [-json FILE] [-cpuprofile FILE] [-beyond-capacity] [-fail-on-miss] [-var NAME=VALUE]... PATH...\n       onair bench -compare BEFORE.json AFTER.json",
		run:     runBench,
	})
}

// exitMissed is bench's exit status when -fail-on-miss is set and the
// window had a missed deadline, a repeat or a drop: the source-limit ramp
// stops there.
const exitMissed = 3

// BenchResult is what `onair bench` measures over its window.
type BenchResult struct {
	Show      string  `json:"show"`
	Backend   string  `json:"backend"`
	Sources   int     `json:"sources"`
	Buses     int     `json:"buses"`
	FrameRate string  `json:"frame_rate"`
	WarmupS   float64 `json:"warmup_s"`
	WindowS   float64 `json:"window_s"`
	SwitchesS float64 `json:"switch_every_s,omitempty"`
	// Process CPU over the window, % of one core.
	CPUPercent    float64 `json:"cpu_percent"`
	UserPercent   float64 `json:"user_percent"`
	SystemPercent float64 `json:"system_percent"`
	Threads       int     `json:"threads"`
	// RunQueueMs is the time the process's threads spent runnable without
	// a CPU during the window (schedstat), summed; RunQueuePercent the
	// same in % of one core, as the seeds wrote it.
	RunQueueMs      float64 `json:"run_queue_ms"`
	RunQueuePercent float64 `json:"run_queue_percent"`
	// GroupCPU is % of one core by what the threads do (benchGroups);
	// GroupThreads the threads of each group at the end of the window.
	GroupCPU     map[string]float64 `json:"group_cpu_percent"`
	GroupThreads map[string]int     `json:"group_threads,omitempty"`
	// Go's runtime over the window (runtime/metrics): its GOMAXPROCS, the
	// garbage collections and the CPU it estimates they took (% of one
	// core; an estimate from its Ps' time, part of "other").
	GoMaxProcs   int     `json:"go_max_procs,omitempty"`
	GCCycles     uint64  `json:"gc_cycles"`
	GCCPUPercent float64 `json:"gc_cpu_percent"`
	// AllocBytesPerS is what Go's heap allocated a second over the window
	// (a show that allocates per frame shows up here before its GC does).
	AllocBytesPerS float64 `json:"alloc_bytes_per_s"`
	// Over every bus in the window; PerBus has them bus by bus.
	BusFrames      uint64     `json:"bus_frames"`
	MissedDeadline uint64     `json:"missed_deadlines"`
	Repeats        uint64     `json:"repeats"`
	Skipped        uint64     `json:"skipped"`
	OutputDrops    uint64     `json:"output_drops"`
	Switches       uint64     `json:"switches"`
	SwitchErrors   uint64     `json:"switch_errors,omitempty"`
	PerBus         []BusBench `json:"buses_detail"`
	SourceDrops    uint64     `json:"source_drops"`
	Underruns      uint64     `json:"underruns"`
	// Page-locked host memory at the end of the window: what onair holds
	// through CUDA (cuMemHostAlloc, which /proc does not show) plus /proc's
	// VmLck and VmPin; LockedBytes is their sum.
	LockedBytes     int64 `json:"locked_host_bytes"`
	CUDALockedBytes int64 `json:"cuda_page_locked_bytes"`
	ProcLockedBytes int64 `json:"proc_locked_bytes"`
	RSSBytes        int64 `json:"rss_bytes"`
	// Device is the backend's last reading of its hardware (a GPU: NVML);
	// DeviceMean the mean of each of its numbers over the readings taken
	// once a second through the window.
	Device        any                `json:"device,omitempty"`
	DeviceMean    map[string]float64 `json:"device_mean,omitempty"`
	DeviceSamples int                `json:"device_samples,omitempty"`
	// Estimate is what the plan's estimates say this mix of sources can
	// grow to on the capacity profile.
	Estimate *PlanLimit `json:"plan_estimate,omitempty"`
	// DecodePictures is what the backend's decode loops decoded over the
	// window; DecodeCPUUs, with ONAIR_NVDEC_CLOCKS set, their CPU µs a
	// picture by call (parse, decode within it, map, copy, status, unmap).
	DecodePictures int64              `json:"decode_pictures,omitempty"`
	DecodeCPUUs    map[string]float64 `json:"decode_cpu_us_per_picture,omitempty"`
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

// BusBench is one bus over the window.
type BusBench struct {
	Address     string            `json:"address"`
	Kind        string            `json:"kind"`
	Frames      uint64            `json:"frames"`
	Missed      uint64            `json:"missed_deadlines"`
	Repeats     uint64            `json:"repeats"`
	Skipped     uint64            `json:"skipped"`
	OutputDrops uint64            `json:"output_drops"`
	Switches    map[string]uint64 `json:"switches,omitempty"` // by transition: cut, fade, wipe
	MaxDrawMs   float64           `json:"max_draw_ms"`
}

// PlanLimit is the plan's estimate of how far the show's mix of sources
// goes on its capacity profile: each budget scaled linearly with the
// sources (fixed costs such as the buses' canvases scale too, so this errs
// high by a little), and the first one to run out.
type PlanLimit struct {
	Profile string `json:"profile"`
	// ProfileSources is the profile's source limit at the show's rate (an
	// estimate until measured: what the ramp measures).
	ProfileSources int         `json:"profile_sources,omitempty"`
	Budgets        []BudgetUse `json:"budgets"`
	Binding        string      `json:"binding,omitempty"`
	AllowsSources  int         `json:"allows_sources,omitempty"`
}

// BudgetUse is one budget of the plan and the sources of this mix it allows.
type BudgetUse struct {
	plan.Budget
	AllowsSources int `json:"allows_sources"`
}

// planLimit reads the plan's budgets: the resources scale with the
// sources; budgets counted in sources are the profile's source limits.
func planLimit(p *plan.Plan, sources int) *PlanLimit {
	if p.Profile == "" || sources == 0 {
		return nil
	}
	l := &PlanLimit{Profile: p.Profile}
	for _, b := range p.Estimates.Budgets {
		switch {
		case b.Unit == "sources":
			if strings.HasPrefix(b.Name, "sources at") {
				l.ProfileSources = int(b.Limit)
			}
			continue
		case b.Used <= 0 || b.Limit <= 0:
			continue
		}
		u := BudgetUse{Budget: b, AllowsSources: int(math.Floor(float64(sources) * b.Limit / b.Used))}
		l.Budgets = append(l.Budgets, u)
		if l.Binding == "" || u.AllowsSources < l.AllowsSources {
			l.Binding, l.AllowsSources = b.Name, u.AllowsSources
		}
	}
	return l
}

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["bench"], stderr)
	vars := addVarFlags(fs)
	backend := fs.String("backend", "auto", "`BACKEND` to run on: auto or one of "+strings.Join(backends.Names(), ", "))
	warmup := fs.Duration("warmup", 10*time.Second, "run this long before measuring (the seeds read 20 s a few minutes after start)")
	window := fs.Duration("window", 20*time.Second, "measure over this long")
	every := fs.Duration("switch-every", 0, "switch every Program bus to its next scene this often, cut, fade and wipe in turn, each Program bus one transition ahead of the one before (0: no switches)")
	out := fs.String("json", "", "also write the result as JSON to `FILE`")
	beyond := fs.Bool("beyond-capacity", false, "run a show that exceeds its capacity profile's budgets (warnings instead of errors): for measuring the real limit")
	failOnMiss := fs.Bool("fail-on-miss", false, fmt.Sprintf("exit %d when the window had a missed deadline, a repeated picture (a source late) or a dropped frame", exitMissed))
	cpuProfile := fs.String("cpuprofile", "", "also write Go's CPU profile of the window to `FILE` (go tool pprof reads it; time in C and the GPU driver shows as external code)")
	compare := fs.Bool("compare", false, "print two results side by side (BEFORE.json AFTER.json) with BEFORE/AFTER ratios, and run nothing")
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if *compare {
		if fs.NArg() != 2 {
			fmt.Fprintln(stderr, "onair bench -compare: give two result files, BEFORE.json AFTER.json (written by onair bench -json)")
			return 2
		}
		return compareBench(fs.Arg(0), fs.Arg(1), stdout, stderr)
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
	res, rc := compileShow(fs.Args(), vars.options(), compiler.Options{ToolVersion: version, Target: be.Lowering, DeviceProfile: deviceProfile(be), BeyondCapacity: *beyond}, stderr)
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
	var switchErrs atomic.Uint64
	if *every > 0 {
		go switchEvery(running, programScenes(p), *every, stopSwitching, &switchErrs, stderr)
	}
	fmt.Fprintf(stdout, "on air: %s; measuring %v after %v\n", p.Show, *window, *warmup)
	fail := func() int {
		close(stopSwitching)
		fmt.Fprintf(stderr, "onair bench: %v\n", running.Err())
		running.Stop()
		return 1
	}
	select {
	case <-time.After(*warmup):
	case <-running.Failed():
		return fail()
	}
	var profile *os.File
	if *cpuProfile != "" {
		if profile, err = os.Create(*cpuProfile); err == nil {
			err = pprof.StartCPUProfile(profile)
		}
		if err != nil {
			fmt.Fprintf(stderr, "onair bench: -cpuprofile: %v\n", err)
			running.Stop()
			return 1
		}
	}
	a := takeSnapshot(running)
	errsBefore := switchErrs.Load()
	devices := sampleDevice(running, *window)
	b := takeSnapshot(running)
	if profile != nil {
		pprof.StopCPUProfile()
		if err := profile.Close(); err != nil {
			fmt.Fprintf(stderr, "onair bench: -cpuprofile: %v\n", err)
		}
	}
	select {
	case <-running.Failed():
		return fail()
	default:
	}
	close(stopSwitching)
	r := b.since(a)
	r.Show, r.Backend, r.FrameRate, r.WarmupS, r.SwitchesS = p.Show, be.Name, p.FrameRate, warmup.Seconds(), every.Seconds()
	r.SwitchErrors = switchErrs.Load() - errsBefore
	r.DeviceMean, r.DeviceSamples = meanOf(devices), len(devices)
	for _, n := range p.Nodes {
		if k, ok := nodes.Lookup(n.Kind); ok && k.Has(nodes.Compositor) {
			r.Buses++
		}
	}
	r.Sources = len(b.sum.Sources)
	r.Estimate = planLimit(p, r.Sources)
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
	if *failOnMiss && (r.MissedDeadline > 0 || r.Repeats > 0 || r.OutputDrops > 0 || r.SourceDrops > 0) {
		fmt.Fprintf(stderr, "onair bench: %d missed deadlines, %d repeats, %d output drops, %d source drops in the window (-fail-on-miss)\n", r.MissedDeadline, r.Repeats, r.OutputDrops, r.SourceDrops)
		return exitMissed
	}
	return 0
}

// sampleDevice reads the backend's device report once a second for d (or
// until the show fails) and returns the readings.
func sampleDevice(r show.Running, d time.Duration) []any {
	var out []any
	end := time.After(d)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-end:
			return out
		case <-r.Failed():
			return out
		case <-tick.C:
			if st, ok := r.Status().(show.StatusReport); ok && st.Device != nil {
				out = append(out, st.Device)
			}
		}
	}
}

// meanOf averages each number of the readings (as their JSON has them).
func meanOf(readings []any) map[string]float64 {
	if len(readings) == 0 {
		return nil
	}
	sum := map[string]float64{}
	for _, x := range readings {
		data, _ := json.Marshal(x)
		var m map[string]any
		json.Unmarshal(data, &m)
		for k, v := range m {
			if f, ok := v.(float64); ok {
				sum[k] += f
			}
		}
	}
	for k := range sum {
		sum[k] /= float64(len(readings))
	}
	return sum
}

// switchEvery switches every Program bus to its next scene until stop is
// closed: cut, fade and wipe in turn (500 ms transitions), the second
// Program bus one transition ahead of the first, so that at every switch
// both kinds of work happen at once. Refused switches are counted in errs
// (the first is printed).
func switchEvery(r show.Running, scenes map[string][]string, d time.Duration, stop chan struct{}, errs *atomic.Uint64, stderr io.Writer) {
	kinds := []string{"cut", "fade", "wipe"}
	t := time.NewTicker(d)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		j := 0
		for _, b := range r.Summary().Buses {
			if b.Kind != "program" {
				continue
			}
			list := scenes[b.Address]
			if len(list) < 2 {
				continue
			}
			next := list[(indexOf(list, b.OnAir)+1)%len(list)]
			kind := kinds[(i+j)%3]
			j++
			dur := time.Duration(0)
			if kind != "cut" {
				dur = 500 * time.Millisecond
			}
			if err := r.Switch(b.Address, next, kind, dur); err != nil && errs.Add(1) == 1 {
				fmt.Fprintf(stderr, "onair bench: switching %s to %s: %v\n", b.Address, next, err)
			}
		}
	}
}

// programScenes maps each Program bus of the plan to the scenes it may
// show.
func programScenes(p *plan.Plan) map[string][]string {
	out := map[string][]string{}
	for _, n := range p.Nodes {
		if n.Kind == "compositor" && n.Params.String("bus") == "program" {
			out[n.Address] = n.Params.Strings("scenes")
		}
	}
	return out
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

// The groups the bench adds CPU into, as the seeds' per-thread readings
// did: a node's own threads by its kind's traits, a loop's thread by the
// loop's name, and the threads neither claims by their name in /proc.
const (
	groupSources     = "sources" // readers, uploads, importers, fan-outs on threads of their own
	groupDecode      = "decode"  // decoders on threads of their own, and decode loops
	groupPacing      = "pacing loops"
	groupDefault     = "default loop" // AUX compositors placed on it, AUX and wipe pacing
	groupLoops       = "other loops"
	groupCompositors = "compositors"  // Program compositors on threads of their own
	groupOutputs     = "outputs"      // outputs on threads of their own
	groupOutputsLoop = "outputs loop" // the loop-driven outputs (null)
	groupDriver      = "cuda driver"  // the driver's own threads (cuda-EvtHandlr, ...)
	groupOther       = "other"        // Go's runtime, GC, reader pools, the status server
)

// loopGroup is the group of an event loop's thread.
func loopGroup(name string) string {
	switch {
	case name == "default":
		return groupDefault
	case name == compiler.OutputsLoop:
		return groupOutputsLoop
	case strings.HasPrefix(name, "pacing"):
		return groupPacing
	case strings.Contains(name, "decode"), strings.Contains(name, "nvdec"):
		return groupDecode
	}
	return groupLoops
}

// threadGroup is the group of a thread no node or loop claims, by its
// name in /proc: decode loops outside the runtime name their threads
// onair-decode… or onair-nvdec…, the CUDA driver's start with cuda, and
// the browser sources' receivers share onair-browser.
func threadGroup(comm string) string {
	switch {
	case strings.HasPrefix(comm, "onair-decode"), strings.HasPrefix(comm, "onair-nvdec"):
		return groupDecode
	case strings.HasPrefix(comm, "cuda"):
		return groupDriver
	case comm == browser.PollerThread: // the browser sources' receivers, shared
		return groupSources
	}
	return groupOther
}

// nodeGroup is the group of a node's own threads, by its kind's traits.
func nodeGroup(kind string) string {
	k, ok := nodes.Lookup(kind)
	switch {
	case !ok:
		return groupSources
	case k.Has(nodes.Compositor):
		return groupCompositors
	case k.Has(nodes.Sink):
		return groupOutputs
	case k.Has(nodes.Decoder):
		return groupDecode
	}
	return groupSources
}

// snapshot is one reading of the running show.
type snapshot struct {
	at                     time.Time
	usage                  runtime.Usage
	sum                    show.Summary
	status                 show.StatusReport
	groups                 map[string]int64 // CPU ns by group
	threads                map[string]int   // threads by group
	gc                     goStats
	queue                  int64 // run-queue ns, all threads
	cudaLocked, procLocked int64
	decode                 map[string]int64 // the decode loops' counters (decodeCounter)
}

// decodeCounter is a device report that counts its decode loops' pictures
// and CPU (the CUDA backend's GPUStatus).
type decodeCounter interface{ DecodeCounters() map[string]int64 }

// pageLocker is a device report that knows the host memory the backend
// page-locked (the CUDA backend's GPUStatus).
type pageLocker interface{ PageLocked() int64 }

func takeSnapshot(r show.Running) snapshot {
	s := snapshot{at: time.Now(), usage: runtime.ReadUsage(), sum: r.Summary(), groups: map[string]int64{}, threads: map[string]int{}, gc: readGoStats()}
	s.status, _ = r.Status().(show.StatusReport)
	rs := s.status.Runtime
	claimed := map[int]bool{}
	for _, l := range rs.Loops {
		s.groups[loopGroup(l.Name)] += l.Thread.CPUNs
		if !claimed[l.Thread.Tid] {
			s.threads[loopGroup(l.Name)]++
		}
		claimed[l.Thread.Tid] = true
	}
	for _, n := range rs.Nodes {
		g := nodeGroup(n.Kind)
		for _, t := range n.Threads {
			s.groups[g] += t.CPUNs
			if !claimed[t.Tid] {
				s.threads[g]++
			}
			claimed[t.Tid] = true
		}
	}
	for _, t := range rs.Threads {
		s.queue += t.RunQueueNs
		if !claimed[t.Tid] {
			s.groups[threadGroup(t.Name)] += t.CPUNs
			s.threads[threadGroup(t.Name)]++
		}
	}
	if pl, ok := s.status.Device.(pageLocker); ok {
		s.cudaLocked = pl.PageLocked()
	}
	if dc, ok := s.status.Device.(decodeCounter); ok {
		s.decode = dc.DecodeCounters()
	}
	s.procLocked = procLockedBytes()
	return s
}

// procLockedBytes reads the page-locked memory /proc knows of (VmLck,
// VmPin): mlock and pinned pages, not the CUDA driver's.
func procLockedBytes() int64 {
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
		Threads:       b.usage.Threads, RSSBytes: b.usage.RSSBytes,
		CUDALockedBytes: b.cudaLocked, ProcLockedBytes: b.procLocked, LockedBytes: b.cudaLocked + b.procLocked,
		RunQueueMs: float64(b.queue-a.queue) / 1e6, RunQueuePercent: pct(b.queue - a.queue), Device: b.status.Device,
	}
	r.CPUPercent = r.UserPercent + r.SystemPercent
	for g, v := range b.groups {
		r.GroupCPU[g] = pct(v - a.groups[g])
	}
	r.GroupThreads = b.threads
	r.GoMaxProcs, r.GCCycles = b.gc.maxProcs, b.gc.cycles-a.gc.cycles
	r.GCCPUPercent = 100 * (b.gc.cpuSeconds - a.gc.cpuSeconds) / d.Seconds()
	r.AllocBytesPerS = float64(b.gc.allocBytes-a.gc.allocBytes) / d.Seconds()
	if n := b.decode["pictures"] - a.decode["pictures"]; n > 0 {
		r.DecodePictures = n
		for _, k := range []string{"parse", "decode", "map", "copy", "status", "unmap"} {
			if ns := b.decode[k+"_ns"] - a.decode[k+"_ns"]; ns > 0 {
				if r.DecodeCPUUs == nil {
					r.DecodeCPUUs = map[string]float64{}
				}
				r.DecodeCPUUs[k] = float64(ns) / float64(n) / 1e3
			}
		}
	}
	busA := map[string]show.BusSummary{}
	for _, x := range a.sum.Buses {
		busA[x.Address] = x
	}
	for _, x := range b.sum.Buses {
		y := busA[x.Address]
		bb := BusBench{Address: x.Address, Kind: x.Kind, Frames: x.Ticks - y.Ticks, Missed: x.Missed - y.Missed,
			Repeats: x.Repeats - y.Repeats, Skipped: x.Skipped - y.Skipped, OutputDrops: x.OutputDrops - y.OutputDrops,
			MaxDrawMs: x.Timing.MaxDrawMs}
		for k, n := range x.SwitchesByKind {
			if n > y.SwitchesByKind[k] {
				if bb.Switches == nil {
					bb.Switches = map[string]uint64{}
				}
				bb.Switches[k] = n - y.SwitchesByKind[k]
			}
		}
		r.PerBus = append(r.PerBus, bb)
		r.BusFrames += bb.Frames
		r.MissedDeadline += bb.Missed
		r.Repeats += bb.Repeats
		r.Skipped += bb.Skipped
		r.OutputDrops += bb.OutputDrops
		r.Switches += x.Switches - y.Switches
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
		r.Browser.ImportsPerS = float64(r.Browser.Imports) / b.at.Sub(a.at).Seconds()
	}
	return r
}

func (r BenchResult) write(w io.Writer) {
	fmt.Fprintf(w, "\n%s on %s: %d sources, %d buses at %s fps; %.0f s measured after %.0f s\n", r.Show, r.Backend, r.Sources, r.Buses, r.FrameRate, r.WindowS, r.WarmupS)
	fmt.Fprintf(w, "  CPU               %6.1f %% of one core (user %.1f %%, system %.1f %%)\n", r.CPUPercent, r.UserPercent, r.SystemPercent)
	fmt.Fprintf(w, "  threads           %6d\n", r.Threads)
	fmt.Fprintf(w, "  run queue         %6.1f %% of one core (%.0f ms over the window, all threads)\n", r.RunQueuePercent, r.RunQueueMs)
	for _, g := range sortedGroups(r.GroupCPU) {
		fmt.Fprintf(w, "    %-15s %6.1f %%  (%d threads)\n", g, r.GroupCPU[g], r.GroupThreads[g])
	}
	fmt.Fprintf(w, "  Go runtime        GOMAXPROCS %d, %d collections, GC about %.1f %% of one core (Go's estimate), heap allocations %.2f MB a second\n", r.GoMaxProcs, r.GCCycles, r.GCCPUPercent, r.AllocBytesPerS/1e6)
	fmt.Fprintf(w, "  bus frames        %6d, %d missed deadlines, %d repeats, %d skipped, %d output drops, %d switches\n", r.BusFrames, r.MissedDeadline, r.Repeats, r.Skipped, r.OutputDrops, r.Switches)
	var aux BusBench
	auxN := 0
	for _, b := range r.PerBus {
		if b.Kind != "program" {
			auxN++
			aux.Frames, aux.Missed, aux.Repeats, aux.Skipped, aux.OutputDrops = aux.Frames+b.Frames, aux.Missed+b.Missed, aux.Repeats+b.Repeats, aux.Skipped+b.Skipped, aux.OutputDrops+b.OutputDrops
			aux.MaxDrawMs = max(aux.MaxDrawMs, b.MaxDrawMs)
			continue
		}
		fmt.Fprintf(w, "    %-15s %6d frames, %d missed, %d repeats, %d skipped, %d drops, longest draw %.1f ms, switches %s\n",
			b.Address, b.Frames, b.Missed, b.Repeats, b.Skipped, b.OutputDrops, b.MaxDrawMs, switchList(b.Switches))
	}
	if auxN > 0 {
		fmt.Fprintf(w, "    %-15s %6d frames, %d missed, %d repeats, %d skipped, %d drops, longest draw %.1f ms\n",
			fmt.Sprintf("%d AUX buses", auxN), aux.Frames, aux.Missed, aux.Repeats, aux.Skipped, aux.OutputDrops, aux.MaxDrawMs)
	}
	fmt.Fprintf(w, "  sources           %6d drops, %d underruns\n", r.SourceDrops, r.Underruns)
	if r.DecodePictures > 0 {
		fmt.Fprintf(w, "  decode loops      %6d pictures (%.0f a second)", r.DecodePictures, float64(r.DecodePictures)/r.WindowS)
		if c := r.DecodeCPUUs; c != nil {
			fmt.Fprintf(w, "; CPU µs a picture: parse %.1f (cuvidDecodePicture %.1f of it), map %.1f, copy %.1f, status %.1f, unmap %.1f",
				c["parse"], c["decode"], c["map"], c["copy"], c["status"], c["unmap"])
		}
		fmt.Fprintln(w)
	}
	if b := r.Browser; b != nil {
		fmt.Fprintf(w, "  browser sources   %6d: %d frames, %d converted, %d dropped; %d imports (%.2f a second), %d released, %d live\n",
			b.Sources, b.Frames, b.Converted, b.Dropped, b.Imports, b.ImportsPerS, b.ImportReleases, b.ImportsLive)
	}
	fmt.Fprintf(w, "  page-locked host  %6.0f MB (CUDA %.0f MB, VmLck+VmPin %.0f MB), resident %.0f MB\n",
		float64(r.LockedBytes)/1e6, float64(r.CUDALockedBytes)/1e6, float64(r.ProcLockedBytes)/1e6, float64(r.RSSBytes)/1e6)
	if m := r.DeviceMean; m != nil {
		fmt.Fprintf(w, "  GPU (NVML, mean of %d) %.0f %% busy, NVDEC %.0f %%, VRAM %.0f MB used, PCIe to GPU %.2f GB/s\n",
			r.DeviceSamples, m["gpu_percent"], m["decoder_percent"], m["memory_used_bytes"]/1e6, m["pcie_rx_bytes_per_sec"]/1e9)
	}
	if r.Device != nil {
		data, _ := json.Marshal(r.Device)
		fmt.Fprintf(w, "  device            %s\n", data)
	}
	if e := r.Estimate; e != nil && e.Binding != "" {
		fmt.Fprintf(w, "  plan estimate     %s binds: %d sources of this mix on %s (profile's source limit %d)\n", e.Binding, e.AllowsSources, e.Profile, e.ProfileSources)
	}
}

func switchList(m map[string]uint64) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range sortedGroups(nil, m) {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

// sortedGroups returns the keys of the maps, sorted.
func sortedGroups(f map[string]float64, u ...map[string]uint64) []string {
	var keys []string
	for k := range f {
		keys = append(keys, k)
	}
	for _, m := range u {
		for k := range m {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// compareBench prints two bench results side by side, as a Markdown table,
// with the ratio BEFORE/AFTER of each figure (the seeds' 791/234 = 3.4).
func compareBench(beforePath, afterPath string, stdout, stderr io.Writer) int {
	var rs [2]BenchResult
	for i, path := range []string{beforePath, afterPath} {
		data, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(data, &rs[i])
		}
		if err != nil {
			fmt.Fprintf(stderr, "onair bench -compare: %s: %v (give files written by onair bench -json)\n", path, err)
			return 1
		}
	}
	a, b := rs[0], rs[1]
	fmt.Fprintf(stdout, "| | %s | %s | before/after |\n|---|---:|---:|---:|\n", a.Show, b.Show)
	row := func(name, format string, x, y float64) {
		ratio := "–"
		if y != 0 {
			ratio = fmt.Sprintf("%.2f", ratioOf(x, y))
		}
		fmt.Fprintf(stdout, "| %s | "+format+" | "+format+" | %s |\n", name, x, y, ratio)
	}
	row("CPU, % of one core", "%.1f", a.CPUPercent, b.CPUPercent)
	row("  user", "%.1f", a.UserPercent, b.UserPercent)
	row("  system", "%.1f", a.SystemPercent, b.SystemPercent)
	row("threads", "%.0f", float64(a.Threads), float64(b.Threads))
	row("run queue, % of one core", "%.1f", a.RunQueuePercent, b.RunQueuePercent)
	row("GC, % of one core (Go's estimate)", "%.1f", a.GCCPUPercent, b.GCCPUPercent)
	row("heap allocations, MB a second", "%.2f", a.AllocBytesPerS/1e6, b.AllocBytesPerS/1e6)
	groups := map[string]float64{}
	for g := range a.GroupCPU {
		groups[g] = 0
	}
	for g := range b.GroupCPU {
		groups[g] = 0
	}
	for _, g := range sortedGroups(groups) {
		row("  "+g, "%.1f", a.GroupCPU[g], b.GroupCPU[g])
	}
	row("missed deadlines", "%.0f", float64(a.MissedDeadline), float64(b.MissedDeadline))
	row("repeats", "%.0f", float64(a.Repeats), float64(b.Repeats))
	row("output drops", "%.0f", float64(a.OutputDrops), float64(b.OutputDrops))
	row("source drops", "%.0f", float64(a.SourceDrops), float64(b.SourceDrops))
	row("switches", "%.0f", float64(a.Switches), float64(b.Switches))
	row("page-locked host, MB", "%.0f", float64(a.LockedBytes)/1e6, float64(b.LockedBytes)/1e6)
	row("resident, MB", "%.0f", float64(a.RSSBytes)/1e6, float64(b.RSSBytes)/1e6)
	for _, k := range []struct{ key, name string }{{"gpu_percent", "GPU busy, %"}, {"decoder_percent", "NVDEC busy, %"}} {
		row(k.name, "%.0f", a.DeviceMean[k.key], b.DeviceMean[k.key])
	}
	row("VRAM used, MB", "%.0f", a.DeviceMean["memory_used_bytes"]/1e6, b.DeviceMean["memory_used_bytes"]/1e6)
	fmt.Fprintf(stdout, "\n%d sources, %d buses at %s fps; %.0f s windows after %.0f s and %.0f s of warm-up; CPU ratio before/after %.2f (the seeds: 791/234 = 3.38).\n",
		a.Sources, a.Buses, a.FrameRate, a.WindowS, a.WarmupS, b.WarmupS, ratioOf(a.CPUPercent, b.CPUPercent))
	return 0
}

func ratioOf(x, y float64) float64 {
	if y == 0 {
		return 0
	}
	return x / y
}

// goStats is what Go's runtime says of itself (runtime/metrics).
type goStats struct {
	maxProcs   int
	cycles     uint64
	cpuSeconds float64 // GC's CPU, Go's estimate
	allocBytes uint64  // allocated on the heap since the start
}

func readGoStats() goStats {
	m := []metrics.Sample{{Name: "/sched/gomaxprocs:threads"}, {Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(m)
	var g goStats
	if m[0].Value.Kind() == metrics.KindUint64 {
		g.maxProcs = int(m[0].Value.Uint64())
	}
	if m[1].Value.Kind() == metrics.KindUint64 {
		g.cycles = m[1].Value.Uint64()
	}
	if m[2].Value.Kind() == metrics.KindFloat64 {
		g.cpuSeconds = m[2].Value.Float64()
	}
	if m[3].Value.Kind() == metrics.KindUint64 {
		g.allocBytes = m[3].Value.Uint64()
	}
	return g
}
