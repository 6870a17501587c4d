package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/timecode"
)

const runShow = `
show {
  name       = "cli"
  size       = "320x180"
  frame_rate = "30"
}
source "test_pattern" "a" {}
source "test_pattern" "b" {
  pattern = "checker"
}
scene "a" {
  layer {
    source = source.a
  }
}
scene "b" {
  layer {
    source = source.b
  }
}
bus "program" "pgm" {
  scene = scene.a
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`

func writeRunShow(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "show.hcl")
	if err := os.WriteFile(p, []byte(runShow), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// eventBound is how long a test waits for something a running show must
// do: go on air, draw ticks, stop after a Ctrl-C. It bounds a wait for an
// event, never a measurement; on an idle machine every event comes within a
// second or two, and the bound only keeps a broken run from hanging the
// suite on a machine busy with other work.
const eventBound = testwait.Bound

// liveOutput is what a command running in the background writes: safe to
// read while it is written, and waited on for a line to appear.
type liveOutput struct {
	mu   sync.Mutex
	b    bytes.Buffer
	more chan struct{} // closed at each write
}

func (o *liveOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.more != nil {
		close(o.more)
		o.more = nil
	}
	return o.b.Write(p)
}

func (o *liveOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// match returns re's submatches in what was written so far, and a channel
// closed at the next write.
func (o *liveOutput) match(re *regexp.Regexp) ([]string, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if m := re.FindStringSubmatch(o.b.String()); m != nil {
		return m, nil
	}
	if o.more == nil {
		o.more = make(chan struct{})
	}
	return nil, o.more
}

// background is onair running in this process, as a goroutine.
type background struct {
	out, errs liveOutput
	done      chan struct{} // closed when run returns
	rc        int
}

// runInBackground starts onair with args.
func runInBackground(args ...string) *background {
	bg := &background{done: make(chan struct{})}
	go func() {
		defer close(bg.done)
		bg.rc = run(args, &bg.out, &bg.errs)
	}()
	return bg
}

// waitOut waits until the run's stdout matches re and returns the
// submatches.
func (bg *background) waitOut(t *testing.T, re string) []string {
	t.Helper()
	return waitOutput(t, &bg.out, re, bg.done)
}

// waitOutput waits until o matches re and returns the submatches; it fails
// the test if ended is closed first (the command ended), or after
// eventBound.
func waitOutput(t *testing.T, o *liveOutput, re string, ended <-chan struct{}) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	stuck := time.NewTimer(eventBound)
	defer stuck.Stop()
	for {
		m, more := o.match(rx)
		if m != nil {
			return m
		}
		select {
		case <-more:
		case <-ended:
			if m, _ := o.match(rx); m != nil {
				return m
			}
			t.Fatalf("onair ended before printing %q:\n%s", re, o.String())
		case <-stuck.C:
			t.Fatalf("onair printed no %q in %v:\n%s", re, eventBound, o.String())
		}
	}
}

// interrupt does what Ctrl-C does to the run and returns its exit code.
// The test listens for the signal too, so that it never ends the test
// binary, whenever it arrives.
func (bg *background) interrupt(t *testing.T) int {
	t.Helper()
	absorb := make(chan os.Signal, 1)
	signal.Notify(absorb, os.Interrupt)
	defer signal.Stop(absorb)
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Signal(os.Interrupt)
	}
	return bg.wait(t)
}

// wait waits for the run to return and returns its exit code.
func (bg *background) wait(t *testing.T) int {
	t.Helper()
	stuck := time.NewTimer(eventBound)
	defer stuck.Stop()
	select {
	case <-bg.done:
		return bg.rc
	case <-stuck.C:
		t.Fatalf("onair still running %v later:\n%s", eventBound, bg.out.String())
		return -1
	}
}

// busStatus is the part of GET /status these tests read.
type busStatus struct {
	Summary struct {
		Buses []struct {
			Ticks uint64 `json:"ticks"`
			OnAir string `json:"on_air"`
		} `json:"buses"`
	} `json:"summary"`
}

