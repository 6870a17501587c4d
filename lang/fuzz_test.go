package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/internal/value"
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
	// A layer at the edge of rect_reach and one a pixel past it, and a
	// crop at its source's edge and past it.
	geometry := hostileHeader + "source \"test_pattern\" \"a\" {\n  size = \"640x360\"\n}\nscene \"s\" {\n  layer {\n    source = source.a\n    rect   = RECT\n    crop   = CROP\n  }\n}\n"
	for _, rc := range [][2]string{
		{"[-7680, -4320, 17280, 9720]", "[0, 0, 640, 360]"},
		{"[-7681, 0, 1920, 1080]", "[0, 0, 642, 360]"},
		{"[0, 0, 1099511627776, 120]", "[-2, 0, 2, 2]"},
	} {
		f.Add([]byte(strings.NewReplacer("RECT", rc[0], "CROP", rc[1]).Replace(geometry)))
	}
	saved := limitValues
	limitValues = fuzzLimits()
	f.Cleanup(func() { limitValues = saved })
	f.Fuzz(func(t *testing.T, data []byte) {
		show, diags := loadFiles([]sourceFile{{name: "fuzz.hcl", data: data}}, Options{})
		if !diags.HasErrors() && show != nil {
			// A show that loads draws only what the geometry limits allow.
			for _, sc := range show.Scenes {
				for _, l := range sc.Layers {
					if err := value.CheckRect(show.Size, [4]int{l.Rect.X, l.Rect.Y, l.Rect.W, l.Rect.H}); err != nil {
						t.Fatalf("%s loads with %v", sc.Address(), err)
					}
				}
			}
		}
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
