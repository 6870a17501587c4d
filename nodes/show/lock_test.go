package show

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/plan"
)

func recordPlan(path string) *plan.Plan {
	return &plan.Plan{Show: "locks", Nodes: []plan.Node{
		{ID: "output.pgm/output_record", Address: "output.pgm", Kind: "output_record", Params: map[string]any{"path": path}},
		{ID: "output.bars/output_null", Address: "output.bars", Kind: "output_null"},
	}}
}

// TestMain doubles as the helper process of TestLockNamesAnotherProcess:
// with ONAIR_TEST_HOLD_LOCK set, the test binary locks a recording in that
// directory, says so, and holds the lock until its stdin closes.
func TestMain(m *testing.M) {
	if dir := os.Getenv("ONAIR_TEST_HOLD_LOCK"); dir != "" {
		holdLock(dir)
	}
	os.Exit(m.Run())
}

func holdLock(dir string) {
	l, err := LockOutputs(recordPlan("out/pgm.y4m"), dir)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin) // hold it until the parent closes stdin
	l.Release()
	os.Exit(0)
}

// TestLockNamesAnotherProcess: a recording another process locked is
// refused with that process's pid and nothing is touched; once it lets
// go, the lock is taken.
func TestLockNamesAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "out", "pgm.y4m")
	cmd := exec.Command(os.Args[0]) // TestMain holds the lock
	cmd.Env = append(os.Environ(), "ONAIR_TEST_HOLD_LOCK="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("the helper process says %q", line)
	}
	os.WriteFile(rec, []byte("the other process's frames"), 0o644)

	_, err := LockOutputs(recordPlan("out/pgm.y4m"), dir)
	want := fmt.Sprintf("output.pgm: out/pgm.y4m is being written by another onair (pid %d); stop it or choose another path", cmd.Process.Pid)
	if err == nil || err.Error() != want {
		t.Fatalf("refused with %v; want %s", err, want)
	}
	if b, _ := os.ReadFile(rec); string(b) != "the other process's frames" {
		t.Fatalf("the refused lock changed the file: %q", b)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	l, err := LockOutputs(recordPlan("out/pgm.y4m"), dir)
	if err != nil {
		t.Fatalf("after the other process ended: %v", err)
	}
	l.Release()
}

// TestLockCreatesNothingForAShowThatFails: a file the locking created is
// removed again, empty, when the show does not go on air; an existing one
// is left.
func TestLockCreatesNothingForAShowThatFails(t *testing.T) {
	dir := t.TempDir()
	held, err := LockOutputs(recordPlan("b.y4m"), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	os.WriteFile(filepath.Join(dir, "kept.y4m"), []byte("kept"), 0o644)
	p := &plan.Plan{Nodes: []plan.Node{
		{Address: "output.a", Kind: "output_record", Params: map[string]any{"path": "a.y4m"}},
		{Address: "output.k", Kind: "output_record", Params: map[string]any{"path": "kept.y4m"}},
		{Address: "output.b", Kind: "output_record", Params: map[string]any{"path": "b.y4m"}},
	}}
	if _, err := LockOutputs(p, dir); err == nil || !strings.Contains(err.Error(), "output.b: b.y4m is being written by another show in this onair") {
		t.Fatalf("want output.b refused, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.y4m")); !os.IsNotExist(err) {
		t.Errorf("a.y4m, created to lock it, is still there: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "kept.y4m")); string(b) != "kept" {
		t.Errorf("kept.y4m changed: %q", b)
	}
	// The refused run released what it had locked.
	l, err := LockOutputs(&plan.Plan{Nodes: p.Nodes[:2]}, dir)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
}

// TestLockRefusesTwoOutputsOnOneFile: two outputs of one plan writing one
// file (lint's shared-output-path, which a saved plan skips) are refused.
func TestLockRefusesTwoOutputsOnOneFile(t *testing.T) {
	dir := t.TempDir()
	p := &plan.Plan{Nodes: []plan.Node{
		{Address: "output.a", Kind: "output_record", Params: map[string]any{"path": "out/pgm.y4m"}},
		{Address: "output.b", Kind: "output_record", Params: map[string]any{"path": filepath.Join(dir, "out", "pgm.y4m")}},
	}}
	_, err := LockOutputs(p, dir)
	if err == nil || !strings.Contains(err.Error(), "is written by output.a of this show too") {
		t.Fatalf("two outputs on one file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "pgm.y4m")); !os.IsNotExist(err) {
		t.Errorf("the refused plan left its file: %v", err)
	}
}
