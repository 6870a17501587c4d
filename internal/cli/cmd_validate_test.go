package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateExitCodes(t *testing.T) {
	dir := t.TempDir()
	varFile := filepath.Join(dir, "v.hcl")
	os.WriteFile(varFile, []byte("cams = 2\n"), 0o644)
	cases := []struct {
		name   string
		args   []string
		rc     int
		stdout string
		stderr string
	}{
		{"valid", []string{"validate", "lang/testdata/good/dir"}, 0, "The show is valid.", ""},
		{"warnings only", []string{"validate", "examples/cpu-demo.hcl"}, 0, "The show is valid, with 1 warning (above).", "warning: Media files not found"},
		{"errors", []string{"validate", "lang/testdata/bad/multi_errors.hcl"}, 1, "", "lang/testdata/bad/multi_errors.hcl:10:25: error: Invalid value"},
		{"var flags", []string{"validate", "-var", "cams=1", "-var-file", varFile, "lang/testdata/good/features.hcl"}, 0, "valid", ""},
		{"bad var value", []string{"validate", "-var", "cams=0", "lang/testdata/good/features.hcl"}, 1, "", "Need at least one camera."},
		{"undeclared var", []string{"validate", "-var", "camz=1", "lang/testdata/good/features.hcl"}, 1, "", `Did you mean "cams"?`},
		{"malformed -var", []string{"validate", "-var", "cams", "lang/testdata/good/features.hcl"}, 2, "", "NAME=VALUE"},
		{"no path", []string{"validate"}, 2, "", "usage: onair validate"},
		{"help", []string{"validate", "-h"}, 0, "", "-var-file"},
		{"missing file", []string{"validate", "nope.hcl"}, 1, "", "Cannot read show file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc, out, errs := runCLI(t, c.args...)
			if rc != c.rc || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.stderr) {
				t.Errorf("rc %d, stdout %q, stderr %q; want %d, %q, %q", rc, out, errs, c.rc, c.stdout, c.stderr)
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	rc, out, _ := runCLI(t, "validate", "-json", "lang/testdata/bad/multi_errors.hcl")
	var doc struct {
		Valid        bool `json:"valid"`
		ErrorCount   int  `json:"error_count"`
		WarningCount int  `json:"warning_count"`
		Diagnostics  []struct {
			Severity string `json:"severity"`
			Summary  string `json:"summary"`
			Range    struct {
				Filename string `json:"filename"`
				Start    struct {
					Line, Column int
				} `json:"start"`
			} `json:"range"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rc != 1 || doc.Valid || doc.ErrorCount != 3 || len(doc.Diagnostics) != 3 || doc.Diagnostics[2].Range.Start.Line != 10 || doc.Diagnostics[2].Severity != "error" {
		t.Errorf("rc %d, report %s", rc, out)
	}
	rc, out, _ = runCLI(t, "validate", "-json", "examples/cpu-demo.hcl")
	if err := json.Unmarshal([]byte(out), &doc); err != nil || rc != 0 || !doc.Valid || doc.ErrorCount != 0 {
		t.Errorf("rc %d, report %s", rc, out)
	}
}

func TestValidateShippedShows(t *testing.T) {
	if rc, out, errs := runCLI(t, "validate", "shows/"); rc != 0 || !strings.Contains(out, "shows are valid") {
		t.Errorf("onair validate shows/ = %d:\n%s", rc, errs)
	}
}

func TestDocs(t *testing.T) {
	rc, out, _ := runCLI(t, "docs", "-markdown")
	want, err := os.ReadFile("docs/REFERENCE.md")
	if rc != 0 || err != nil || out != string(want) {
		t.Errorf("onair docs -markdown differs from docs/REFERENCE.md (rc %d, %v); run make docs", rc, err)
	}
	rc, out, _ = runCLI(t, "docs")
	if rc != 0 || !strings.Contains(out, "browser_frame_queue") || strings.Contains(out, "|---|") {
		t.Errorf("onair docs text: rc %d", rc)
	}
	if rc, _, _ := runCLI(t, "docs", "extra"); rc != 2 {
		t.Errorf("onair docs extra = %d, want 2", rc)
	}
}
