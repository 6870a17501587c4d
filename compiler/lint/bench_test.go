package lint_test

import (
	nodecuda "github.com/onairhq/onair/nodes/cuda"
	"testing"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/compiler/lint"
	"github.com/onairhq/onair/lang"
)

// BenchmarkLintDemo192 runs the lint rules and the ignore pass over the
// compiled seeds' show (192 sources, 256 scenes): what lint adds to a
// compile.
func BenchmarkLintDemo192(b *testing.B) {
	show, diags := lang.Load([]string{"../../shows/demo-192.hcl"}, lang.Options{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	res, cdiags := compiler.Compile(show, compiler.Options{Target: &nodecuda.Lowering, ToolVersion: "bench"})
	if res.Plan == nil {
		b.Fatal(cdiags)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lint.Result(res, cdiags)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(show.Sources)), "ns/source")
}

// BenchmarkLintShowDemo192 is the whole of `onair lint shows/demo-192.hcl`
// without the printing: load, compile, checks, lint rules, ignores.
func BenchmarkLintShowDemo192(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		fs, _ := lint.Show([]string{"../../shows/demo-192.hcl"}, lang.Options{}, compiler.Options{Target: &nodecuda.Lowering, ToolVersion: "bench"})
		if len(fs) == 0 {
			b.Fatal("no findings")
		}
	}
}
