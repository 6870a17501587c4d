package cli

import (
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
