package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/bench"
	"github.com/onairhq/onair/nodes/browser"
)

// onair bench runs a show, measures a window after a warm-up while it
// switches scenes, and writes what it measured as a table and as JSON.
func TestBenchMeasuresAWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a show for two seconds")
	}
	out := filepath.Join(t.TempDir(), "bench.json")
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	rc, stdout, stderr := runCLI(t, "bench", "-backend", "cpu", "-warmup", "500ms", "-window", "1500ms", "-switch-every", "500ms", "-json", out, "-cpuprofile", prof, "examples/cpu-demo.hcl")
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, stdout, stderr)
	}
	for _, want := range []string{"cpu-demo on cpu: 4 sources, 2 buses", "CPU ", "threads", "run queue", "compositors", "bus frames"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	r := readBenchResult(t, out)
	if r.Sources != 4 || r.Buses != 2 || r.BusFrames == 0 || r.CPUPercent <= 0 || r.Threads == 0 || r.WindowS < 1.4 {
		t.Errorf("implausible result: %+v", r)
	}
	if r.GroupCPU["compositors"] <= 0 {
		t.Errorf("no CPU counted for the compositors: %v", r.GroupCPU)
	}
	// The profile is gzipped protobuf whose string table names onair's
	// functions: the window's CPU was sampled.
	f, err := os.Open(prof)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("-cpuprofile wrote no gzipped profile: %v", err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("github.com/onairhq/onair/")) {
		t.Errorf("the CPU profile (%d bytes) has no sample in onair's code", len(data))
	}
}

// onair bench on the browser measurement's show (nodes/browser/bench),
// two sources fed by pattern producers: the browser counts are in the
// table and the JSON.
func TestBenchCountsBrowserImports(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a show for three seconds")
	}
	dir, err := os.MkdirTemp("", "oair") // short: the sockets' paths must fit
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	show, _ := os.ReadFile("nodes/browser/bench/browser-40.hcl")
	os.WriteFile(filepath.Join(dir, "browser-40.hcl"), show, 0o644)
	os.Mkdir(filepath.Join(dir, "sock"), 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var st [2]browser.PatternStats
	for i := range st {
		go browser.RunPattern(ctx, browser.PatternConfig{Socket: filepath.Join(dir, "sock", fmt.Sprintf("gfx%d.sock", i)), Width: 320, Height: 180, MaxIdle: 2}, &st[i])
	}
	out := filepath.Join(dir, "bench.json")
	rc, stdout, stderr := runCLI(t, "bench", "-backend", "cpu", "-warmup", "1s", "-window", "2s", "-var", "sources=2", "-json", out, filepath.Join(dir, "browser-40.hcl"))
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, stdout, stderr)
	}
	if !strings.Contains(stdout, "browser sources        2: ") {
		t.Errorf("the table lacks the browser sources:\n%s", stdout)
	}
	data, _ := os.ReadFile(out)
	var r bench.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Browser == nil || r.Browser.Sources != 2 || r.Browser.Frames == 0 || r.Browser.Converted == 0 {
		t.Errorf("browser counts %+v", r.Browser)
	}
}

// readBenchResult reads the JSON onair bench -json wrote.
func readBenchResult(t *testing.T, path string) bench.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r bench.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// -compare says what it needs when it is not given two results.
func TestBenchCompareSaysWhatItNeeds(t *testing.T) {
	rc, _, errs := runCLI(t, "bench", "-compare", "one.json")
	if rc != 2 || !strings.Contains(errs, "give two result files, BEFORE.json AFTER.json") {
		t.Errorf("-compare with one file: rc %d, %q", rc, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("not json"), 0o644)
	rc, _, errs = runCLI(t, "bench", "-compare", bad, bad)
	if rc != 1 || !strings.Contains(errs, bad) || !strings.Contains(errs, "written by onair bench -json") {
		t.Errorf("-compare with a broken file: rc %d, %q", rc, errs)
	}
}
