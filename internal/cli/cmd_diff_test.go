package cli

import (
	"encoding/json"
	"fmt"
	"github.com/onairhq/onair/internal/backends"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/plan"
)

func TestDiffCommand(t *testing.T) {
	const td = "compiler/diff/testdata/"
	saved := filepath.Join(t.TempDir(), "old.plan.json")
	show, diags := lang.Load([]string{td + "old.hcl"}, lang.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	res, diags := compiler.Compile(show, compiler.Options{ToolVersion: version, Target: backends.All()[0].Lowering})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	f, err := os.Create(saved)
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Save(f, res.Plan); err != nil {
		t.Fatal(err)
	}
	f.Close()
	corrupt := filepath.Join(t.TempDir(), "corrupt.json")
	os.WriteFile(corrupt, []byte(`{"format_version": 1, "nodes": [`), 0o644)
	bare := filepath.Join(t.TempDir(), "bare.json")
	os.WriteFile(bare, []byte(fmt.Sprintf(`{"format_version":%d}`, plan.FormatVersion)), 0o644)
	savedWith := func(name string, edit func(*plan.Plan)) string {
		p := *res.Plan
		p.Nodes = append([]plan.Node(nil), res.Plan.Nodes...)
		edit(&p)
		path := filepath.Join(t.TempDir(), name)
		b, err := plan.Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(path, b, 0o644)
		return path
	}
	otherTool := savedWith("other-tool.json", func(p *plan.Plan) { p.ToolVersion = "0.0.1-elsewhere" })
	unknownKind := savedWith("unknown-kind.json", func(p *plan.Plan) { p.Nodes[0].Kind = "hologram_projector" })

	tests := []struct {
		name string
		args []string
		rc   int
		in   string
	}{
		{"no change", []string{"diff", td + "old.hcl", td + "old.hcl"}, 0, "are the same plan"},
		{"no change, detailed", []string{"diff", "-detailed-exitcode", td + "old.hcl", td + "scene-cut/../old.hcl"}, 0, "No changes"},
		{"changes", []string{"diff", "-backend", "cuda", td + "old.hcl", td + "path-replace/new.hcl"}, 0, "-/+ source.vt: replace, raw_video_file_cuda.path forces replacement"},
		{"changes, detailed", []string{"diff", "-detailed-exitcode", td + "old.hcl", td + "path-replace/new.hcl"}, 2, "! bus.pgm glitches: source.vt (replaced)"},
		{"saved plan against a show", []string{"diff", "-detailed-exitcode", saved, td + "path-replace/new.hcl"}, 2, "Plan: 0 to create, 0 to update in place, 1 to replace, 0 to delete."},
		{"json", []string{"diff", "-json", td + "old.hcl", td + "added-source/new.hcl"}, 0, `"action": "create"`},
		{"corrupt plan", []string{"diff", corrupt, td + "path-replace/new.hcl"}, 1, "corrupt"},
		{"a bare format version", []string{"diff", bare, td + "path-replace/new.hcl"}, 1, "it names no tool_version, so it is corrupt or was not written by onair plan -out"},
		{"a plan of another tool version", []string{"diff", otherTool, td + "path-replace/new.hcl"}, 1, `written by onair "0.0.1-elsewhere", but this is onair "` + version + `"; a plan runs only with the onair that compiled it: compile the show again`},
		{"a plan with an unknown node kind", []string{"diff", td + "path-replace/new.hcl", unknownKind}, 1, `unknown node kind "hologram_projector"`},
		{"a show that does not load", []string{"diff", td + "old.hcl", td + "missing.hcl"}, 1, "does not load"},
		{"one argument", []string{"diff", td + "old.hcl"}, 2, "want two arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, out, errOut := runCmd(tt.args...)
			if rc != tt.rc || !strings.Contains(out+errOut, tt.in) {
				t.Errorf("rc %d (want %d); want %q in:\n%s%s", rc, tt.rc, tt.in, out, errOut)
			}
			if strings.Contains(strings.Join(tt.args, " "), "-json") {
				var v map[string]any
				if err := json.Unmarshal([]byte(out), &v); err != nil {
					t.Errorf("-json output is not JSON: %v", err)
				}
			}
		})
	}
}

// TestDiffSavedCPUPlanAgainstItsShow: a plan saved for the CPU backend
// diffed against its own show compiles the show for the same backend and
// finds no change.
func TestDiffSavedCPUPlanAgainstItsShow(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "cpu.json")
	if rc, _, errs := runCLI(t, "plan", "-backend", "cpu", "-out", saved, "examples/cpu-demo.hcl"); rc != 0 {
		t.Fatal(errs)
	}
	rc, out, errs := runCLI(t, "diff", "-detailed-exitcode", saved, "examples/cpu-demo.hcl")
	if rc != 0 {
		t.Fatalf("rc=%d, want 0 (no change)\n%s%s", rc, out, errs)
	}
	if rc, _, _ := runCLI(t, "diff", "-detailed-exitcode", "-backend", "cuda", saved, "examples/cpu-demo.hcl"); rc != 2 {
		t.Fatalf("against the cuda compile: rc=%d, want 2 (the chains differ)", rc)
	}
}