// waitStatus polls GET /status on addr until cond holds for its first bus,
// for at most eventBound.
func waitStatus(t *testing.T, addr, what string, cond func(ticks uint64, onAir string) bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(eventBound)
	for {
		var st busStatus
		resp, err := http.Get("http://" + addr + "/status")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
		}
		if err == nil && len(st.Summary.Buses) > 0 && cond(st.Summary.Buses[0].Ticks, st.Summary.Buses[0].OnAir) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after %v (last: %+v, %v)", what, eventBound, st, err)
		}
		<-tick.C
	}
}

// recordedSources reads a recording back and returns the stamp id of each
// picture, in order; 0 for a picture without a stamp (black).
func recordedSources(t *testing.T, path string) []uint16 {
	t.Helper()
	r, err := media.OpenY4M(path, "rec", false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ids []uint16
	f, err := frame.New(r.Format(), r.Width(), r.Height())
	if err != nil {
		t.Fatal(err)
	}
	for r.Next(f) == nil {
		id, _, ok := media.ReadStamp(f, frame.Rect{W: f.Width, H: f.Height})
		if !ok {
			id = 0
		}
		ids = append(ids, id)
	}
	return ids
}

// runsOf folds a sequence of stamp ids into its runs: [0 0 1 1 2] → [0 1 2].
func runsOf(ids []uint16) []uint16 {
	var out []uint16
	for _, id := range ids {
		if len(out) == 0 || out[len(out)-1] != id {
			out = append(out, id)
		}
	}
	return out
}

// seconds reads a number of seconds printed as %.3f.
func seconds(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRunForADurationWithACue runs a show for two seconds with a cut half a
// second in: the run stops by itself, its summary logs the cut (asked for
// no earlier than its time, drawn before the end) and the recording shows
// scene.a, then scene.b, one clean switch.
//
// When the cut was asked for and drawn is the wall clock's business, and
// late on a busy machine; the test asserts only their order.
func TestRunForADurationWithACue(t *testing.T) {
	show := writeRunShow(t)
	rc, out, errs := runCLI(t, "run", "-duration", "2s", "-listen", "127.0.0.1:0", "-cue", "500ms bus.pgm scene.b", show)
	if rc != 0 {
		t.Fatalf("rc=%d\n%s\n%s", rc, out, errs)
	}
	for _, want := range []string{"backend: cpu", "on air: cli", "status: http://127.0.0.1:", "Ran cli for", "bus.pgm", "output.pgm", "source.a"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	started := regexp.MustCompile(`started in (\S+)`).FindStringSubmatch(out)
	ran := regexp.MustCompile(`Ran cli for (\S+)\.`).FindStringSubmatch(out)
	cut := regexp.MustCompile(`cut to scene\.b asked at ([0-9.]+)s, on tick ([0-9]+) \(drawn at ([0-9.]+)s\)`).FindStringSubmatch(out)
	frames := regexp.MustCompile(`output\.pgm\s+record\s+([0-9]+) frames`).FindStringSubmatch(out)
	if started == nil || ran == nil || cut == nil || frames == nil {
		t.Fatalf("the summary does not log the start, the run, the cut drawn and the recording:\n%s", out)
	}
	startup, err1 := time.ParseDuration(started[1])
	length, err2 := time.ParseDuration(ran[1])
	if err1 != nil || err2 != nil {
		t.Fatalf("durations %q, %q: %v %v", started[1], ran[1], err1, err2)
	}
	// Times in the summary count from the show's first tick, which comes
	// at most the start-up time after the cue's clock started; each is
	// rounded to the millisecond.
	asked, drawn := seconds(t, cut[1]), seconds(t, cut[3])
	if earliest := 0.5 - startup.Seconds() - 0.002; asked < earliest {
		t.Errorf("the cue for 500ms was asked at %.3fs, %.3fs after a start-up of %v: early", asked, asked, startup)
	}
	// "Drawn at" is the deadline of the tick that showed the cut: before
	// the end of the run, and a tick drawn late may have had it before the
	// request.
	if asked > length.Seconds()+0.002 || drawn > length.Seconds()+0.002 {
		t.Errorf("the cut asked at %.3fs was drawn at %.3fs, in a run of %v: out of order", asked, drawn, length)
	}
	ids := recordedSources(t, filepath.Join(filepath.Dir(show), "pgm.y4m"))
	if n, _ := strconv.Atoi(frames[1]); n != len(ids) {
		t.Errorf("the recording holds %d pictures; the summary says %d", len(ids), n)
	}
	runs := runsOf(ids)
	if len(runs) > 0 && runs[0] == 0 {
		runs = runs[1:] // black until the sources' first frames
	}
	if len(runs) != 2 {
		t.Errorf("the recording shows sources %v in turn, want scene.a's then scene.b's", runs)
	}
}

func TestRunRefusesBadFlagsAndPlans(t *testing.T) {
	show := writeRunShow(t)
	cases := []struct {
		args []string
		rc   int
		msg  string
	}{
		{[]string{"run", "-backend", "tpu", show}, 2, `there is no backend "tpu"`},
		{[]string{"run", "-cue", "soon bus.pgm scene.b", show}, 2, "is not a time after the start"},
		{[]string{"run", "-cue", "1s bus.pgm scene.c", show}, 2, "bus.pgm cannot show scene.c (its scenes: scene.a, scene.b)"},
		{[]string{"run", "-cue", "1s bus.nope scene.a", show}, 2, "the show has no bus bus.nope"},
		{[]string{"run", "-listen", "0.0.0.0:0", "-duration", "200ms", show}, 2, "not a loopback address"},
		{[]string{"run", "-duration", "-1s", show}, 2, "write a positive duration"},
		{[]string{"run", "-cue", "1s bus.pgm scene.b cut 1s", show}, 2, "a cut has no duration"},
		{[]string{"run", "-duration", "1s", "-cue", "2s bus.pgm scene.b", show}, 2, "comes after the end of the run"},
		{[]string{"run", "-plan", filepath.Join(t.TempDir(), "none.json"), show}, 1, "no such file"},
		{[]string{"run"}, 2, "usage: onair run"},
	}
	for _, c := range cases {
		rc, _, errs := runCLI(t, c.args...)
		if rc != c.rc || !strings.Contains(errs, c.msg) {
			t.Errorf("onair %s: rc=%d, stderr:\n%s\nwant rc=%d and %q", strings.Join(c.args, " "), rc, errs, c.rc, c.msg)
		}
	}
	// A plan saved for another show (another hash) is refused.
	other := filepath.Join(t.TempDir(), "other.json")
	if rc, _, errs := runCLI(t, "plan", "-backend", "cpu", "-out", other, "shows/minimal.hcl"); rc != 0 {
		t.Fatalf("plan: %s", errs)
	}
	if rc, _, errs := runCLI(t, "run", "-plan", other, show); rc != 1 || !strings.Contains(errs, "compiled from another show") {
		t.Errorf("a plan of another show: rc=%d %s", rc, errs)
	}
}

// TestRunStopsCleanlyOnInterrupt runs the real binary, interrupts it as
// Ctrl-C does once its bus has drawn ten ticks, and expects a clean stop
// with the summary and every frame the output took in the recording.
func TestRunStopsCleanlyOnInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the onair binary")
	}
	bin := filepath.Join(t.TempDir(), "onair")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	show := writeRunShow(t)
	cmd := exec.Command(bin, "run", "-listen", "127.0.0.1:0", show)
	var out, errb liveOutput
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() // when the test fails before the end
	ended := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(ended) }()
	addr := waitOutput(t, &out, `status: http://(\S+)/status`, ended)[1]
	waitStatus(t, addr, "ten ticks", func(ticks uint64, _ string) bool { return ticks >= 10 })
	cmd.Process.Signal(syscall.SIGINT)
	stuck := time.NewTimer(eventBound)
	defer stuck.Stop()
	select {
	case <-ended:
		if waitErr != nil {
			t.Fatalf("exit after SIGINT: %v\n%s\n%s", waitErr, out.String(), errb.String())
		}
	case <-stuck.C:
		t.Fatalf("still running %v after SIGINT:\n%s", eventBound, out.String())
	}
	frames := regexp.MustCompile(`output\.pgm\s+record\s+([0-9]+) frames`).FindStringSubmatch(out.String())
	if !strings.Contains(out.String(), "Ran cli for") || frames == nil {
		t.Fatalf("no summary after SIGINT:\n%s", out.String())
	}
	ids := recordedSources(t, filepath.Join(filepath.Dir(show), "pgm.y4m"))
	if n, _ := strconv.Atoi(frames[1]); n != len(ids) || n < 10 {
		t.Errorf("the recording holds %d pictures; the summary says the output took %d (and the bus drew at least 10)", len(ids), n)
	}
}

