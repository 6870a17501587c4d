package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// onair bench runs a show, measures a window after a warm-up while it
// switches scenes, and writes what it measured as a table and as JSON.
func TestBenchMeasuresAWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a show for two seconds")
	}
	out := filepath.Join(t.TempDir(), "bench.json")
	rc, stdout, stderr := runCLI(t, "bench", "-backend", "cpu", "-warmup", "500ms", "-window", "1500ms", "-switch-every", "500ms", "-json", out, "examples/cpu-demo.hcl")
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, stdout, stderr)
	}
	for _, want := range []string{"cpu-demo on cpu: 4 sources, 2 buses", "CPU ", "threads", "run queue", "compositors", "bus frames"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r BenchResult
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Sources != 4 || r.Buses != 2 || r.BusFrames == 0 || r.CPUPercent <= 0 || r.Threads == 0 || r.WindowS < 1.4 {
		t.Errorf("implausible result: %+v", r)
	}
	if r.GroupCPU["compositors"] <= 0 {
		t.Errorf("no CPU counted for the compositors: %v", r.GroupCPU)
	}
}
