package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/onairhq/onair/internal/files"
	"github.com/onairhq/onair/runtime"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/lint"
	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/timecode"
)

func init() {
	register(&command{
		name:    "run",
		summary: "Compile a show and run it until Ctrl-C or -duration, serving status and control over HTTP; print a summary at the end.",
		usage:   "[-backend auto|BACKEND] [-duration D] [-listen ADDR] [-tls-cert FILE -tls-key FILE] [-log-format text|json] [-cue 'AT BUS SCENE [cut|fade|wipe [D]]']... [-as-run FILE [-as-run-fsync second|line]] [-plan FILE] [-var NAME=VALUE]... PATH...",
		run:     runRun,
	})
}

// cue is a switch scheduled at a time after the start of the run, or at
// a timecode.
type cue struct {
	at         time.Duration
	tc         string // HH:MM:SS:FF: the tick it lands on; at is then unused
	bus, scene string
	kind       string
	d          time.Duration
}

type cueList []cue

func (c *cueList) String() string { return "" }
func (c *cueList) Set(s string) error {
	f := strings.Fields(s)
	if len(f) < 3 || len(f) > 5 {
		return fmt.Errorf("want 'AT BUS SCENE [cut|fade|wipe [DURATION]]', such as '5s bus.pgm scene.clip fade 500ms'")
	}
	cu := cue{bus: f[1], scene: f[2], kind: "cut"}
	var err error
	if timecode.LooksLike(f[0]) {
		cu.tc = f[0] // checked against the show's rate once the plan is known (checkCue)
	} else if cu.at, err = time.ParseDuration(f[0]); err != nil || cu.at < 0 {
		return fmt.Errorf("%q is not a time after the start such as 5s, nor a timecode such as 10:00:05:00", f[0])
	}
	if len(f) > 3 {
		cu.kind = f[3]
		if cu.kind != "cut" && cu.kind != "fade" && cu.kind != "wipe" {
			return fmt.Errorf("transition %q: use cut, fade or wipe", cu.kind)
		}
		cu.d = time.Second
	}
	if len(f) > 4 {
		if cu.kind == "cut" {
			return fmt.Errorf("a cut has no duration (%q); use fade or wipe for a transition that lasts", f[4])
		}
		if cu.d, err = time.ParseDuration(f[4]); err != nil || cu.d <= 0 {
			return fmt.Errorf("transition duration %q: write a duration such as 500ms", f[4])
		}
	}
	if cu.kind == "cut" {
		cu.d = 0
	}
	*c = append(*c, cu)
	return nil
}

// runFlags are onair run's flags.
type runFlags struct {
	backend, savedPlan, logFormat, asRun string
	asRunFsync                           string
	duration                             time.Duration
	quiet                                bool
	cues                                 cueList
	// The status server's.
	listen, token, listenNames, tlsCert, tlsKey string
	insecureToken                               bool
}

