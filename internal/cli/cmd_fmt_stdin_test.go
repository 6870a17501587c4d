package cli

import (
	"strings"
	"testing"
)

// withStdin runs the command with in as its standard input.
func withStdin(t *testing.T, in string, args ...string) (int, string, string) {
	t.Helper()
	old := stdin
	stdin = strings.NewReader(in)
	defer func() { stdin = old }()
	return runCLI(t, args...)
}

// TestFmtStdin: `onair fmt -` formats standard input to standard output
// like gofmt; -check and -diff say whether it is formatted; a broken show
// is reported against <standard input>; - and paths do not mix.
func TestFmtStdin(t *testing.T) {
	rc, out, errs := withStdin(t, messy, "fmt", "-")
	if rc != 0 || errs != "" {
		t.Fatalf("fmt -: rc=%d %s", rc, errs)
	}
	rc2, again, _ := withStdin(t, out, "fmt", "-")
	if rc2 != 0 || again != out {
		t.Errorf("formatting the output again changed it:\n%s\nvs\n%s", out, again)
	}
	if out == messy {
		t.Error("fmt - returned the messy input unchanged")
	}
	if rc, out, _ := withStdin(t, messy, "fmt", "-check", "-"); rc != 1 || strings.TrimSpace(out) != "<standard input>" {
		t.Errorf("fmt -check - on messy input: rc=%d %q", rc, out)
	}
	if rc, out, _ := withStdin(t, out, "fmt", "-check", "-"); rc != 0 || out != "" {
		t.Errorf("fmt -check - on formatted input: rc=%d %q", rc, out)
	}
	if rc, out, _ := withStdin(t, messy, "fmt", "-diff", "-"); rc != 0 || !strings.Contains(out, "+++") {
		t.Errorf("fmt -diff -: rc=%d %q", rc, out)
	}
	if rc, _, errs := withStdin(t, "show {\n  name = \n", "fmt", "-"); rc != 1 || !strings.Contains(errs, "<standard input>:") {
		t.Errorf("a broken show on standard input: rc=%d %s", rc, errs)
	}
	if rc, _, errs := withStdin(t, messy, "fmt", "-", "shows/"); rc != 2 || !strings.Contains(errs, "cannot be mixed") {
		t.Errorf("fmt - with a path: rc=%d %s", rc, errs)
	}
}
