package lang

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// fuzzLimits are the limits the fuzz test runs under: the real table, with
// the budgets and sizes a hundredth of their defaults so that each input
// takes milliseconds and the fuzzer explores instead of expanding mutated
// counts into thousands of instances. Nesting and number sizes keep their
// real values: the parser's stack and number formatting are what they
// protect. The checks are the same code either way; the hostile-input
// suite runs them at their real values.
func fuzzLimits() [numLimits]int64 {
	v := limitValues
	for _, i := range []int{limitStringBytes, limitValueElements, limitInstances, limitShowElements, limitExpansion, limitWork} {
		v[i] = max(v[i]/100, 1)
	}
	return v
}

// FuzzLoad feeds arbitrary bytes through parse, resolve, expand and decode:
// it must never panic, and every error must point into the file.
func FuzzLoad(f *testing.F) {
	var seeds []string
	for _, pat := range []string{"../shows/*.hcl", "../examples/*.hcl", "testdata/bad/*.hcl", "testdata/good/*.hcl", "testdata/good/dir/*.hcl", "testdata/hostile/*.hcl"} {
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
	// The hostile shapes at the nesting limit rather than 70,000 deep: a
	// little under it (parsed and evaluated) and a little over it
	// (refused before parsing), so that mutations explore both sides.
	for _, s := range deepShapes {
		f.Add([]byte(hostileHeader + "locals {\n  x = " + s.make(120) + "\n}\n"))
		f.Add([]byte(hostileHeader + "locals {\n  x = " + s.make(300) + "\n}\n"))
	}
	saved := limitValues
	limitValues = fuzzLimits()
	f.Cleanup(func() { limitValues = saved })
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