// TestStatusAndCutCommands drives a running show with the two commands an
// operator types, onair status (text and -json) and onair cut, then stops
// it as Ctrl-C does.
func TestStatusAndCutCommands(t *testing.T) {
	show := writeRunShow(t)
	bg := runInBackground("run", "-listen", "127.0.0.1:0", "-quiet", show)
	addr := bg.waitOut(t, `status: http://(\S+)/status`)[1]
	rc, text, errs := runCLI(t, "status", "-addr", addr)
	if rc != 0 || !strings.Contains(text, "cli on the cpu backend") || !strings.Contains(text, "Buses:") || !strings.Contains(text, "Loops:") {
		t.Errorf("onair status: rc=%d\n%s%s", rc, text, errs)
	}
	if rc, js, _ := runCLI(t, "status", "-json", "-addr", addr); rc != 0 || !strings.Contains(js, `"runtime"`) {
		t.Errorf("onair status -json: rc=%d", rc)
	}
	if rc, msg, errs := runCLI(t, "cut", "-addr", addr, "-fade", "300ms", "bus.pgm", "scene.b"); rc != 0 || !strings.Contains(msg, "fade bus.pgm to scene.b") {
		t.Errorf("onair cut: rc=%d %s %s", rc, msg, errs)
	}
	if rc, _, errs := runCLI(t, "cut", "-addr", addr, "-fade", "soon", "bus.pgm", "scene.b"); rc != 1 || !strings.Contains(errs, "write frames (15f, or 15)") {
		t.Errorf("onair cut -fade soon: rc=%d %s", rc, errs)
	}
	if rc, _, errs := runCLI(t, "cut", "-addr", addr, "bus.pgm", "scene.z"); rc != 1 || !strings.Contains(errs, "scene.a, scene.b") {
		t.Errorf("onair cut to an unknown scene: rc=%d %s", rc, errs)
	}
	waitStatus(t, addr, "the fade to scene.b to finish", func(_ uint64, onAir string) bool { return onAir == "scene.b" })
	// onair cut -at: a timecode two seconds ahead, read off onair status.
	if !strings.Contains(text, "Timecode ") || !strings.Contains(text, "30 non-drop, from ") || !strings.Contains(text, "(time of day)") {
		t.Errorf("onair status does not give the show's timecode:\n%s", text)
	}
	_, js, _ := runCLI(t, "status", "-json", "-addr", addr)
	var st struct {
		Timecode struct {
			Start string
			Tick  int64
		}
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatal(err)
	}
	r := timecode.MustRate(30, 1)
	start, err := r.Parse(st.Timecode.Start)
	if err != nil {
		t.Fatalf("/status timecode start %q: %v", st.Timecode.Start, err)
	}
	at := r.Label(r.Frame(start) + st.Timecode.Tick + 60).String()
	if rc, msg, errs := runCLI(t, "cut", "-addr", addr, "-at", at, "bus.pgm", "scene.a"); rc != 0 || !strings.Contains(msg, "cut bus.pgm to scene.a at "+at) {
		t.Errorf("onair cut -at %s: rc=%d %s %s", at, rc, msg, errs)
	}
	if rc, _, errs := runCLI(t, "cut", "-addr", addr, "-at", "00:00:00:30", "bus.pgm", "scene.a"); rc != 1 || !strings.Contains(errs, "frames run from 00 to 29") {
		t.Errorf("onair cut -at a timecode that does not exist: rc=%d %s", rc, errs)
	}
	waitStatus(t, addr, "the cut at "+at, func(_ uint64, onAir string) bool { return onAir == "scene.a" })
	// A duration in frames, read by the show at its rate.
	if rc, msg, errs := runCLI(t, "cut", "-addr", addr, "-wipe", "15f", "bus.pgm", "scene.b"); rc != 0 || !strings.Contains(msg, "wipe bus.pgm to scene.b over 15f") {
		t.Errorf("onair cut -wipe 15f: rc=%d %s %s", rc, msg, errs)
	}
	waitStatus(t, addr, "the wipe of 15 frames to scene.b", func(_ uint64, onAir string) bool { return onAir == "scene.b" })
	if rc := bg.interrupt(t); rc != 0 {
		t.Fatalf("run: rc=%d\n%s", rc, bg.errs.String())
	}
	if !strings.Contains(bg.out.String(), "fade to scene.b asked at") || !strings.Contains(bg.out.String(), "cut to scene.a asked at") {
		t.Errorf("the run's summary lacks the fade:\n%s", bg.out.String())
	}
}

