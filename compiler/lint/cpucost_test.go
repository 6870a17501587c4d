package lint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/lint"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes/cpu"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
)

// benchScene is BenchmarkComposite's scene (nodes/cpu): three layers in a
// 2x2 grid and one at half opacity in a contain inset, from sources of
// size src, on a canvas of size canvas.
func benchScene(canvas, src [2]int) string {
	w, h := canvas[0], canvas[1]
	var b strings.Builder
	fmt.Fprintf(&b, "show {\n  name = \"bench\"\n  size = \"%dx%d\"\n  frame_rate = \"30\"\n}\n", w, h)
	for k := 0; k < 4; k++ {
		fmt.Fprintf(&b, "source \"test_pattern\" \"s%d\" {\n  size = \"%dx%d\"\n}\n", k, src[0], src[1])
	}
	b.WriteString("scene \"grid\" {\n")
	for k := 0; k < 3; k++ {
		fmt.Fprintf(&b, "  layer {\n    source = source.s%d\n    rect = [%d, %d, %d, %d]\n  }\n", k, (k%2)*w/2, (k/2)*h/2, w/2, h/2)
	}
	fmt.Fprintf(&b, "  layer {\n    source = source.s3\n    rect = [%d, %d, %d, %d]\n    fit = \"contain\"\n    opacity = 0.5\n  }\n}\n", w/4, h/4, w/2, h/3)
	b.WriteString("bus \"program\" \"pgm\" {\n  scene = scene.grid\n}\noutput \"null\" \"pgm\" {\n  bus = bus.pgm\n}\n")
	return b.String()
}

func loadShow(t *testing.T, src string) (*lang.Show, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "show.hcl")
	os.WriteFile(p, []byte(src), 0o644)
	s, diags := lang.Load([]string{p}, lang.Options{})
	if diags.HasErrors() {
		t.Fatalf("%s:\n%v", src, diags)
	}
	return s, p
}

// TestCPUDrawCostEstimate: the estimate lands near what the CPU
// compositor's benchmarks measured (nodes/cpu/BENCHMARKS.md, cpu-ms a
// frame), and a layer at its own size costs a row copy.
func TestCPUDrawCostEstimate(t *testing.T) {
	for _, tc := range []struct {
		canvas, src [2]int
		measuredMs  float64
	}{
		{[2]int{1920, 1080}, [2]int{1920, 1080}, 14.6}, // 2026-12-02, the shrinks in AVX2
		{[2]int{640, 360}, [2]int{640, 360}, 1.4},
		{[2]int{640, 360}, [2]int{1920, 1080}, 25.0},
	} {
		s, _ := loadShow(t, benchScene(tc.canvas, tc.src))
		est := compiler.EstimateCPUTicks(s)
		if len(est) != 1 {
			t.Fatalf("%d estimates for one bus", len(est))
		}
		got := est[0].CPUNs / 1e6
		t.Logf("%v from %v: estimated %.1f ms, measured %.1f ms", tc.canvas, tc.src, got, tc.measuredMs)
		if got < 0.8*tc.measuredMs || got > 1.25*tc.measuredMs {
			t.Errorf("%v from %v: estimated %.1f ms of CPU a tick; the benchmark measured %.1f", tc.canvas, tc.src, got, tc.measuredMs)
		}
	}
	// One opaque layer the size of a 1080p canvas: a row copy, far within
	// a frame period; the rule stays quiet.
	s, _ := loadShow(t, strings.Replace(minimalShow, "SIZE", "1920x1080", 1))
	if est := compiler.EstimateCPUTicks(s)[0]; est.CPUNs > 10e6 || est.WallNs > est.PeriodNs {
		t.Errorf("a 1080p test pattern at its own size: %.1f ms", est.CPUNs/1e6)
	}
}

const minimalShow = `
show {
  name       = "big"
  size       = "SIZE"
  frame_rate = "30"
}
source "test_pattern" "bars" {}
scene "bars" {
  layer {
    source = source.bars
  }
}
bus "program" "pgm" {
  scene = scene.bars
}
output "null" "pgm" {
  bus = bus.pgm
}
`

// TestCPUDrawCostOnlyForHostBackends: the rule fires for a show compiled
// for a backend drawing in host memory, and not for the GPU's.
func TestCPUDrawCostOnlyForHostBackends(t *testing.T) {
	_, path := loadShow(t, strings.Replace(minimalShow, "SIZE", "16384x16384", 1))
	for _, tc := range []struct {
		name string
		opts compiler.Options
		want bool
	}{
		{"cpu", compiler.Options{Target: &cpu.Lowering, ToolVersion: "test"}, true},
		{"cuda", compiler.Options{Target: &nodecuda.Lowering, ToolVersion: "test"}, false},
	} {
		fs, _ := lint.Show([]string{path}, lang.Options{}, tc.opts)
		fired := false
		for _, f := range fs {
			fired = fired || f.Rule == lint.RuleCPUDrawCost
		}
		if fired != tc.want {
			t.Errorf("compiled for %s: cpu-draw-cost fired %v, want %v", tc.name, fired, tc.want)
		}
	}
}
