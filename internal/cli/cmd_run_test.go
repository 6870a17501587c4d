package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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

func TestRunForADurationWithACue(t *testing.T) {
	show := writeRunShow(t)
	rc, out, errs := runCLI(t, "run", "-duration", "1500ms", "-listen", "127.0.0.1:0", "-cue", "500ms bus.pgm scene.b", show)
	if rc != 0 {
		t.Fatalf("rc=%d\n%s\n%s", rc, out, errs)
	}
	for _, want := range []string{"backend: cpu", "on air: cli", "status: http://127.0.0.1:", "Ran cli for", "bus.pgm", "cut to scene.b asked at 0.5", "output.pgm", "source.a"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if st, err := os.Stat(filepath.Join(filepath.Dir(show), "pgm.y4m")); err != nil || st.Size() < 100_000 {
		t.Errorf("no recording: %v", err)
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
// Ctrl-C does, and expects a clean stop with the summary and every frame
// the bus drew in the recording.
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
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGINT: %v\n%s\n%s", err, out.String(), errb.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("still running 10 s after SIGINT:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "Ran cli for") || !strings.Contains(out.String(), "output.pgm") {
		t.Fatalf("no summary after SIGINT:\n%s", out.String())
	}
}

// TestStatusAndCutCommands drives a running show with the two commands an
// operator types: onair status (text and -json) and onair cut.
func TestStatusAndCutCommands(t *testing.T) {
	show := writeRunShow(t)
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() {
		done <- run([]string{"run", "-duration", "3s", "-listen", "127.0.0.1:7394", "-quiet", show}, &out, &errb)
	}()
	time.Sleep(1200 * time.Millisecond)
	rc, text, errs := runCLI(t, "status", "-addr", "127.0.0.1:7394")
	if rc != 0 || !strings.Contains(text, "cli on the cpu backend") || !strings.Contains(text, "Buses:") || !strings.Contains(text, "Loops:") {
		t.Errorf("onair status: rc=%d\n%s%s", rc, text, errs)
	}
	if rc, js, _ := runCLI(t, "status", "-json", "-addr", "127.0.0.1:7394"); rc != 0 || !strings.Contains(js, `"runtime"`) {
		t.Errorf("onair status -json: rc=%d", rc)
	}
	if rc, msg, errs := runCLI(t, "cut", "-addr", "127.0.0.1:7394", "-fade", "300ms", "bus.pgm", "scene.b"); rc != 0 || !strings.Contains(msg, "fade bus.pgm to scene.b") {
		t.Errorf("onair cut: rc=%d %s %s", rc, msg, errs)
	}
	if rc, _, errs := runCLI(t, "cut", "-addr", "127.0.0.1:7394", "bus.pgm", "scene.z"); rc != 1 || !strings.Contains(errs, "scene.a, scene.b") {
		t.Errorf("onair cut to an unknown scene: rc=%d %s", rc, errs)
	}
	if rc := <-done; rc != 0 {
		t.Fatalf("run: rc=%d\n%s", rc, errb.String())
	}
	if !strings.Contains(out.String(), "fade to scene.b") {
		t.Errorf("the run's summary lacks the fade:\n%s", out.String())
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
	rc, out, errs := runCLI(t, "run", "-duration", "500ms", "-listen", "", "-plan", saved, show)
	if rc != 0 || !strings.Contains(out, "output.pgm") {
		t.Fatalf("run -plan from another directory: rc=%d\n%s\n%s", rc, out, errs)
	}
	if st, err := os.Stat(filepath.Join(filepath.Dir(show), "pgm.y4m")); err != nil || st.Size() == 0 {
		t.Fatalf("the recording is not beside the show: %v", err)
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
		rc, out, errs := runCLI(t, "run", "-backend", "cpu", "-duration", "300ms", "-listen", "", p)
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
	hdr := int64(len("YUV4MPEG2 W320 H180 F30:1 Ip A1:1 C420jpeg\n"))
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