// TestSavedPlanRunsFromAnyDirectory: a plan saved with the show's paths
// relative to the show runs from another working directory, and finds its
// media and writes its recording beside the show.
func TestSavedPlanRunsFromAnyDirectory(t *testing.T) {
	show := writeRunShow(t)
	saved := filepath.Join(t.TempDir(), "plan.json")
	if rc, _, errs := runCLI(t, "plan", "-backend", "cpu", "-out", saved, show); rc != 0 {
		t.Fatalf("plan: %s", errs)
	}
	b, _ := os.ReadFile(saved)
	if strings.Contains(string(b), filepath.Dir(show)) {
		t.Fatalf("the saved plan names the show's directory %s: its paths must be relative to the show", filepath.Dir(show))
	}
	cwd, _ := os.Getwd()
	defer os.Chdir(cwd)
	os.Chdir(t.TempDir())
	bg := runInBackground("run", "-listen", "", "-plan", saved, show)
	bg.waitOut(t, "on air: cli")
	// The recording beside the show gets its first picture.
	rec := filepath.Join(filepath.Dir(show), "pgm.y4m")
	testwait.Until(t, testwait.Bound, "a picture in "+rec, func() bool { st, err := os.Stat(rec); return err == nil && st.Size() > 320*180*3/2 })
	if rc := bg.interrupt(t); rc != 0 || !strings.Contains(bg.out.String(), "output.pgm") {
		t.Fatalf("run -plan from another directory: rc=%d\n%s\n%s", rc, bg.out.String(), bg.errs.String())
	}
	// Edited by hand: refused.
	os.WriteFile(saved, []byte(strings.Replace(string(b), `"capacity": 3`, `"capacity": 4`, 1)), 0o644)
	if rc, _, errs := runCLI(t, "run", "-duration", "500ms", "-listen", "", "-plan", saved, show); rc != 1 || !strings.Contains(errs, "edited by hand") {
		t.Fatalf("an edited plan: rc=%d %s", rc, errs)
	}
}

