package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCIFilesRunHere runs what the CI integrations run, as their files
// name it, with a built onair: each pre-commit hook's entry on a clean
// show (passes) and a broken one (fails); the action's lint script, as
// action.yml calls it with the environment it sets, writing SARIF and
// reporting lint's exit status in $GITHUB_OUTPUT; and the container's
// default command.
func TestCIFilesRunHere(t *testing.T) {
	bin := onairBinary(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.hcl")
	src, err := os.ReadFile("shows/minimal.hcl")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(good, src, 0o644)
	// Broken twice over: not in the canonical format, and an invalid fit.
	bad := filepath.Join(dir, "bad.hcl")
	fit, err := os.ReadFile("lang/testdata/bad/bad_fit.hcl")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bad, append([]byte("   \n"), []byte(strings.Replace(string(fit), " = ", "   =   ", 1))...), 0o644)
	run := func(name string, env []string, args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return 0, string(out)
	}

	// .pre-commit-hooks.yaml: every entry is an onair command.
	hooks, err := os.ReadFile(".pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	entries := regexp.MustCompile(`(?m)^\s+entry:\s*(.+)$`).FindAllStringSubmatch(string(hooks), -1)
	if len(entries) != 2 {
		t.Fatalf(".pre-commit-hooks.yaml has %d entries, want onair fmt and onair lint", len(entries))
	}
	for _, e := range entries {
		f := strings.Fields(e[1])
		if f[0] != "onair" || commands[f[1]] == nil {
			t.Errorf("hook entry %q names no onair command", e[1])
			continue
		}
		if rc, out := run(bin, nil, append(f[1:], good)...); rc != 0 {
			t.Errorf("hook %q on a clean show: exit %d\n%s", e[1], rc, out)
		}
		if rc, out := run(bin, nil, append(f[1:], bad)...); rc != 1 {
			t.Errorf("hook %q on a broken show: exit %d, want 1\n%s", e[1], rc, out)
		}
	}

	// action.yml: the script it runs, with the variables it sets.
	action, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	script := regexp.MustCompile(`\$GITHUB_ACTION_PATH/(\S+?)"`).FindStringSubmatch(string(action))
	if script == nil {
		t.Fatal("action.yml runs no script of the action's")
	}
	vars := regexp.MustCompile(`(?m)^\s+(ONAIR_LINT_\w+):`).FindAllStringSubmatch(string(action), -1)
	body, err := os.ReadFile(script[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vars {
		if !strings.Contains(string(body), v[1]) {
			t.Errorf("action.yml sets %s, which %s never reads", v[1], script[1])
		}
	}
	if len(vars) < 3 {
		t.Errorf("action.yml sets %d ONAIR_LINT_ variables", len(vars))
	}
	for _, c := range []struct {
		paths string
		rc    string
		n     int // results in the SARIF
	}{{good, "0", 0}, {good + " " + bad, "1", 1}} {
		sarif, out := filepath.Join(dir, "out.sarif"), filepath.Join(dir, "github_output")
		os.Remove(out)
		rc, log := run(script[1], []string{"ONAIR=" + bin, "ONAIR_LINT_PATHS=" + c.paths, "ONAIR_LINT_SARIF=" + sarif, "ONAIR_LINT_BACKEND=cpu", "ONAIR_LINT_STRICT=false", "GITHUB_OUTPUT=" + out})
		got, _ := os.ReadFile(out)
		if rc != 0 || strings.TrimSpace(string(got)) != "exit-code="+c.rc {
			t.Errorf("%s on %s: exit %d, $GITHUB_OUTPUT %q; want 0 and exit-code=%s\n%s", script[1], c.paths, rc, got, c.rc, log)
		}
		var doc struct {
			Version string `json:"version"`
			Runs    []struct {
				Results []json.RawMessage `json:"results"`
			} `json:"runs"`
		}
		raw, _ := os.ReadFile(sarif)
		if err := json.Unmarshal(raw, &doc); err != nil || doc.Version != "2.1.0" || len(doc.Runs) != 1 || len(doc.Runs[0].Results) < c.n || (c.n == 0 && len(doc.Runs[0].Results) != 0) {
			t.Errorf("%s on %s wrote SARIF %.300s (%v); want version 2.1.0 with %d result(s)", script[1], c.paths, raw, err, c.n)
		}
		if !strings.Contains(log, "::error") && c.n > 0 {
			t.Errorf("%s printed no GitHub annotation for the broken show:\n%s", script[1], log)
		}
	}

	// Dockerfile: its entrypoint and default command run here, and the
	// version it stamps is the variable onair prints.
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(df), `ENTRYPOINT ["onair"]`) || !strings.Contains(string(df), "-X github.com/onairhq/onair/internal/cli.version=") {
		t.Error("the Dockerfile's entrypoint is not onair, or it stamps no version")
	}
	cmd := regexp.MustCompile(`(?m)^CMD \["(\w+)"\]`).FindStringSubmatch(string(df))
	if cmd == nil || commands[cmd[1]] == nil {
		t.Fatalf("the Dockerfile's CMD %v is no onair command", cmd)
	}
	if rc, out := run(bin, nil, cmd[1]); rc != 0 || !strings.HasPrefix(out, "onair ") || !strings.Contains(out, "module github.com/onairhq/onair") {
		t.Errorf("onair %s: exit %d\n%s", cmd[1], rc, out)
	}
}
