package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dryShow has two sources: a scene of each source.a on the Program bus,
// and source.a on an AUX bus. EXTRA is appended; AUX is what the AUX bus
// shows.
const dryShow = `
show {
  name       = "dry"
  size       = "320x180"
  frame_rate = "30"
}
source "test_pattern" "a" {
  size = "320x180"
}
source "test_pattern" "b" {
  pattern = "ramp"
  size    = "320x180"
}
scene "one" {
  layer {
    source = source.a
  }
}
bus "program" "pgm" {
  scene = scene.one
}
bus "aux" "mon" {
  source = AUX
}
output "null" "pgm" {
  bus = bus.pgm
}
EXTRA
`

// TestDryRunSaysWhatApplyDoes: onair apply -dry-run runs the check onair
// apply's show runs, so what the dry run calls live is what apply changes,
// and what it refuses apply refuses, naming the change and why. Another
// source on an AUX bus in place of its one (an input removed) needs the
// show restarted: its old input is not "# live" in the diff, the dry run
// says apply would refuse it, and apply refuses it. A new scene of a
// source the bus has, and a scene of a source on air new to the bus (an
// edge from its fan-out, added on air), are live in all three, and onair
// cut takes the second.
func TestDryRunSaysWhatApplyDoes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	write := func(aux, extra string) {
		t.Helper()
		s := strings.NewReplacer("AUX", aux, "EXTRA", extra).Replace(dryShow)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("source.a", "")
	bg := runInBackground("run", "-backend", "cpu", "-listen", "127.0.0.1:0", "-quiet", path)
	addr := bg.waitOut(t, `status: http://(\S+)/status`)[1]

	for _, c := range []struct {
		name, aux, extra string
		refused          []string // in the dry run's and apply's refusal
	}{
		{name: "another source on an AUX bus", aux: "source.b",
			refused: []string{"bus.mon update", "bus.mon/compositor input source.a/one_to_many_nb changes (a running node's inputs are fixed"}},
	} {
		write(c.aux, c.extra)
		rc, out, errs := runCLI(t, "apply", "-dry-run", "-addr", addr, path)
		if rc != 1 || !strings.Contains(errs, "apply would refuse") || !strings.Contains(out, "- input source.a/one_to_many_nb = \"capacity 3, drop, nv12\"  # needs a restart") {
			t.Errorf("%s: onair apply -dry-run: rc=%d, want 1, a refusal and the new input marked as needing a restart\n%s%s", c.name, rc, out, errs)
		}
		rcA, _, errsA := runCLI(t, "apply", "-addr", addr, path)
		if rcA != 1 || !strings.Contains(errsA, "need the show restarted") {
			t.Errorf("%s: onair apply: rc=%d, want 1 and a refusal\n%s", c.name, rcA, errsA)
		}
		for _, w := range c.refused {
			if !strings.Contains(errs, w) || !strings.Contains(errsA, w) {
				t.Errorf("%s: the dry run and apply must both name %q:\ndry run: %s\napply: %s", c.name, w, errs, errsA)
			}
		}
	}

	write("source.a", "scene \"again\" {\n  layer {\n    source = source.a\n  }\n}\n")
	rc, out, errs := runCLI(t, "apply", "-dry-run", "-addr", addr, path)
	if rc != 0 || !strings.Contains(out, "would apply on air: scene.again, bus.pgm") {
		t.Fatalf("onair apply -dry-run of a scene of source.a: rc=%d\n%s%s", rc, out, errs)
	}
	rc, out, errs = runCLI(t, "apply", "-addr", addr, path)
	if rc != 0 || !strings.Contains(out, "applied on air: scene.again, bus.pgm") {
		t.Fatalf("onair apply of a scene of source.a: rc=%d\n%s%s", rc, out, errs)
	}
	// A scene of source.b, which feeds only bus.mon's plan so far: the bus
	// gains the input on air.
	write("source.a", "scene \"again\" {\n  layer {\n    source = source.a\n  }\n}\nscene \"two\" {\n  layer {\n    source = source.b\n  }\n}\n")
	rc, out, errs = runCLI(t, "apply", "-dry-run", "-addr", addr, path)
	if rc != 0 || !strings.Contains(out, "+ input source.b/one_to_many_nb = \"capacity 3, drop, nv12\"  # live") || !strings.Contains(out, "would apply on air: scene.two, bus.pgm") {
		t.Fatalf("onair apply -dry-run of a scene of source.b: rc=%d\n%s%s", rc, out, errs)
	}
	rc, out, errs = runCLI(t, "apply", "-addr", addr, path)
	if rc != 0 || !strings.Contains(out, "applied on air: scene.two, bus.pgm") {
		t.Fatalf("onair apply of a scene of source.b: rc=%d\n%s%s", rc, out, errs)
	}
	if rc, out, errs := runCLI(t, "cut", "-addr", addr, "bus.pgm", "scene.two"); rc != 0 {
		t.Fatalf("onair cut to the scene of source.b: rc=%d\n%s%s", rc, out, errs)
	}
	if rc := bg.interrupt(t); rc != 0 {
		t.Fatalf("run: rc=%d\n%s", rc, bg.errs.String())
	}
}