// define declares the flags on fs.
func (f *runFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.backend, "backend", "auto", "`BACKEND` to run on: auto (the first of "+strings.Join(backends.Names(), ", ")+" usable here) or one of them")
	fs.DurationVar(&f.duration, "duration", 0, "stop after this long (0: run until Ctrl-C)")
	fs.StringVar(&f.listen, "listen", control.DefaultAddr, "`ADDR` of the status and control server (the page at /; GET /status, /events, /metrics, /plan; POST /buses/BUS/cut); empty: none")
	fs.StringVar(&f.token, "token", os.Getenv("ONAIR_TOKEN"), "token the server requires (needed to listen on a non-loopback address; default $ONAIR_TOKEN)")
	fs.StringVar(&f.listenNames, "listen-name", "", "extra `NAMES` (comma-separated host or host:port) clients may reach the server by, besides its address")
	fs.StringVar(&f.savedPlan, "plan", "", "run this saved plan (from onair plan -out) instead of compiling afresh; refused if the show or tool version differs")
	fs.BoolVar(&f.quiet, "quiet", false, "log only warnings and errors while running")
	fs.Var(&f.cues, "cue", "schedule a switch: 'AT BUS SCENE [cut|fade|wipe [DURATION]]' (repeatable), AT a time after the start such as '5s bus.pgm scene.clip' or the timecode of the tick it lands on, such as '10:00:05:00 bus.pgm scene.clip'")
	fs.StringVar(&f.logFormat, "log-format", "text", "`FORMAT` of the log on stderr: text (key=value) or json (a JSON object a line)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate `FILE` (its chain after it); with -tls-key")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the PEM private key `FILE` of -tls-cert")
	fs.BoolVar(&f.insecureToken, "insecure-remote-token", false, "allow a token on a non-loopback -listen address without TLS (it travels in clear): only behind a proxy that terminates TLS")
	fs.StringVar(&f.asRun, "as-run", "", "append the as-run log to `FILE`: a JSON line per switch asked for and drawn, missed deadline, source error and recovery, and change on air (default: none)")
	fs.StringVar(&f.asRunFsync, "as-run-fsync", show.AsRunFsyncs[0], "when the as-run log is fsynced: `WHEN` is "+strings.Join(show.AsRunFsyncs, " or ")+" (second: once a second while lines come, so a power cut loses at most the last second; line: after every line; a crash of onair loses no line either way)")
}

// check refuses flags that cannot make a run, before anything starts: it
// returns the exit status (2, the reason written to stderr), or -1. An
// -as-run path is made absolute.
func (f *runFlags) check(stderr io.Writer) int {
	if _, err := backends.Lookup(f.backend); err != nil && f.backend != "auto" {
		fmt.Fprintf(stderr, "onair run: -backend: %v, or auto\n", err)
		return 2
	}
	if f.duration < 0 {
		fmt.Fprintf(stderr, "onair run: -duration %v: write a positive duration, or 0 to run until Ctrl-C\n", f.duration)
		return 2
	}
	for _, cu := range f.cues {
		if cu.tc != "" {
			continue
		}
		if f.duration > 0 && cu.at >= f.duration {
			fmt.Fprintf(stderr, "onair run: -cue at %v comes after the end of the run (-duration %v)\n", cu.at, f.duration)
			return 2
		}
		if f.duration > 0 && cu.at+cu.d > f.duration {
			fmt.Fprintf(stderr, "onair run: warning: the %s at %v lasts %v, past the end of the run (-duration %v)\n", cu.kind, cu.at, cu.d, f.duration)
		}
	}
	if err := control.CheckListen(f.listen, f.token); f.listen != "" && err != nil {
		fmt.Fprintf(stderr, "onair run: -listen: %v\n", err)
		return 2
	}
	if err := control.CheckTLS(f.listen, f.token, f.tlsCert, f.tlsKey, f.insecureToken); f.listen != "" && err != nil {
		fmt.Fprintf(stderr, "onair run: -listen: %v\n", err)
		return 2
	}
	if _, err := newRunLogger(f.logFormat, io.Discard, 0); err != nil {
		fmt.Fprintf(stderr, "onair run: %v\n", err)
		return 2
	}
	if f.asRun == "" && f.asRunFsync != show.AsRunFsyncs[0] {
		fmt.Fprintf(stderr, "onair run: -as-run-fsync %s without -as-run: give the as-run log's FILE too\n", f.asRunFsync)
		return 2
	}
	if f.asRun != "" {
		// Refused before anything starts: the show would open it the same
		// way (show.Options.AsRun).
		abs, err := filepath.Abs(f.asRun)
		if err == nil {
			err = show.CheckAsRun(abs, f.asRunFsync)
		}
		if err != nil {
			fmt.Fprintf(stderr, "onair run: -as-run: %v\n", err)
			return 2
		}
		f.asRun = abs
	}

	return -1
}

func runRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["run"], stderr)
	vars := addVarFlags(fs)
	var f runFlags
	f.define(fs)
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if rc := f.check(stderr); rc >= 0 {
		return rc
	}

	// The backend.
	be, why := pickBackend(f.backend)
	if be == nil {
		fmt.Fprintf(stderr, "onair run: %s\n", why)
		return 1
	}
	chosen := be.Name
	fmt.Fprintf(stdout, "backend: %s (%s)\n", chosen, why)

	// The show and its plan.
	res, p, rc := loadOrVerify(fs.Args(), vars.options(), be, f.savedPlan, stderr)
	if rc != 0 {
		return rc
	}
	loaded := res.Show
	planJSON, err := plan.Marshal(p)
	if err != nil {
		fmt.Fprintf(stderr, "onair run: %v\n", err)
		return 1
	}
	for _, cu := range f.cues {
		if err := checkCue(p, cu); err != nil {
			fmt.Fprintf(stderr, "onair run: -cue: %v\n", err)
			return 2
		}
	}
	// A bus the CPU backend cannot draw in its frame period goes on air,
	// with a warning first (one line; onair lint says more).
	if res.Plan != nil && res.Graph != nil {
		for _, f := range lint.Result(res, nil) {
			if f.Rule == lint.RuleCPUDrawCost && f.Ignored == nil {
				fmt.Fprintf(stderr, "onair run: warning: %s (onair lint -explain %s)\n", f.Summary, f.Rule)
			}
		}
	}

	// Run.
	level := slog.LevelInfo
	if f.quiet {
		level = slog.LevelWarn
	}
	log, _ := newRunLogger(f.logFormat, stderr, level)
	// SIGINT and SIGTERM stop the show, naming the signal; SIGHUP reloads
	// the show file once it is on air (run_sre.go).
	ctx, stopWith := context.WithCancelCause(context.Background())
	defer stopWith(nil)
	reloads, stopSignals := watchSignals(ctx, stopWith) // before ctx is wrapped for -duration
	defer stopSignals()
	if f.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, f.duration, fmt.Errorf("%w (%v)", errDurationReached, f.duration))
		defer cancel()
	}
	notify := newNotifier(log)
	defer notify.close()
	// The status server's socket first: a show nobody could watch or cut
	// does not go on air (and does not touch its recordings).
	var srv *control.Server
	if f.listen != "" {
		srv, err = control.Bind(control.Options{Addr: f.listen, Token: f.token, Hosts: strings.Split(f.listenNames, ","), Version: version, Log: log,
			TLSCert: f.tlsCert, TLSKey: f.tlsKey, InsecureRemoteToken: f.insecureToken})
		if err != nil {
			fmt.Fprintf(stderr, "onair run: no status server: %v (choose another -listen address, or -listen '' for none)\n", err)
			return 2
		}
		defer srv.Close()
		srv.ServeProbes() // /healthz and /readyz while the show starts
	}
	started := time.Now()
	opts := show.Options{BaseDir: loaded.Dir, AsRun: f.asRun, AsRunFsync: f.asRunFsync, Log: log}
	fallback := f.backend == "auto" && f.savedPlan == ""
	running, be, p, err := startWithFallback(ctx, be, p, planJSON, fallback, opts, log, stdout, func(next *backends.Backend) (*plan.Plan, int) {
		res, rc := compileShow(fs.Args(), vars.options(), compiler.Options{ToolVersion: version, Target: next.Lowering, DeviceProfile: deviceProfile(next), HostProfile: hostProfile(next.Lowering)}, stderr)
		if rc != 0 {
			return nil, rc
		}
		return res.Plan, 0
	})
	if rc := compileFailed(0); errors.As(err, &rc) {
		return int(rc)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			log.Info("stopped while starting", "reason", stopReason(ctx, nil))
			notify.send("STOPPING=1", "STATUS=stopped while starting: "+stopReason(ctx, nil))
			fmt.Fprintf(stdout, "interrupted while starting (%s): nothing went on air\n", stopReason(ctx, nil))
			return 0
		}
		fmt.Fprintf(stderr, "onair run: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "on air: %s, %d nodes on %d loops; started in %v\n", p.Show, len(p.Nodes), len(p.Loops), time.Since(started).Round(time.Millisecond))
	if l := readinessLine(running); l != "" {
		fmt.Fprintln(stdout, l)
	}
	onAir, usage := time.Now(), runtime.ReadUsage()
	live := &liveApply{show: running, cur: p}
	if srv != nil {
		srv.SetApplier(live)
		srv.Serve(running)
		u := srv.URL()
		fmt.Fprintf(stdout, "page: %s/  status: %s/status  events: %s/events  metrics: %s/metrics  probes: %s/healthz %s/readyz\n", u, u, u, u, u, u)
	}
	ready := func() error {
		if rd, ok := running.(control.Readier); ok {
			return rd.Ready()
		}
		return nil
	}
	notify.send("READY=1", fmt.Sprintf("STATUS=on air: %s, %d nodes on %d loops on the %s backend", p.Show, len(p.Nodes), len(p.Loops), be.Name), "MAINPID="+strconv.Itoa(os.Getpid()))
	go notify.keepAlive(ctx, ready)
	reload := &reloader{paths: fs.Args(), vars: vars.options(), apply: live, log: log}
	timers := scheduleCues(running, f.cues, started, log)
	var failure error
	for waiting := true; waiting; {
		select {
		case <-ctx.Done():
			waiting = false
		case <-running.Failed():
			failure = running.Err()
			waiting = false
		case <-reloads:
			reload.reload()
		}
	}
	stopWhy := stopReason(ctx, failure)
	log.Info("stopping", "reason", stopWhy)
	notify.send("STOPPING=1", "STATUS=stopping: "+stopWhy)
	stopWith(nil) // the keep-alives and the signal watch end
	for _, t := range timers {
		t.Stop()
	}
	if err := running.Stop(); err != nil && failure == nil {
		failure = err
	}
	fmt.Fprintf(stdout, "\nRan %s for %v.\nStopped: %s.\n", p.Show, time.Since(started).Round(time.Millisecond), stopWhy)
	fmt.Fprintln(stdout, runtime.ReadUsage().Since(usage, time.Since(onAir)))
	sum := running.Summary()
	sum.WriteText(stdout)
	if failure != nil && !errors.Is(failure, context.Canceled) {
		fmt.Fprintf(stderr, "onair run: %v\n", failure)
		return 1
	}
	if failed := undelivered(sum); len(failed) > 0 {
		for _, o := range failed {
			fmt.Fprintf(stderr, "onair run: %s delivered no frame in the whole run: %s\n", o.Address, o.LastError)
		}
		return 1
	}
	return 0
}

