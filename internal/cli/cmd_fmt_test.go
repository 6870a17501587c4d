package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const messy = `show {
name = "x"
  size="640x360"
     frame_rate   = "30"
}
source "test_pattern"   "bars" {
pattern="bars"
}
`

const tidy = `show {
  name       = "x"
  size       = "640x360"
  frame_rate = "30"
}
source "test_pattern" "bars" {
  pattern = "bars"
}
`

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	rc := run(args, &out, &errb)
	return rc, out.String(), errb.String()
}

func TestFmtCheckListsAndLeavesFilesAlone(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "show.hcl")
	os.WriteFile(p, []byte(messy), 0o600)
	rc, out, _ := runCLI(t, "fmt", "-check", dir)
	if rc != 1 || strings.TrimSpace(out) != p {
		t.Fatalf("fmt -check: rc=%d out=%q, want rc=1 and the file listed", rc, out)
	}
	if b, _ := os.ReadFile(p); string(b) != messy {
		t.Fatal("fmt -check changed the file")
	}
}

func TestFmtWritesCanonicalFormAndIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "show.hcl")
	os.WriteFile(p, []byte(messy), 0o640)
	if rc, _, errs := runCLI(t, "fmt", p); rc != 0 {
		t.Fatalf("fmt: rc=%d %s", rc, errs)
	}
	b, _ := os.ReadFile(p)
	if string(b) != tidy {
		t.Fatalf("fmt wrote:\n%s\nwant:\n%s", b, tidy)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("fmt changed the file mode to %v", st.Mode().Perm())
	}
	if rc, out, _ := runCLI(t, "fmt", "-check", p); rc != 0 || out != "" {
		t.Fatalf("second fmt -check: rc=%d out=%q, want a clean file", rc, out)
	}
}

func TestFmtDiffAndWriteFalse(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "show.hcl")
	os.WriteFile(p, []byte(messy), 0o600)
	rc, out, _ := runCLI(t, "fmt", "-diff", "-write=false", p)
	if rc != 0 {
		t.Fatalf("rc=%d", rc)
	}
	for _, want := range []string{"--- " + p, "-name = \"x\"", "+  name       = \"x\"", "@@ -1,"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != messy {
		t.Fatal("-write=false changed the file")
	}
}

func TestFmtSyntaxErrorPointsAtTheLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.hcl")
	os.WriteFile(p, []byte("show {\n  name = \"x\"\n  size = \n}\n"), 0o600)
	rc, _, errs := runCLI(t, "fmt", p)
	if rc != 1 {
		t.Fatalf("rc=%d, want 1", rc)
	}
	if !strings.Contains(errs, p+":3:") || !strings.Contains(errs, "^") {
		t.Errorf("error does not name %s line 3:\n%s", p, errs)
	}
}

func TestFmtShippedShowsAreClean(t *testing.T) {
	rc, out, errs := runCLI(t, "fmt", "-check", "shows", "examples")
	if rc != 0 {
		t.Fatalf("shipped shows are not fmt-clean (rc=%d):\n%s%s", rc, out, errs)
	}
}

func TestUnknownCommandSuggests(t *testing.T) {
	rc, _, errs := runCLI(t, "fnt")
	if rc != 2 || !strings.Contains(errs, `did you mean "fmt"`) {
		t.Fatalf("rc=%d stderr=%q", rc, errs)
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	for name := range commands {
		rc, _, errs := runCLI(t, name, "-h")
		if rc != 0 || !strings.Contains(errs, "usage: onair "+name) {
			t.Errorf("onair %s -h: rc=%d stderr=%q", name, rc, errs)
		}
	}
}

func TestFlagsAfterPathsAreNamed(t *testing.T) {
	for _, args := range [][]string{
		{"plan", "shows/minimal.hcl", "-backend", "cpu"},
		{"validate", "shows/minimal.hcl", "-json"},
		{"run", "shows/minimal.hcl", "-duration=1s"},
	} {
		rc, _, errs := runCLI(t, args...)
		if rc != 2 || !strings.Contains(errs, "comes after the paths; put flags first") {
			t.Errorf("onair %s: rc=%d %s", strings.Join(args, " "), rc, errs)
		}
	}
}
