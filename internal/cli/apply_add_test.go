package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
)

// addOnAirShow is a show of one test pattern on a recorded Program bus and
// an AUX bus routed to it; MORE is what the edited show adds and ROUTES
// the AUX bus's routes.
const addOnAirShow = `
show {
  name       = "add"
  size       = "640x360"
  frame_rate = "10"
}
source "test_pattern" "bars" {
  size = "640x360"
}
scene "bars" {
  layer {
    source = source.bars
    rect   = [0, 0, 640, 360]
  }
}
bus "program" "pgm" {
  scene = scene.bars
}
bus "aux" "mon" {
  source = source.bars
  routes = [ROUTES]
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
output "record" "mon" {
  bus  = bus.mon
  path = "mon.y4m"
}
MORE
`

// TestApplyAddsASourceOnAir is onair apply of a show file that gains a
// source, a scene of it, and an AUX route to it, end to end: -dry-run says
// the source will start first, apply starts it and answers once it is
// ready, onair cut takes the new scene and the new route, both recordings
// then show the new source's frames, and the as-run log has the change
// with the source it added.
func TestApplyAddsASourceOnAir(t *testing.T) {
	dir := t.TempDir()
	path, asRun := filepath.Join(dir, "show.hcl"), filepath.Join(dir, "as-run.jsonl")
	write := func(more, routes string) {
		t.Helper()
		s := strings.NewReplacer("MORE", more, "ROUTES", routes).Replace(addOnAirShow)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("", "source.bars")
	bg := runInBackground("run", "-backend", "cpu", "-listen", "127.0.0.1:0", "-quiet", "-as-run", asRun, path)
	addr := bg.waitOut(t, `status: http://(\S+)/status`)[1]
	pgm, mon := filepath.Join(dir, "pgm.y4m"), filepath.Join(dir, "mon.y4m")
	stamped := func(id uint16) func(*frame.Frame) bool {
		return func(f *frame.Frame) bool {
			got, _, ok := media.ReadStamp(f, frame.Rect{W: f.Width, H: f.Height})
			return ok && got == id
		}
	}
	testwait.Until(t, testwait.Bound, "3 pictures of source.bars", func() bool { return y4mPictures(pgm, stamped(1)) >= 3 })

	write(`
source "test_pattern" "cam" {
  pattern = "ramp"
  size    = "640x360"
}
scene "cam" {
  layer {
    source = source.cam
    rect   = [0, 0, 640, 360]
  }
}
`, "source.bars, source.cam")
	rc, out, errs := runCLI(t, "apply", "-dry-run", "-addr", addr, path)
	if rc != 0 || !strings.Contains(out, "+ input source.cam/one_to_many_nb") || !strings.Contains(out, "# live") ||
		!strings.Contains(out, "would start on air first: source.cam (3 nodes)") {
		t.Fatalf("onair apply -dry-run of a new source: rc=%d\n%s%s", rc, out, errs)
	}
	if rc, out, errs := runCLI(t, "cut", "-addr", addr, "bus.pgm", "scene.cam"); rc == 0 {
		t.Fatalf("a cut to a scene not applied yet: rc=0\n%s%s", out, errs)
	}
	rc, out, errs = runCLI(t, "apply", "-addr", addr, path)
	if rc != 0 || !strings.Contains(out, "applied on air: source.cam, scene.cam, bus.mon, bus.pgm") {
		t.Fatalf("onair apply of a new source: rc=%d\n%s%s", rc, out, errs)
	}
	for _, c := range [][]string{{"bus.pgm", "scene.cam"}, {"bus.mon", "source.cam"}} {
		if rc, out, errs := runCLI(t, "cut", "-addr", addr, c[0], c[1]); rc != 0 {
			t.Fatalf("onair cut %s %s: rc=%d\n%s%s", c[0], c[1], rc, out, errs)
		}
	}
	testwait.Until(t, testwait.Bound, "5 pictures of source.cam on each bus", func() bool {
		return y4mPictures(pgm, stamped(2)) >= 5 && y4mPictures(mon, stamped(2)) >= 5
	})
	if rc := bg.interrupt(t); rc != 0 {
		t.Fatalf("run: rc=%d\n%s", rc, bg.errs.String())
	}
	f, err := os.Open(asRun)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var changes [][]string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var l show.AsRunLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("as-run line %q: %v", sc.Text(), err)
		}
		if l.Event == "live_change" {
			changes = append(changes, l.Elements)
		}
	}
	if len(changes) != 1 || !slices.Contains(changes[0], "source.cam") || !slices.Contains(changes[0], "scene.cam") {
		t.Errorf("the as-run log's live changes: %v, want one naming source.cam and scene.cam", changes)
	}
}
