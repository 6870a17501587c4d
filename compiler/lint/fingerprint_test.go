package lint_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/compiler/lint"
)

// fingerprints renders SARIF for path and returns each result's rule and
// partial fingerprint.
func fingerprints(t *testing.T, path string) map[string]string {
	t.Helper()
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID              string            `json:"ruleId"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(render(t, report(t, path), "sarif"), &log); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range log.Runs[0].Results {
		fp := r.PartialFingerprints[lint.FingerprintKey]
		if fp == "" {
			t.Fatalf("result %s has no %s fingerprint", r.RuleID, lint.FingerprintKey)
		}
		if _, dup := out[fp]; dup {
			t.Errorf("two results share the fingerprint %s", fp)
		}
		out[fp] = r.RuleID
	}
	return out
}

// TestFingerprintsSurviveMovedLines: SARIF results keep their partial
// fingerprints when the show gains lines above them and is reindented
// (code scanning then tracks the same findings), and change when what
// they point at changes.
func TestFingerprintsSurviveMovedLines(t *testing.T) {
	orig, err := os.ReadFile("testdata/broken/hygiene.hcl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	os.WriteFile(path, orig, 0o644)
	before := fingerprints(t, path)
	if len(before) == 0 {
		t.Fatal("hygiene.hcl gives no findings")
	}
	moved := "# a comment\n\n# and another, moving every line down\n\n" + strings.ReplaceAll(string(orig), "\n  ", "\n    ")
	os.WriteFile(path, []byte(moved), 0o644)
	after := fingerprints(t, path)
	for fp, rule := range before {
		if after[fp] != rule {
			t.Errorf("the %s finding's fingerprint %s changed when lines moved (after: %v)", rule, fp, after)
		}
	}
	other := filepath.Join(t.TempDir(), "show.hcl")
	os.WriteFile(other, orig, 0o644)
	for fp := range fingerprints(t, other) {
		if _, ok := before[fp]; ok && dir != filepath.Dir(other) {
			// the same file name in another directory is another file
			t.Errorf("fingerprint %s is the same for a finding in another file", fp)
		}
	}
}
