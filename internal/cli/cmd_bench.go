package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/bench"
	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/internal/files"
	"github.com/onairhq/onair/nodes/show"
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
	res, rc := compileShow(fs.Args(), vars.options(), compiler.Options{ToolVersion: version, Target: be.Lowering, DeviceProfile: deviceProfile(be), HostProfile: hostProfile(be.Lowering), BeyondCapacity: *beyond}, stderr)
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
		go bench.SwitchEvery(running, bench.ProgramScenes(p), *every, stopSwitching, &switchErrs, stderr)
	}
	fmt.Fprintf(stdout, "on air: %s; measuring %v after %v\n", p.Show, *window, *warmup)
	fail := func() int {
		close(stopSwitching)
		fmt.Fprintf(stderr, "onair bench: %v\n", running.Err())
		running.Stop()
		return 1
	}
	stopWarm := during(stderr, "onair bench: warming up", *warmup)
	select {
	case <-time.After(*warmup):
		stopWarm()
	case <-running.Failed():
		stopWarm()
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
	groups := bench.GroupsOf(p)
	a := bench.Take(running, groups)
	errsBefore := switchErrs.Load()
	stopWin := during(stderr, "onair bench: measuring", *window)
	devices := bench.SampleDevice(running, *window)
	stopWin()
	b := bench.Take(running, groups)
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
	r := b.Since(a)
	r.Describe(p)
	r.Backend, r.WarmupS, r.SwitchesS = be.Name, warmup.Seconds(), every.Seconds()
	r.SwitchErrors = switchErrs.Load() - errsBefore
	r.DeviceMean, r.DeviceSamples = bench.MeanOf(devices), len(devices)
	if err := running.Stop(); err != nil {
		fmt.Fprintf(stderr, "onair bench: stopping: %v\n", err)
	}
	r.Write(stdout)
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

// compareBench prints two bench results side by side (bench.Compare).
func compareBench(beforePath, afterPath string, stdout, stderr io.Writer) int {
	var rs [2]bench.Result
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
	bench.Compare(rs[0], rs[1], stdout)
	return 0
}
