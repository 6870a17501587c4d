package compiler

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/onairhq/onair/lang"
)

var wantRe = regexp.MustCompile(`# want (\S+) "([^"]+)"`)

// Shows in testdata/bad parse but cannot compile. Each marks the line its
// diagnostic must point at with `# want RULE "SUMMARY"` (RULE "-" for an
// error that is not a check's finding).
func TestShowsThatCannotCompile(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad/*.hcl")
	if len(files) == 0 {
		t.Fatal("no bad shows")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rule, summary, line := wanted(t, path)
			show, diags := lang.Load([]string{path}, lang.Options{})
			if diags.HasErrors() {
				t.Fatalf("the show must parse: %v", diags)
			}
			opts := Options{Target: gpu, ToolVersion: "test"}
			if strings.HasPrefix(filepath.Base(path), "refused") {
				opts.Target = targets["refusing"]
			}
			res, cdiags := Compile(show, opts)
			if !cdiags.HasErrors() {
				t.Fatal("compiled without errors")
			}
			found := false
			for _, d := range cdiags {
				if !strings.HasPrefix(d.Summary, summary) {
					continue
				}
				found = true
				if d.Subject == nil || d.Subject.Filename != path || d.Subject.Start.Line != line {
					t.Errorf("%q points at %v, want %s:%d", d.Summary, d.Subject, path, line)
				}
				if d.Detail == "" {
					t.Errorf("%q has no detail saying what to do", d.Summary)
				}
			}
			if !found {
				t.Fatalf("no diagnostic %q; got %v", summary, cdiags)
			}
			if rule != "-" {
				ok := false
				for _, f := range res.Findings {
					ok = ok || f.Rule.ID == rule && strings.HasPrefix(f.Diag.Summary, summary)
				}
				if !ok {
					t.Errorf("the finding is not attributed to rule %s", rule)
				}
			}
		})
	}
}

func wanted(t *testing.T, path string) (rule, summary string, line int) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if m := wantRe.FindStringSubmatch(sc.Text()); m != nil {
			return m[1], m[2], n
		}
	}
	t.Fatalf("%s has no # want line", path)
	return
}
