package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// canvas go_procs is applied when onair run starts the show: Go's
// scheduler runs it on that many processors, and the log says so. (The
// variable GOMAXPROCS, which wins over it, is cleared for the test.)
func TestRunAppliesGoProcs(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	was := runtime.GOMAXPROCS(3)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	show := filepath.Join(t.TempDir(), "show.hcl")
	if err := os.WriteFile(show, []byte(runShow+"canvas {\n  go_procs = 2\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rc, out, errs := runCLI(t, "plan", "-backend", "cpu", "-summary", show); rc != 0 || !strings.Contains(out, "go_procs = 2: Go's scheduler runs the show's goroutines and loops on 2 processors") {
		t.Errorf("plan: rc=%d, the Threads part does not say go_procs = 2:\n%s\n%s", rc, out, errs)
	}
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Fatalf("onair plan set GOMAXPROCS to %d", got)
	}
	rc, out, errs := runCLI(t, "run", "-backend", "cpu", "-duration", "200ms", "-listen", "", show)
	if rc != 0 {
		t.Fatalf("run: rc=%d\n%s\n%s", rc, out, errs)
	}
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("after onair run, GOMAXPROCS is %d, want canvas go_procs 2", got)
	}
	if !strings.Contains(errs, "canvas go_procs") || !strings.Contains(errs, "go_procs=2 was=3") {
		t.Errorf("the log does not say go_procs was applied:\n%s", errs)
	}
}