// TestBusyListenAddressStopsBeforeGoingOnAir: a status address that cannot
// be taken refuses the run before any source starts or any recording is
// touched.
func TestBusyListenAddressStopsBeforeGoingOnAir(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	show := writeRunShow(t)
	rec := filepath.Join(filepath.Dir(show), "pgm.y4m")
	os.WriteFile(rec, []byte("precious"), 0o644)
	rc, out, errs := runCLI(t, "run", "-duration", "1s", "-listen", ln.Addr().String(), show)
	if rc != 2 || !strings.Contains(errs, "address already in use") || strings.Contains(out, "on air:") {
		t.Fatalf("rc=%d\n%s\n%s", rc, out, errs)
	}
	if b, _ := os.ReadFile(rec); string(b) != "precious" {
		t.Fatal("the refused run touched the recording")
	}
}

// TestRunWarnsWhenTheCPUCannotKeepUp: before going on air, run prints one
// line when the CPU backend cannot draw a bus within its frame period (the
// lint rule cpu-draw-cost), and nothing for a show it can draw.
func TestRunWarnsWhenTheCPUCannotKeepUp(t *testing.T) {
	for _, tc := range []struct {
		rate string
		warn bool
	}{{"30", false}, {"240", true}} {
		src := strings.Replace(runShow, `frame_rate = "30"`, `frame_rate = "`+tc.rate+`"`, 1)
		src = strings.Replace(src, `source "test_pattern" "a" {}`, `canvas {
  input_poll_ms = 2
}
source "test_pattern" "a" {
  size = "1920x1080"
}`, 1)
		p := filepath.Join(t.TempDir(), "show.hcl")
		os.WriteFile(p, []byte(src), 0o644)
		// Run until on air, then stop as Ctrl-C does: a -duration would
		// count the start-up too, which a busy machine may stretch past it.
		bg := runInBackground("run", "-backend", "cpu", "-listen", "", p)
		bg.waitOut(t, "on air: cli")
		rc := bg.interrupt(t)
		out, errs := bg.out.String(), bg.errs.String()
		if rc != 0 {
			t.Fatalf("%s fps: rc=%d\n%s\n%s", tc.rate, rc, out, errs)
		}
		var lines []string
		for _, l := range strings.Split(errs, "\n") {
			if strings.HasPrefix(l, "onair run: warning:") {
				lines = append(lines, l)
			}
		}
		switch {
		case tc.warn && (len(lines) != 1 || !strings.Contains(lines[0], "bus.pgm needs about") || !strings.Contains(lines[0], "more than the 4.2 ms frame period (onair lint -explain cpu-draw-cost)")):
			t.Errorf("%s fps: want one cpu-draw-cost warning, got %q", tc.rate, lines)
		case !tc.warn && len(lines) > 0:
			t.Errorf("%s fps: want no warning, got %q", tc.rate, lines)
		}
	}
}

