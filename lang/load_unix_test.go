//go:build unix

package lang

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// loadWithin runs Load and fails the test, instead of hanging it, when Load
// does not return: reading a FIFO waits for a writer forever.
func loadWithin(t *testing.T, paths []string) hcl.Diagnostics {
	t.Helper()
	done := make(chan hcl.Diagnostics, 1)
	go func() {
		_, diags := Load(paths, Options{})
		done <- diags
	}()
	select {
	case diags := <-done:
		return diags
	case <-time.After(5 * time.Second):
		t.Fatalf("Load(%v) hangs", paths)
		return nil
	}
}

const tinyShow = "show {\n  name       = \"tiny\"\n  size       = \"640x360\"\n  frame_rate = \"30\"\n}\n"

// A show path that is not a regular file (mkfifo fifo.hcl) is refused with
// an error naming it; in a directory such an entry is skipped with a
// warning naming it, and the other files load.
func TestLoadRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.hcl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}

	diags := loadWithin(t, []string{fifo})
	if !diags.HasErrors() || diags[0].Summary != "Not a regular file" || !strings.Contains(diags[0].Detail, fifo+" is a named pipe (FIFO)") {
		t.Errorf("fifo.hcl: %v", diags)
	}

	// A directory holding a FIFO named .hcl beside the show's file.
	if err := os.WriteFile(filepath.Join(dir, "show.hcl"), []byte(tinyShow), 0o644); err != nil {
		t.Fatal(err)
	}
	diags = loadWithin(t, []string{dir})
	if diags.HasErrors() {
		t.Errorf("directory with a FIFO: errors %v", diags)
	}
	var warned bool
	for _, d := range diags {
		if d.Severity == hcl.DiagWarning && d.Summary == "Show file skipped: not a regular file" && strings.Contains(d.Detail, fifo) {
			warned = true
		}
	}
	if !warned {
		t.Errorf("directory with a FIFO: no warning naming %s in %v", fifo, diags)
	}

	// A directory whose only .hcl entry is a FIFO has no show files.
	os.Remove(filepath.Join(dir, "show.hcl"))
	diags = loadWithin(t, []string{dir})
	if got := diagLines(diags, hcl.DiagError); len(got) != 1 || got[0] != "- No show files in directory" {
		t.Errorf("directory of a FIFO only: %v", diags)
	}

	// A link to a FIFO is what it points to.
	link := filepath.Join(t.TempDir(), "link.hcl")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	if diags := loadWithin(t, []string{link}); !diags.HasErrors() || diags[0].Summary != "Not a regular file" {
		t.Errorf("link to a FIFO: %v", diags)
	}
}

// readRegular checks the file it opened, not the name it was given: a FIFO
// that takes a file's place after it was looked at is refused, not read.
func TestReadRegularRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "late.hcl")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	done := make(chan *hcl.Diagnostic, 1)
	go func() {
		_, d := readRegular(fifo)
		done <- d
	}()
	select {
	case d := <-done:
		if d == nil || d.Summary != "Not a regular file" {
			t.Errorf("readRegular(FIFO): %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("readRegular hangs on a FIFO")
	}
}

// ReadFile, for tools that read show files themselves, refuses a link to
// /dev/zero (reading it would never end) by name, and reads a show.
func TestReadFileRefusesDevZero(t *testing.T) {
	link := filepath.Join(t.TempDir(), "zero.hcl")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	if _, d := ReadFile(link); d == nil || d.Summary != "Not a regular file" || !strings.Contains(d.Detail, link+" is a character device") {
		t.Errorf("ReadFile(link to /dev/zero): %v", d)
	}
	if data, d := ReadFile("testdata/good/vars.hcl"); d != nil || !strings.Contains(string(data), "from-file") {
		t.Errorf("ReadFile(vars.hcl): %v", d)
	}
}