// undelivered lists the outputs that failed for the whole run: an error
// and not one frame delivered (an encoder ffmpeg lacks, a destination that
// never answered). A run with such an output did not do its job, however
// well the rest of it went.
func undelivered(sum show.Summary) []show.OutputSummary {
	var out []show.OutputSummary
	for _, o := range sum.Outputs {
		if o.Written == 0 && o.Errors > 0 {
			out = append(out, o)
		}
	}
	return out
}

// watchSignals stops the show on SIGINT and SIGTERM, naming the signal
// (stopWith), until ctx is done; a SIGHUP is handed to the returned
// channel, which holds one (run_sre.go reloads the show file on it).
// The signals stay caught until the returned func is called.
func watchSignals(ctx context.Context, stopWith context.CancelCauseFunc) (<-chan struct{}, func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	reloads := make(chan struct{}, 1)
	watching := ctx.Done()
	go func() {
		for {
			select {
			case sg := <-sigs:
				if sg == syscall.SIGHUP {
					select {
					case reloads <- struct{}{}:
					default: // one is waiting already
					}
					continue
				}
				stopWith(fmt.Errorf("%s received", signalName(sg)))
			case <-watching:
				return
			}
		}
	}()
	return reloads, func() { signal.Stop(sigs) }
}

// scheduleCues puts the -cue switches on the show: one at a timecode lands
// on its tick (the show schedules it), one at a time after started on a
// timer, which the caller stops.
func scheduleCues(running show.Running, cues cueList, started time.Time, log *slog.Logger) []*time.Timer {
	var timers []*time.Timer
	for _, cu := range cues {
		cu := cu
		if cu.tc != "" { // the show lands it on its tick
			if err := running.SwitchAt(cu.bus, cu.scene, cu.kind, cu.d, cu.tc, show.OriginCue); err != nil {
				log.Error("cue", "at", cu.tc, "error", err)
				continue
			}
			log.Info("cue", "at", cu.tc, "bus", cu.bus, "scene", cu.scene, "transition", cu.kind)
			continue
		}
		timers = append(timers, time.AfterFunc(cu.at-time.Since(started), func() {
			if err := running.SwitchAt(cu.bus, cu.scene, cu.kind, cu.d, "", show.OriginCue); err != nil {
				log.Error("cue", "error", err)
				return
			}
			log.Info("cue", "bus", cu.bus, "scene", cu.scene, "transition", cu.kind)
		}))
	}
	return timers
}