// TestSecondRunOnOneRecordingIsRefused runs a show in one onair and the
// same show in a second: the second is refused before going on air, naming
// the first's pid, and the first's recording holds what its summary says.
func TestSecondRunOnOneRecordingIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the onair binary")
	}
	bin := filepath.Join(t.TempDir(), "onair")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	show := writeRunShow(t)
	cmd := exec.Command(bin, "run", "-listen", "", show)
	stdout, _ := cmd.StdoutPipe()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out strings.Builder
	wait := func(prefix string) {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the first onair ended before %q:\n%s\n%s", prefix, out.String(), errb.String())
				}
				out.WriteString(l + "\n")
				if strings.HasPrefix(strings.TrimSpace(l), prefix) {
					return
				}
			case <-timeout:
				t.Fatalf("no %q from the first onair in 60 s:\n%s", prefix, out.String())
			}
		}
	}
	wait("on air:")

	rc, _, errs := runCLI(t, "run", "-duration", "1s", "-listen", "", show)
	want := fmt.Sprintf("onair run: output.pgm: pgm.y4m is being written by another onair (pid %d); stop it or choose another path", cmd.Process.Pid)
	if rc != 1 || !strings.Contains(errs, want) {
		t.Errorf("the second run: rc %d, stderr %q; want 1 and %q", rc, errs, want)
	}
	// Let the first record ten frames or more, then stop it.
	rec := filepath.Join(filepath.Dir(show), "pgm.y4m")
	hdr := int64(len("YUV4MPEG2 W320 H180 F30:1 Ip A1:1 C420jpeg XCOLORRANGE=LIMITED\n")) // the show's range, tagged
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(60 * time.Second); ; <-tick.C {
		if st, err := os.Stat(rec); err == nil && st.Size() >= hdr+10*(6+320*180*3/2) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first onair recorded no 10 frames in 60 s")
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	wait("output.pgm")
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the first onair: %v\n%s", err, errb.String())
	}
	// Its summary's frames are the recording's.
	var frames int64
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == "output.pgm" {
			frames, _ = strconv.ParseInt(f[2], 10, 64)
		}
	}
	st, err := os.Stat(rec)
	if err != nil || frames < 10 || st.Size() != hdr+frames*(6+320*180*3/2) {
		t.Fatalf("the first onair's summary says %d frames; its file holds %d bytes (%v)", frames, st.Size(), err)
	}
}
