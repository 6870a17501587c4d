package cli

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/onairhq/onair/internal/backends"
)

// TestBackendAutoEverywhere: plan, graph, lint and diff take -backend auto
// as run does, and compile for the backend run would pick here.
func TestBackendAutoEverywhere(t *testing.T) {
	be, why := backends.Auto()
	if be == nil {
		t.Skip(why)
	}
	if rc, out, errs := runCLI(t, "plan", "-backend", "auto", "shows/minimal.hcl"); rc != 0 || !strings.Contains(out, "backend "+be.Name+",") {
		t.Errorf("plan -backend auto: rc %d, %.200s %s; want a plan for %s", rc, out, errs, be.Name)
	}
	for _, args := range [][]string{
		{"graph", "-backend", "auto", "shows/minimal.hcl"},
		{"lint", "-backend", "auto", "shows/minimal.hcl"},
		{"diff", "-backend", "auto", "shows/minimal.hcl", "shows/minimal.hcl"},
	} {
		if rc, _, errs := runCLI(t, args...); rc != 0 {
			t.Errorf("%v: rc %d: %s", args, rc, errs)
		}
	}
	if rc, _, errs := runCLI(t, "plan", "-backend", "tpu", "shows/minimal.hcl"); rc != 2 || !strings.Contains(errs, "-backend") {
		t.Errorf("plan -backend tpu: rc %d, %s", rc, errs)
	}
}

// TestCompilingDefaultsToAuto: plan, graph, lint and diff without -backend
// compile for the backend onair run would pick here; on a machine without
// a GPU that is cpu, and the plan is scored against this machine's cores
// and memory (profile cpu), not a GPU's (no VRAM line, no source budget
// of the L4). -backend cuda still gives the GPU's plan.
func TestCompilingDefaultsToAuto(t *testing.T) {
	be, why := backends.Auto()
	if be == nil {
		t.Skip(why)
	}
	const show = "examples/cpu-demo.hcl"
	rc, out, errs := runCLI(t, "plan", "-summary", show)
	if rc != 0 || !strings.Contains(out, "backend "+be.Name+",") {
		t.Fatalf("plan: rc %d, %.300s %s; want a plan for %s", rc, out, errs, be.Name)
	}
	for _, cmd := range []string{"graph", "lint"} {
		rc, def, errs := runCLI(t, cmd, show)
		_, auto, _ := runCLI(t, cmd, "-backend", "auto", show)
		if rc > 1 || def != auto {
			t.Errorf("%s without -backend: rc %d, %s; its output differs from -backend auto's:\n%.400s\nvs\n%.400s", cmd, rc, errs, def, auto)
		}
	}
	if rc, _, errs := runCLI(t, "diff", show, show); rc != 0 {
		t.Errorf("diff without -backend: rc %d: %s", rc, errs)
	}
	if be.Name == "cpu" {
		cores := fmt.Sprintf("%.2f cores  ok", float64(runtime.NumCPU()))
		for _, want := range []string{"backend cpu, profile cpu", "Estimates against cpu:", "cpu  ", cores, "host memory"} {
			if !strings.Contains(out, want) {
				t.Errorf("the cpu plan lacks %q:\n%s", want, out)
			}
		}
		for _, not := range []string{"vram", "nvidia_l4", "sources at", "nvdec"} {
			if strings.Contains(out, not) {
				t.Errorf("the cpu plan speaks of %q, a GPU's figure:\n%s", not, out)
			}
		}
	}
	rc, out, errs = runCLI(t, "plan", "-summary", "-backend", "cuda", show)
	if rc != 0 || !strings.Contains(out, "backend cuda, profile nvidia_l4") || !strings.Contains(out, "vram") || strings.Contains(out, "cores") {
		t.Errorf("plan -backend cuda: rc %d, %s\n%s; want the GPU's plan against nvidia_l4", rc, errs, out)
	}
}
