package lang

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// FuzzLoad feeds arbitrary bytes through parse, resolve, expand and decode:
// it must never panic, and every error must point into the file.
func FuzzLoad(f *testing.F) {
	var seeds []string
	for _, pat := range []string{"../shows/*.hcl", "../examples/*.hcl", "testdata/bad/*.hcl", "testdata/good/*.hcl", "testdata/good/dir/*.hcl"} {
		m, _ := filepath.Glob(pat)
		seeds = append(seeds, m...)
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Small limits keep every input fast, so the fuzzer explores instead of
	// expanding mutated counts into thousands of instances; the limits
	// themselves are tested with their real values in the bad-show table.
	limitValues[limitInstances], limitValues[limitShowElements] = 50, 500
	f.Fuzz(func(t *testing.T, data []byte) {
		_, diags := loadFiles([]sourceFile{{name: "fuzz.hcl", data: data}}, Options{})
		for _, d := range diags {
			if d.Severity != hcl.DiagError {
				continue
			}
			if d.Subject == nil || d.Subject.Filename != "fuzz.hcl" {
				t.Fatalf("error without a range in the file: %s: %s", d.Summary, d.Detail)
			}
		}
	})
}
