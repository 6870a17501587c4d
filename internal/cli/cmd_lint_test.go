package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	rc := run(args, &out, &errOut)
	return rc, out.String(), errOut.String()
}

func TestLintExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		rc   int
		in   string // expected in stdout+stderr
	}{
		{"repository shows, a directory of shows", []string{"lint", "shows/"}, 0, "0 errors"},
		{"an error finding", []string{"lint", "compiler/lint/testdata/broken/shared-output-path.hcl"}, 1, "error[shared-output-path]"},
		{"warnings only", []string{"lint", "compiler/lint/testdata/broken/browser-return-queue.hcl"}, 0, "warning[browser-return-queue]"},
		{"warnings with -strict", []string{"lint", "-strict", "compiler/lint/testdata/broken/browser-return-queue.hcl"}, 1, "1 warning"},
		{"everything ignored with reasons, -strict", []string{"lint", "-strict", "-format", "github", "compiler/lint/testdata/ignores/with-reason.hcl"}, 0, ""},
		{"a show that does not load", []string{"lint", "compiler/lint/testdata/no-such-show.hcl"}, 1, "error[show-load]"},
		// Issue 27: a layer 2^40 wide passed lint, and the next cut ran out of memory.
		{"a rect past rect_reach", []string{"lint", "-backend", "cpu", "lang/testdata/hostile/huge_rect.hcl"}, 1, "huge_rect.hcl:12:14: error[show-load]: Rect out of bounds"},
		{"a layer off the canvas", []string{"lint", "compiler/lint/testdata/broken/layer-off-canvas.hcl"}, 0, "warning[layer-off-canvas]"},
		{"several shows at once", []string{"lint", "-format", "json", "shows/minimal.hcl", "compiler/lint/testdata/broken/hygiene.hcl"}, 0, `"unused-scene"`},
		{"unknown format", []string{"lint", "-format", "xml", "shows/"}, 2, "unknown -format"},
		{"no path", []string{"lint"}, 2, "usage: onair lint"},
		{"-h", []string{"lint", "-h"}, 0, "usage: onair lint"},
		{"explain one rule", []string{"lint", "-explain", "single-pacing-loop"}, 0, "(N/4)²"},
		{"explain a check", []string{"lint", "-explain", "queue-sizing"}, 0, "cannot be ignored"},
		{"explain lists rules", []string{"lint", "-explain"}, 0, "shared-output-path"},
		{"explain show-load", []string{"lint", "-explain", "show-load"}, 0, "its warnings can be ignored"},
		{"explain compile", []string{"lint", "-explain", "compile"}, 0, "cannot be ignored"},
		{"explain an ignore rule", []string{"lint", "-explain", "ignore-unknown-rule"}, 0, "names a rule that does not exist"},
		{"missing media ignored with a reason, -strict", []string{"lint", "-strict", "-backend", "cuda", "compiler/lint/testdata/demo-192-ignored.hcl"}, 0, "0 errors, 0 warnings, 4 ignored"},
		{"the same show without the ignores, -strict", []string{"lint", "-strict", "-backend", "cuda", "shows/demo-192.hcl"}, 1, "warning[show-load]: Media files not found"},
		{"explain a typo", []string{"lint", "-explain", "unused-sorce"}, 2, `did you mean "unused-source"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, out, errOut := runCmd(tt.args...)
			if rc != tt.rc || !strings.Contains(out+errOut, tt.in) {
				t.Errorf("rc %d (want %d); want %q in:\n%s%s", rc, tt.rc, tt.in, out, errOut)
			}
		})
	}
}

func TestLintSARIFOnStdout(t *testing.T) {
	rc, out, _ := runCmd("lint", "-format", "sarif", "compiler/lint/testdata/broken/hygiene.hcl")
	if rc != 0 {
		t.Fatalf("rc %d", rc)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatalf("stdout is not SARIF JSON: %v\n%s", err, out)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) < 3 {
		t.Errorf("unexpected log: %+v", log)
	}
}

// A directory whose files make one show is linted as one show.
func TestLintDirectoryShow(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a-show.hcl", "show {\n  name = \"split\"\n  size = \"640x360\"\n  frame_rate = \"25\"\n}\n")
	write("b-sources.hcl", "source \"test_pattern\" \"bars\" {}\nsource \"test_pattern\" \"spare\" {}\n")
	write("c-buses.hcl", "scene \"s\" {\n  layer {\n    source = source.bars\n  }\n}\nbus \"program\" \"p\" {\n  scene = scene.s\n}\noutput \"null\" \"p\" {\n  bus = bus.p\n}\n")
	rc, _, errOut := runCmd("lint", dir)
	if rc != 0 || !strings.Contains(errOut, "b-sources.hcl:2:1: warning[unused-source]: source.spare is never shown") {
		t.Errorf("rc %d:\n%s", rc, errOut)
	}
}

// Every rule id `onair lint -explain` lists can be explained on its own.
func TestLintExplainEveryListedRule(t *testing.T) {
	rc, out, _ := runCmd("lint", "-explain")
	if rc != 0 {
		t.Fatalf("rc %d", rc)
	}
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "  ") {
			continue
		}
		id := strings.Fields(l)[0]
		n++
		if rc, out, errOut := runCmd("lint", "-explain", id); rc != 0 || !strings.HasPrefix(out, id+" (") {
			t.Errorf("-explain %s: rc %d\n%s%s", id, rc, out, errOut)
		}
	}
	if n < 20 {
		t.Errorf("only %d rules listed:\n%s", n, out)
	}
}
