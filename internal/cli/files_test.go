package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Every file the CLI reads is read as a regular file of bounded size: a
// FIFO, a device or a link to one gets a clear error at once, never a hang
// or a gigabyte read (issue 9's hostile tester hung fmt, diff and run -plan
// on FIFOs and ran diff out of memory on /dev/urandom).
func TestCommandsRefuseFilesThatAreNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "show.hcl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	zero := filepath.Join(dir, "zero.hcl")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	planFIFO := filepath.Join(dir, "plan.json")
	if err := syscall.Mkfifo(planFIFO, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"fmt on a FIFO", []string{"fmt", fifo}, "not a regular file"},
		{"fmt on a link to /dev/zero", []string{"fmt", zero}, "not a regular file"},
		{"diff of a FIFO", []string{"diff", fifo, "shows/minimal.hcl"}, "not a regular file"},
		{"diff of /dev/urandom", []string{"diff", "/dev/urandom", "shows/minimal.hcl"}, "not a regular file"},
		{"run -plan of a FIFO", []string{"run", "-listen", "", "-plan", planFIFO, "shows/minimal.hcl"}, "not a regular file"},
		{"run -plan of /dev/zero", []string{"run", "-listen", "", "-plan", "/dev/zero", "shows/minimal.hcl"}, "not a regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A hang would be caught by go test's own timeout.
			rc, _, stderr := runCLI(t, c.args...)
			if rc == 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("rc %d, stderr:\n%s\nwant a failure saying %q", rc, stderr, c.want)
			}
		})
	}
}

// onair fmt on a show nested deeper than the language allows answers with
// the limit's diagnostic instead of overflowing the parser's stack.
func TestFmtRefusesDeepNesting(t *testing.T) {
	p := filepath.Join(t.TempDir(), "deep.hcl")
	os.WriteFile(p, []byte("locals {\n  x = "+strings.Repeat("(", 70000)+"1"+strings.Repeat(")", 70000)+"\n}\n"), 0o644)
	rc, _, stderr := runCLI(t, "fmt", "-check", p)
	if rc == 0 || !strings.Contains(stderr, "deep.hcl:2:") || !strings.Contains(strings.ToLower(stderr), "nest") {
		t.Fatalf("rc %d, stderr:\n%.600s", rc, stderr)
	}
}
