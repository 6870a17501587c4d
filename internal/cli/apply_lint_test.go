package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/internal/testwait"
)

// lintApplyShow is a show on the CPU backend whose one scene shows a test
// pattern; EXTRA is what an edit adds.
const lintApplyShow = `
show {
  name       = "apply-lint"
  size       = "320x180"
  frame_rate = "30"
}
source "test_pattern" "bars" {
  size = "320x180"
}
scene "one" {
  layer {
    source = source.bars
    rect   = RECT
  }
  EXTRA
}
bus "program" "pgm" {
  scene = scene.one
}
output "null" "pgm" {
  bus = bus.pgm
}
`

// TestApplySaysWhatLintSays is issue 27's 300 layers: onair apply sent a
// scene lint says the CPU cannot draw in its frame period, without a word,
// and Program then drew 9 ticks in 5 s. apply now prints lint's warnings
// about the new show before sending it (with -dry-run too), and refuses
// to send a show with lint errors: nothing changes on air.
func TestApplySaysWhatLintSays(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	write := func(rect, extra string) {
		t.Helper()
		s := strings.NewReplacer("RECT", rect, "EXTRA", extra).Replace(lintApplyShow)
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("[0, 0, 160, 180]", "")
	bg := runInBackground("run", "-backend", "cpu", "-listen", "127.0.0.1:0", "-quiet", path)
	addr := bg.waitOut(t, `status: http://(\S+)/status`)[1]

	// 300 blended layers: a warning that the CPU cannot draw them, and one
	// for the layer left off the canvas.
	write("[-400, 0, 160, 180]", `dynamic "layer" {
    for_each = range(300)
    content {
      source  = source.bars
      opacity = 0.5
    }
  }`)
	rc, out, errs := runCLI(t, "apply", "-dry-run", "-addr", addr, path)
	if rc != 0 || !strings.Contains(out, "scene.one") {
		t.Fatalf("onair apply -dry-run of 300 layers: rc=%d\n%s%s", rc, out, errs)
	}
	for _, want := range []string{"warning[cpu-draw-cost]: bus.pgm needs about", "warning[layer-off-canvas]: scene.one: the layer of source.bars lies wholly outside the 320x180 canvas", "show.hcl:13:5"} {
		if !strings.Contains(errs, want) {
			t.Errorf("onair apply -dry-run does not say %q:\n%s", want, errs)
		}
	}

	// A lint error (an ignore comment without a reason): refused before
	// anything is sent, and the show on air keeps its scene.
	write("[160, 0, 160, 180] # onair-lint-ignore layer-off-canvas", "")
	rc, out, errs = runCLI(t, "apply", "-addr", addr, path)
	if rc != 1 || !strings.Contains(errs, "error[ignore-without-reason]") || !strings.Contains(errs, "refused, nothing sent: the show has 1 lint error") || strings.Contains(out, "applied on air") {
		t.Errorf("onair apply of a show with a lint error: rc=%d, want 1 and a refusal\n%s%s", rc, out, errs)
	}
	if rc, out, errs := runCLI(t, "apply", "-dry-run", "-addr", addr, path); !strings.Contains(out, `layer[0].rect: [0,0,160,180] → [160,0,160,180]`) {
		t.Errorf("after a refused apply the show on air changed: rc=%d\n%s%s", rc, out, errs)
	}
	// Fixed, it applies, and says nothing more.
	write("[160, 0, 160, 180]", "")
	if rc, out, errs := runCLI(t, "apply", "-addr", addr, path); rc != 0 || !strings.Contains(out, "applied on air: scene.one") || strings.Contains(errs, "warning[") {
		t.Errorf("onair apply of a clean show: rc=%d\n%s%s", rc, out, errs)
	}
	if rc := bg.interrupt(t); rc != 0 {
		t.Fatalf("run: rc=%d\n%s", rc, bg.errs.String())
	}
}

// TestPostedPlanPastTheGeometryLimits is issue 27's posted plans: a layer
// 1e14 wide stopped Program ("makeslice: len out of range") or panicked a
// band worker, 2e7 wide stalled it 4 s and kept 850 MB, 2^30 by 2^30 grew
// RSS past 2 GB. Each is refused by the plan's loader, saying which layer
// and which limit, and the show goes on drawing what it drew; then a cut
// to the scene still on air.
func TestPostedPlanPastTheGeometryLimits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	s := strings.NewReplacer("RECT", "[0, 0, 320, 180]", "EXTRA", "").Replace(lintApplyShow)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	bg := runInBackground("run", "-backend", "cpu", "-listen", "127.0.0.1:0", "-quiet", path)
	client := control.Client{Addr: bg.waitOut(t, `status: http://(\S+)/status`)[1]}
	onAir, err := client.Plan()
	if err != nil {
		t.Fatal(err)
	}
	const was = `"rect": [
            0,
            0,
            320,
            180
          ]`
	if !strings.Contains(string(onAir), was) {
		t.Fatalf("the plan on air has no layer %s:\n%s", was, onAir)
	}
	ticks := func() int {
		js, err := client.Status()
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Summary struct {
				Buses []struct{ Ticks int } `json:"buses"`
			} `json:"summary"`
		}
		if err := json.Unmarshal(js, &st); err != nil || len(st.Summary.Buses) != 1 {
			t.Fatalf("status: %v\n%s", err, js)
		}
		return st.Summary.Buses[0].Ticks
	}
	for _, rect := range []string{"[0, 0, 100000000000000, 120]", "[0, 0, 20000000, 180]", "[0, 0, 1073741824, 1073741824]"} {
		posted := strings.Replace(string(onAir), was, `"rect": `+rect, 1)
		_, err := client.Apply([]byte(posted))
		if err == nil || !strings.Contains(err.Error(), "scene.one layer 0: rect "+rect) || !strings.Contains(err.Error(), "rect_reach limit on the 320x180 canvas") {
			t.Errorf("POST /plan with a layer at %s: %v, want a refusal naming the layer and the limit", rect, err)
		}
		n := ticks()
		testwait.Until(t, testwait.Bound, "10 more ticks", func() bool { return ticks() >= n+10 })
	}
	if rc, out, errs := runCLI(t, "cut", "-addr", client.Addr, "bus.pgm", "scene.one"); rc != 0 {
		t.Errorf("a cut after the refusals: rc=%d\n%s%s", rc, out, errs)
	}
	if rc := bg.interrupt(t); rc != 0 {
		t.Fatalf("run: rc=%d\n%s", rc, bg.errs.String())
	}
}