// loadOrVerify compiles the show for be and, given a saved plan (-plan),
// loads it and verifies that it is what the show compiles to now: the same
// show and tool, the same backend, and byte for byte the same plan.
// It returns the fresh compile, the plan to run and a non-zero exit status
// when either fails (the reason written to stderr).
func loadOrVerify(paths []string, lopts lang.Options, be *backends.Backend, savedPlan string, stderr io.Writer) (*compiler.Result, *plan.Plan, int) {
	res, rc := compileShow(paths, lopts, compiler.Options{ToolVersion: version, Target: be.Lowering, DeviceProfile: deviceProfile(be), HostProfile: hostProfile(be.Lowering)}, stderr)
	if rc != 0 || savedPlan == "" {
		return res, res.Plan, rc
	}
	p, err := verifySaved(savedPlan, res, paths, be.Name)
	if err != nil {
		fmt.Fprintf(stderr, "onair run: saved plan %s: %v\n", savedPlan, err)
		return res, nil, 1
	}
	return res, p, 0
}

// verifySaved loads the plan saved at path and checks it against res, the
// show compiled afresh for the backend named chosen.
func verifySaved(path string, res *compiler.Result, paths []string, chosen string) (*plan.Plan, error) {
	data, err := files.ReadRegular(path, maxPlanBytes)
	if err != nil {
		return nil, err
	}
	p, err := plan.Load(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if err := plan.CheckShow(p, res.Show.Hash); err != nil {
		return nil, err
	}
	if p.Backend != "" && p.Backend != chosen {
		return nil, fmt.Errorf("compiled for the %s backend, and this run uses %s: compile it again with onair plan -backend %s -out FILE", p.Backend, chosen, chosen)
	}
	// Same show, same tool: the plan must be what the show compiles to (its
	// paths are relative to the show, so this holds from any directory). It
	// is not when it was edited by hand.
	saved, _ := plan.Marshal(p)
	fresh, _ := plan.Marshal(res.Plan)
	if !bytes.Equal(saved, fresh) {
		return nil, fmt.Errorf("it is not what %s compiles to: was it edited by hand? Compile it again (onair plan -backend %s -out FILE SHOW)", strings.Join(paths, " "), chosen)
	}
	return p, nil
}

// compileFailed is startWithFallback's error when compiling the show for
// the fallback backend failed: the exit status, the reason written already.
type compileFailed int

func (c compileFailed) Error() string {
	return fmt.Sprintf("compiling for the fallback backend failed (exit %d)", int(c))
}

// startWithFallback starts p on be. When that fails and fallback is set (a
// -backend auto run of a fresh compile), and not because the run was
// stopped, the show goes on the next usable backend instead, compiled for
// it by compile: the GPU was there, but the show could not start on it (out
// of memory, a kernel the driver refused). It returns the show running,
// the backend and the plan it runs.
func startWithFallback(ctx context.Context, be *backends.Backend, p *plan.Plan, planJSON []byte, fallback bool, opts show.Options, log *slog.Logger, stdout io.Writer,
	compile func(*backends.Backend) (*plan.Plan, int)) (show.Running, *backends.Backend, *plan.Plan, error) {
	running, err := be.Start(ctx, p, planJSON, opts, log)
	if err == nil || !fallback || errors.Is(err, context.Canceled) {
		return running, be, p, err
	}
	next := nextUsable(be)
	if next == nil {
		return nil, be, p, err
	}
	fmt.Fprintf(stdout, "backend: %s could not start the show (%v); falling back to %s\n", be.Name, err, next.Name)
	np, rc := compile(next)
	if rc != 0 {
		return nil, be, p, compileFailed(rc)
	}
	if planJSON, err = plan.Marshal(np); err != nil {
		return nil, next, np, err
	}
	running, err = next.Start(ctx, np, planJSON, opts, log)
	return running, next, np, err
}

// deviceProfile names the capacity profile of the GPU be would run on
// here ("" when it has none, or no profile describes it): a show that names
// no profile is checked against its GPU's.
func deviceProfile(be *backends.Backend) string {
	if be.Device == nil {
		return ""
	}
	return compiler.ProfileForDevice(be.Device())
}

// pickBackend resolves -backend: the backend to compile for and run on, and
// why; nil when the asked-for backend cannot run here.
func pickBackend(asked string) (*backends.Backend, string) {
	if asked == "auto" {
		return backends.Auto()
	}
	be, err := backends.Lookup(asked)
	if err != nil {
		return nil, err.Error()
	}
	found, err := be.Probe()
	if err != nil {
		return nil, fmt.Sprintf("-backend %s: %v", asked, err)
	}
	return be, "asked for: " + found
}

// nextUsable is the first backend after be in the table that can run here.
func nextUsable(be *backends.Backend) *backends.Backend {
	all := backends.All()
	for i, b := range all {
		if b != be {
			continue
		}
		for _, n := range all[i+1:] {
			if _, err := n.Probe(); err == nil {
				return n
			}
		}
	}
	return nil
}

// checkCue refuses a cue for a bus or scene the plan does not have, before
// the show starts.
func checkCue(p *plan.Plan, cu cue) error {
	if cu.tc != "" {
		r, err := timecode.NewRate(p.FrameRate.Num, p.FrameRate.Den)
		if err == nil {
			_, err = r.Parse(cu.tc)
		}
		if err != nil {
			return fmt.Errorf("%v (the show runs at %s)", err, r)
		}
	}
	bus := cu.bus
	if !strings.HasPrefix(bus, "bus.") {
		bus = "bus." + bus
	}
	scene := cu.scene
	if !strings.HasPrefix(scene, "scene.") && !strings.HasPrefix(scene, "source.") { // an AUX bus may route to a source
		scene = "scene." + scene
	}
	for _, n := range p.Nodes {
		if n.Kind == "compositor" && n.Address == bus {
			if scenes := n.Params.Strings("scenes"); scenes != nil {
				for _, s := range scenes {
					if s == scene {
						return nil
					}
				}
				return fmt.Errorf("%s cannot show %s (its scenes: %s)", bus, scene, strings.Join(scenes, ", "))
			}
			return fmt.Errorf("%s shows one source and has no scenes to switch to", bus)
		}
	}
	return fmt.Errorf("the show has no bus %s", bus)
}

// A show on air is what the control server serves: nodes/show states the
// methods without importing control, and this is where the two meet.
var _ interface {
	control.Show
	control.TimedSwitcher
	control.Operator
	control.Eventer
	control.Snapshotter
	control.Readier
	control.Collectors
} = (*show.Show[*frame.Frame])(nil)
