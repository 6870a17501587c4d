// Package showtest is what the backends' show tests share (nodes/cpu,
// nodes/cuda, nodes/browser): compiling a show file for a backend, waiting
// for a running show to reach a state, reading what a record output wrote.
// Only tests import it.
package showtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// Compile loads the show file at path (with its variables set, as -var
// does) and compiles it for the backend of target; a diagnostic fails the
// test, printed with its source lines. It returns the plan and the show's
// directory, which relative paths in the plan are relative to.
func Compile(t testing.TB, path string, vars map[string]string, target *nodes.Lowering) (*plan.Plan, string) {
	t.Helper()
	loaded, diags := lang.Load([]string{path}, lang.Options{Vars: vars})
	if diags.HasErrors() {
		var b bytes.Buffer
		lang.WriteDiagnostics(&b, loaded.Files, diags, false)
		t.Fatalf("load %s:\n%s", path, b.String())
	}
	res, cdiags := compiler.Compile(loaded, compiler.Options{Target: target, ToolVersion: "test"})
	if cdiags.HasErrors() {
		var b bytes.Buffer
		lang.WriteDiagnostics(&b, loaded.Files, cdiags, false)
		t.Fatalf("compile %s:\n%s", path, b.String())
	}
	return res.Plan, loaded.Dir
}

// WriteShow writes src as show.hcl into dir (a new temporary directory
// when dir is "") and returns its path.
func WriteShow(t testing.TB, dir, src string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	p := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// EventBound is how long a test waits for something a show must do: a
// number of ticks drawn, an error reported, a file picked up. It bounds a
// wait for an event, never a measurement; on an idle machine every event
// comes within a second or two, and the bound only keeps a broken show from
// hanging the suite on a machine busy with other work.
const EventBound = time.Minute

// Running is what Wait reads of a running show (any backend's).
type Running interface {
	Summary() show.Summary
	Failed() <-chan struct{}
	Err() error
}

// Wait polls the running show's summary until cond holds and returns that
// summary; it fails the test if the show fails first, or after EventBound.
func Wait(t testing.TB, s Running, what string, cond func(show.Summary) bool) show.Summary {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(EventBound)
	for {
		sum := s.Summary()
		if cond(sum) {
			return sum
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after %v", what, EventBound)
		}
		select {
		case <-s.Failed():
			t.Fatalf("the show failed while waiting for %s: %v", what, s.Err())
		case <-tick.C:
		}
	}
}

// ReadY4M returns every frame of a Y4M file (what a record output wrote).
func ReadY4M(t testing.TB, path string) []*frame.Frame {
	t.Helper()
	r, err := media.OpenY4M(path, "rec", false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []*frame.Frame
	for {
		f, err := frame.New(r.Format(), r.Width(), r.Height())
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Next(f); err != nil {
			return out
		}
		out = append(out, f)
	}
}
