package runtime

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStatusReadsThreads: a loop's thread is found by its tid and name, and
// a loop kept busy shows CPU time; the process sampler sees the work.
func TestStatusReadsThreads(t *testing.T) {
	leakCheck(t)
	l := newLoop(t, "pacing_7")
	sampler := NewCPUSampler()
	// Spin until the kernel's own per-thread CPU clock shows 30 ms (a wall
	// bound would not do on a shared machine), then check /proc agrees.
	l.Do(func() {
		cpu := func() int64 {
			var ts unix.Timespec
			unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
			return ts.Nano()
		}
		for end, stop := cpu()+int64(30*time.Millisecond), time.Now().Add(10*time.Second); cpu() < end && time.Now().Before(stop); {
		}
	})
	ls := LoopStatusOf(l)
	if ls.Thread.Tid != l.Tid() || ls.Thread.Name != "onair-pacing_7" {
		t.Fatalf("loop thread: tid %d name %q; want tid %d name onair-pacing_7", ls.Thread.Tid, ls.Thread.Name, l.Tid())
	}
	if ls.Thread.RunNs < int64(30*time.Millisecond) {
		t.Fatalf("the loop spun 30 ms of CPU but /proc shows its thread %d ns on a CPU", ls.Thread.RunNs)
	}
	threads, err := ReadThreads()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, th := range threads {
		found = found || th.Tid == l.Tid()
	}
	if !found {
		t.Fatalf("ReadThreads did not list the loop's thread %d among %d", l.Tid(), len(threads))
	}
	ps := sampler.Sample()
	if ps.CPUPercent <= 0 || ps.Threads < 2 || ps.RSSBytes <= 0 {
		t.Fatalf("process status %+v", ps)
	}
	if _, err := ReadThread(1 << 30); err == nil {
		t.Fatal("reading a thread that does not exist succeeded")
	}
	b, err := json.Marshal(ls)
	if err != nil || !strings.Contains(string(b), `"run_queue_ns"`) || !strings.Contains(string(b), `"handler_ns"`) {
		t.Fatalf("loop status JSON: %s %v", b, err)
	}
}

func TestHistogram(t *testing.T) {
	var h Histogram
	for i := int64(1); i <= 1000; i++ {
		h.Record(i * 1000) // 1 µs .. 1 ms
	}
	h.Record(-5)
	s := h.Snapshot()
	tests := []struct {
		name     string
		got      int64
		min, max int64
	}{
		{"p50", s.P50Ns, 500_000, 1_048_575},
		{"p99", s.P99Ns, 990_000, 1_000_000},
		{"max", s.MaxNs, 1_000_000, 1_000_000},
		{"mean", s.MeanNs, 499_000, 501_000},
	}
	for _, tc := range tests {
		if tc.got < tc.min || tc.got > tc.max {
			t.Errorf("%s = %d, want in [%d, %d]", tc.name, tc.got, tc.min, tc.max)
		}
	}
	if s.Count != 1001 {
		t.Errorf("count %d", s.Count)
	}
}

func TestMultiWaitSaysWhichFired(t *testing.T) {
	leakCheck(t)
	sigs := make([]*Signal, 5)
	for i := range sigs {
		sigs[i], _ = NewSignal()
		defer sigs[i].Close()
	}
	mw, err := NewMultiWait(sigs...)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Close()
	tests := []struct {
		name   string
		notify []int
		want   []int
	}{
		{"one", []int{3}, []int{3}},
		{"two, twice each", []int{0, 4, 0, 4}, []int{0, 4}},
		{"none: the deadline", nil, nil},
		{"all", []int{0, 1, 2, 3, 4}, []int{0, 1, 2, 3, 4}},
	}
	for _, tc := range tests {
		for _, i := range tc.notify {
			sigs[i].Notify()
		}
		start := time.Now()
		fired, err := mw.Wait(Now() + int64(30*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		got := map[int]bool{}
		for _, i := range fired {
			got[i] = true
		}
		if len(got) != len(tc.want) || len(fired) != len(tc.want) {
			t.Errorf("%s: fired %v, want %v", tc.name, fired, tc.want)
		}
		for _, i := range tc.want {
			if !got[i] {
				t.Errorf("%s: fired %v, want %v", tc.name, fired, tc.want)
			}
		}
		if tc.want == nil && time.Since(start) < 25*time.Millisecond {
			t.Errorf("%s: returned after %v, before the deadline", tc.name, time.Since(start))
		}
	}
}

// TestImports: the runtime never imports nodes/, lang/ or compiler/; of
// the rest of onair, only plan/ and internal/panics.
func TestImports(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue // tests may compile a show to run it (compiled_test.go); the package may not
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			rest, ours := strings.CutPrefix(path, "github.com/onairhq/onair/")
			if ours && rest != "plan" && rest != "internal/panics" {
				t.Errorf("%s imports %s: the runtime may import only plan and internal/panics from this module", f, path)
			}
		}
	}
}
