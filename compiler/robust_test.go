package compiler

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/plan"
)

// Every show in the repository that loads compiles without a panic, for
// both backends, and whatever plan comes out is valid and loads back.
func TestEveryShowInTheRepositoryCompiles(t *testing.T) {
	var paths []string
	for _, root := range []string{"../shows", "../examples", "../lang/testdata", "testdata", "lint/testdata", "diff/testdata"} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".hcl") {
				paths = append(paths, p)
			}
			return nil
		})
	}
	if len(paths) < 5 {
		t.Fatalf("found only %d shows", len(paths))
	}
	compiled := 0
	for _, p := range paths {
		show, diags := lang.Load([]string{p}, lang.Options{})
		if diags.HasErrors() || show == nil {
			continue
		}
		for _, backend := range []string{"cuda", "cpu"} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s (%s): panic: %v", p, backend, r)
					}
				}()
				res, _ := Compile(show, Options{ToolVersion: "test", Target: targets[backend]})
				if res.Plan == nil {
					return
				}
				compiled++
				if err := res.Plan.Validate(); err != nil {
					t.Errorf("%s (%s): invalid plan: %v", p, backend, err)
				}
				b, err := plan.Marshal(res.Plan)
				if err != nil {
					t.Errorf("%s (%s): %v", p, backend, err)
					return
				}
				if _, err := plan.LoadVersion(strings.NewReader(string(b)), "test"); err != nil {
					t.Errorf("%s (%s): the plan does not load back: %v", p, backend, err)
				}
			}()
		}
	}
	t.Logf("%d shows, %d plans", len(paths), compiled)
}
