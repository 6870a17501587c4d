package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// BenchmarkApplyScenes is POST /plan's work on a running CPU show (issue
// 27, item 8) for a plan that adds N scenes to its Program bus: reading
// the plan, the diff, the checks and the change on air (State.ApplyLive),
// as liveApply does it. ns/scene at two N says whether the cost is linear
// in the scenes added (it was quadratic: 100,000 scenes took about 116 s).
// Each iteration applies to a fresh show; starting and stopping it are
// not timed.
func BenchmarkApplyScenes(b *testing.B) {
	target, err := backends.Lookup("cpu")
	if err != nil {
		b.Fatal(err)
	}
	t := &testing.T{}
	dir := b.TempDir()
	compile := func(more string) (*plan.Plan, []byte) {
		var errs strings.Builder
		path := postedFile(t, dir, "half", more)
		p, err := loadPlanOrShow(path, lang.Options{}, compiler.Options{ToolVersion: version, Target: target.Lowering}, &errs)
		if err != nil {
			b.Fatalf("%v\n%s", err, errs.String())
		}
		js, err := plan.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		return p, js
	}
	base, baseJSON := compile("")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, n := range []int{2_000, 20_000} {
		b.Run(fmt.Sprintf("scenes=%d", n), func(b *testing.B) {
			_, body := compile(manyScenes(n))
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				running, err := target.Start(context.Background(), base, baseJSON, show.Options{BaseDir: filepath.Dir(dir)}, log)
				if err != nil {
					b.Fatal(err)
				}
				a := &liveApply{show: running, cur: base}
				b.StartTimer()
				ans, err := a.Apply(body)
				b.StopTimer()
				if err != nil || len(ans.(applied).Applied) != n+1 {
					b.Fatalf("apply of %d scenes: %v", n, err)
				}
				running.Stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/scene")
			b.ReportMetric(float64(len(body)), "plan_bytes")
		})
	}
}
