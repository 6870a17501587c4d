package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/bench"
	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/internal/backends"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes/browser"
)

// The seeds' show (bench/seeds/seeds.hcl) at a small scale on the CPU
// backend, as bench/seeds/run.sh runs it on the GPU: 2 HEVC, 2 raw and 1
// browser source at 360p, 2 AUX buses, fed by a pattern producer, measured
// with onair's best settings and with the seeds' "before" settings while
// both Program buses cut, fade and wipe; then the two results side by side.
// The same file plans on the CUDA backend with both settings at full size.
func TestSeedsShowBenchesOnTheCPU(t *testing.T) {
	const show = "bench/seeds/seeds.hcl" // the tests run in the repository root
	for _, settings := range []string{"best", "before"} {
		rc, out, errs := runCLI(t, "plan", "-backend", "cuda", "-summary", "-var", "settings="+settings, show)
		if rc != 0 || !strings.Contains(out, `"seeds-`+settings+`-192"`) || !strings.Contains(out, "against nvidia_h200") {
			t.Fatalf("plan -backend cuda -var settings=%s: rc %d\n%s%s", settings, rc, out, errs)
		}
	}
	// What the plan's estimates let the seeds' mix grow to on the H200:
	// NVDEC binds first, 105 × 30 frames/s of the profile's rate.
	gpu, err := backends.Lookup("cuda")
	if err != nil {
		t.Fatal(err)
	}
	res, rc := compileShow([]string{show}, lang.Options{}, compiler.Options{ToolVersion: version, Target: gpu.Lowering}, io.Discard)
	if rc != 0 {
		t.Fatal("the seeds' show does not compile for the CUDA backend")
	}
	pr, _ := compiler.LookupProfile("nvidia_h200")
	want := int(192 * pr.NVDECFramesPerSec.Value / (105 * 30)) // the mix's NVDEC share scaled to the engines' rate
	limit := pr.SourceLimitFor("*", 30)[0].MaxSources
	if l := bench.Estimate(res.Plan, 192); l == nil || l.Binding != "nvdec" || l.AllowsSources != want || l.ProfileSources != limit {
		t.Errorf("plan estimate %+v, want nvdec binding at %d sources (profile limit %d)", l, want, limit)
	}
	if testing.Short() {
		t.Skip("-short: runs the show twice for five seconds")
	}
	peer.NeedFFmpeg(t)
	dir := t.TempDir()
	clip, _ := filepath.Abs("nodes/media/es/testdata/hevc8.hevc") // 640x360, 30 fps
	os.Symlink(clip, filepath.Join(dir, "clip0.hevc"))
	for _, raw := range []string{"raw0.nv12", "raw1.nv12"} {
		if rc, _, errs := runCLI(t, "media", "-size", "640x360", "-frames", "30", "-o", filepath.Join(dir, raw)); rc != 0 {
			t.Fatalf("media %s: %s", raw, errs)
		}
	}
	sockets, err := os.MkdirTemp("", "onair-seeds") // short: a socket path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockets)
	ctx, cancel := context.WithCancel(context.Background())
	producer := make(chan error, 1)
	go func() {
		var st browser.PatternStats
		producer <- browser.RunPattern(ctx, browser.PatternConfig{Socket: filepath.Join(sockets, "gfx-0.sock"),
			Width: 640, Height: 360, Period: time.Second / 30, MaxIdle: 2}, &st)
	}()
	defer func() {
		cancel()
		if err := <-producer; err != nil {
			t.Errorf("producer: %v", err)
		}
	}()
	vars := []string{"-var", "n_hevc=2", "-var", "n_raw=2", "-var", "n_browser=1", "-var", "aux=2", "-var", "width=640", "-var", "height=360",
		"-var", "scenes=8", "-var", "media=" + dir, "-var", `hevc_clips=["clip0.hevc"]`, "-var", `raw_clips=["raw0.nv12","raw1.nv12"]`,
		"-var", "socket_dir=" + sockets}
	for _, settings := range []string{"before", "best"} {
		out := filepath.Join(dir, settings+".json")
		args := append([]string{"bench", "-backend", "cpu", "-warmup", "1s", "-window", "3s", "-switch-every", "600ms", "-json", out,
			"-var", "settings=" + settings}, vars...)
		rc, stdout, stderr := runCLI(t, append(args, show)...)
		if rc != 0 {
			t.Fatalf("bench -var settings=%s: rc %d\n%s\n%s", settings, rc, stdout, stderr)
		}
		t.Logf("settings=%s:\n%s", settings, stdout)
		r := readBenchResult(t, out)
		if r.Sources != 5 || r.Buses != 4 || r.BusFrames == 0 || r.Threads == 0 || r.CPUPercent <= 0 {
			t.Errorf("settings=%s: implausible result: %+v", settings, r)
		}
		for _, g := range []string{"sources", "decode", "pacing loops", "compositors"} {
			if _, ok := r.GroupCPU[g]; !ok {
				t.Errorf("settings=%s: no CPU group %q: %v", settings, g, r.GroupCPU)
			}
		}
		// Both Program buses cut, fade and wipe in the window.
		programs := 0
		for _, b := range r.PerBus {
			if b.Kind != "program" {
				continue
			}
			programs++
			for _, k := range []string{"cut", "fade", "wipe"} {
				if b.Switches[k] == 0 {
					t.Errorf("settings=%s: %s made no %s in the window: %v", settings, b.Address, k, b.Switches)
				}
			}
		}
		if r.SwitchErrors != 0 {
			t.Errorf("settings=%s: %d switches refused", settings, r.SwitchErrors)
		}
		// The null outputs run on the loop the plan puts them on: no
		// thread of their own, as the plan counts them.
		if n := r.GroupThreads["outputs"]; n != 0 {
			t.Errorf("settings=%s: the null outputs hold %d threads; the plan gives them none", settings, n)
		}
		if programs != 2 {
			t.Errorf("settings=%s: %d Program buses in the result, want 2", settings, programs)
		}
	}
	rc, table, errs := runCLI(t, "bench", "-compare", filepath.Join(dir, "before.json"), filepath.Join(dir, "best.json"))
	if rc != 0 || !strings.Contains(table, "| | seeds-before-5 | seeds-best-5 | before/after |") || !strings.Contains(table, "CPU ratio before/after") {
		t.Fatalf("bench -compare: rc %d\n%s%s", rc, table, errs)
	}
	t.Logf("compare:\n%s", table)
}
