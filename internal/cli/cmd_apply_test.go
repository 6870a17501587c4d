package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// applyShow is a show whose one scene puts a test pattern on half of the
// canvas: the left half, or what rect says.
const applyShow = `
show {
  name       = "apply"
  size       = "640x360"
  frame_rate = "30"
}
source "test_pattern" "bars" {
  pattern = "PATTERN"
  size    = "640x360"
}
scene "half" {
  layer {
    source = source.bars
    rect   = RECT
  }
}
bus "program" "pgm" {
  scene = scene.half
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`

// halfLuma is the mean luma of the left and of the right half of f.
func halfLuma(f *frame.Frame) (left, right float64) {
	var l, r int
	for y := 0; y < f.Height; y += 4 {
		row := f.Data[0][y*f.Pitch[0]:]
		for x := 0; x < f.Width; x += 4 {
			if x < f.Width/2 {
				l += int(row[x])
			} else {
				r += int(row[x])
			}
		}
	}
	n := float64(f.Width / 8 * ((f.Height + 3) / 4))
	return float64(l) / n, float64(r) / n
}

// TestApplyMovesALayerOnAir is what an engineer does on air with onair
// apply: edit a layer's rect in the show file, apply it, and the running
// show draws the layer at its new place from then on, without stopping;
// an edit that cannot be made live is refused whole and changes nothing;
// input_poll_ms changes on air; a new scene joins the bus and onair cut
// takes it.
func TestApplyMovesALayerOnAir(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	write := func(pattern, rect string) {
		t.Helper()
		s := strings.NewReplacer("PATTERN", pattern, "RECT", rect).Replace(applyShow)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := filepath.Join(dir, "pgm.y4m")
	onLeft := func(f *frame.Frame) bool { l, r := halfLuma(f); return l > r+30 }
	onRight := func(f *frame.Frame) bool { l, r := halfLuma(f); return r > l+30 }

	write("bars", "[0, 0, 320, 360]")
	bg := runInBackground("run", "-backend", "cpu", "-listen", "127.0.0.1:0", "-quiet", path)
	addr := bg.waitOut(t, `status: http://(\S+)/status`)[1]
	testwait.Until(t, testwait.Bound, "5 pictures with the pattern on the left", func() bool { return y4mPictures(rec, onLeft) >= 5 })

	write("bars", "[320, 0, 320, 360]")
	for range 2 { // -dry-run changes nothing: the second prints the same diff
		if rc, out, errs := runCLI(t, "apply", "-dry-run", "-addr", addr, path); rc != 0 || !strings.Contains(out, `layer[0].rect: [0,0,320,360] → [320,0,320,360]`) || strings.Contains(out, "applied") {
			t.Fatalf("onair apply -dry-run: rc=%d\n%s%s", rc, out, errs)
		}
	}
	rc, out, errs := runCLI(t, "apply", "-addr", addr, path)
	if rc != 0 || !strings.Contains(out, `layer[0].rect: [0,0,320,360] → [320,0,320,360]`) || !strings.Contains(out, "applied on air: scene.half") {
		t.Fatalf("onair apply of a moved layer: rc=%d\n%s%s", rc, out, errs)
	}
	testwait.Until(t, testwait.Bound, "5 pictures with the pattern on the right", func() bool { return y4mPictures(rec, onRight) >= 5 })
	if rc, out, _ := runCLI(t, "apply", "-addr", addr, path); rc != 0 || !strings.Contains(out, "No changes") {
		t.Errorf("onair apply of the show on air: rc=%d, want 0 and no changes\n%s", rc, out)
	}

	// Another pattern re-creates the source: refused, and the show goes on
	// as it was.
	write("checker", "[0, 0, 320, 360]")
	rc, _, errs = runCLI(t, "apply", "-addr", addr, path)
	if rc != 1 || !strings.Contains(errs, "need the show restarted") || !strings.Contains(errs, "source.bars replace") {
		t.Errorf("onair apply of a new pattern: rc=%d, want 1 and a refusal naming source.bars\n%s", rc, errs)
	}
	right := y4mPictures(rec, onRight)
	testwait.Until(t, testwait.Bound, "5 more pictures, still on the right", func() bool { return y4mPictures(rec, onRight) >= right+5 })
	// The Program bus looks at every arriving frame from now on.
	write("bars", "[320, 0, 320, 360]")
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append([]byte("canvas {\n  input_poll_ms = 0\n}\n"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	if rc, out, errs := runCLI(t, "apply", "-addr", addr, path); rc != 0 || !strings.Contains(out, "input_poll_ms: 8 → 0") || !strings.Contains(out, "applied on air: bus.pgm") {
		t.Fatalf("onair apply of input_poll_ms: rc=%d\n%s%s", rc, out, errs)
	}

	// A new scene joins the Program bus on air, and a cut takes it.
	full := `
scene "full" {
  layer {
    source = source.bars
    rect   = [0, 0, 640, 360]
  }
}
`
	b, _ = os.ReadFile(path)
	if err := os.WriteFile(path, append(b, full...), 0o644); err != nil {
		t.Fatal(err)
	}
	if rc, out, errs := runCLI(t, "apply", "-addr", addr, path); rc != 0 || !strings.Contains(out, "applied on air: scene.full, bus.pgm") {
		t.Fatalf("onair apply of a new scene: rc=%d\n%s%s", rc, out, errs)
	}
	if rc, out, errs := runCLI(t, "cut", "-addr", addr, "bus.pgm", "scene.full"); rc != 0 {
		t.Fatalf("onair cut to the new scene: rc=%d\n%s%s", rc, out, errs)
	}
	whole := func(f *frame.Frame) bool { l, r := halfLuma(f); return l > 40 && r > 40 && l-r < 30 && r-l < 30 }
	testwait.Until(t, testwait.Bound, "5 pictures of the new scene", func() bool { return y4mPictures(rec, whole) >= 5 })
	if rc := bg.interrupt(t); rc != 0 {
		t.Fatalf("run: rc=%d\n%s", rc, bg.errs.String())
	}
	if n, l, r, w := y4mPictures(rec, nil), y4mPictures(rec, onLeft), y4mPictures(rec, onRight), y4mPictures(rec, whole); l+r+w < n-2 {
		t.Errorf("of %d pictures, %d show the pattern on the left, %d on the right, %d whole: the changes drew something else", n, l, r, w)
	}
}

// liveShow has a browser source, a scene and a preview output: every kind
// of setting onair apply changes on air.
const liveShow = `
canvas {
  import_ttl_ms = TTL
  input_poll_ms = POLL
}
show {
  name       = "live"
  size       = "640x360"
  frame_rate = "30"
}
source "browser" "gfx" {
  socket = "SOCKET"
}
scene "gfx" {
  layer {
    source = source.gfx
  }
}
bus "program" "pgm" {
  scene = scene.gfx
}
output "preview" "pgm" {
  bus     = bus.pgm
  quality = QUALITY
}
`

// updates lists a change's updates, "ADDRESS KIND.PARAM = VALUE; ...".
func updates(ch show.LiveChange) string {
	var out []string
	for _, u := range ch.Updates {
		out = append(out, fmt.Sprintf("%s %s.%s = %v", u.Address, u.Kind, u.Param, u.Value))
	}
	return strings.Join(out, "; ")
}

// liveChange reads what compiler/diff says changed between two compiled
// shows into what the running show changes, and refuses the rest.
func TestLiveChangeReadsTheDiff(t *testing.T) {
	dir := t.TempDir()
	target, err := backends.Lookup("cpu")
	if err != nil {
		t.Fatal(err)
	}
	compile := func(ttl, poll, quality, socket string) *plan.Plan {
		t.Helper()
		path := filepath.Join(dir, "show.hcl")
		src := strings.NewReplacer("TTL", ttl, "POLL", poll, "QUALITY", quality, "SOCKET", socket).Replace(liveShow)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		var errs strings.Builder
		p, err := loadPlanOrShow(path, lang.Options{}, compiler.Options{ToolVersion: version, Target: target.Lowering}, &errs)
		if err != nil {
			t.Fatalf("%v\n%s", err, errs.String())
		}
		return p
	}
	cur := compile("10000", "8", "80", "gfx.sock")
	for _, c := range []struct {
		name    string
		new     *plan.Plan
		names   string
		refused string
		check   func(show.LiveChange) bool
	}{
		{"import_ttl_ms", compile("2000", "8", "80", "gfx.sock"), "source.gfx", "",
			func(ch show.LiveChange) bool { return updates(ch) == "source.gfx gpu_import.import_ttl_ms = 2000" }},
		{"input_poll_ms", compile("10000", "0", "80", "gfx.sock"), "bus.pgm", "",
			func(ch show.LiveChange) bool { return updates(ch) == "bus.pgm compositor.input_poll_ms = 0" }},
		{"preview quality", compile("10000", "8", "40", "gfx.sock"), "output.pgm", "",
			func(ch show.LiveChange) bool { return updates(ch) == "output.pgm output_preview.quality = 40" }},
		{"the socket", compile("10000", "8", "80", "other.sock"), "", "source.gfx replace", nil},
	} {
		ch, names, refused := liveChange(cur, c.new)
		if got := strings.Join(names, " "); got != c.names {
			t.Errorf("%s: changes %q on air, want %q", c.name, got, c.names)
		}
		if got := strings.Join(refused, "; "); c.refused == "" && got != "" || !strings.Contains(got, c.refused) {
			t.Errorf("%s: refused %q, want %q", c.name, got, c.refused)
		}
		if c.check != nil && !c.check(ch) {
			t.Errorf("%s: the change is %+v", c.name, ch)
		}
	}
}
