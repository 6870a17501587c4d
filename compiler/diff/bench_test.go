package diff_test

import (
	"testing"

	"github.com/onairhq/onair/compiler/diff"
	"github.com/onairhq/onair/plan"
)

// BenchmarkDiffDemo192 diffs the seeds' 192-source show against a copy in
// which every raw source's path changed (47 replacements, both Program
// buses and several AUX buses glitch): the diff a CI job prints before a
// change goes on air.
func BenchmarkDiffDemo192(b *testing.B) {
	t := &testing.T{}
	old := compile(t, "../../shows/demo-192.hcl")
	nw := compile(t, "../../shows/demo-192.hcl")
	cp := *nw
	cp.Nodes = append([]plan.Node(nil), nw.Nodes...)
	changed := 0
	for i := range cp.Nodes {
		n := &cp.Nodes[i]
		if _, ok := n.Params["mode"]; ok && n.Kind == "raw_video_file_cuda" {
			params := map[string]any{}
			for k, v := range n.Params {
				params[k] = v
			}
			params["path"] = "elsewhere.nv12"
			n.Params = params
			changed++
		}
	}
	r := diff.Diff(old, &cp)
	if r.Summary.Replace != changed || changed != 47 {
		b.Fatalf("replaced %d of %d changed raw sources", r.Summary.Replace, changed)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		diff.Diff(old, &cp)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(old.Nodes)), "ns/node")
	b.ReportMetric(float64(len(old.Nodes)), "nodes")
}
