package compiler

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const encodeShow = `show {
  name       = "encodes"
  size       = "SIZE"
  frame_rate = "30"
}
source "test_pattern" "bars" {}
scene "one" {
  layer { source = source.bars }
}
bus "program" "pgm" { scene = scene.one }
output "file" "rec" {
  bus  = bus.pgm
  path = "rec.mp4"
}
output "stream" "web" {
  bus = bus.pgm
  url = "srt://127.0.0.1:9000"
  video { preset = "medium" }
}
output "hls" "site" {
  bus = bus.pgm
  dir = "hls"
  video {
    codec  = "hevc"
    preset = "ultrafast"
  }
}
output "file" "slow" {
  bus  = bus.pgm
  path = "slow.mkv"
  video { preset = "slow" }
}
`

// The plan estimates each delivery output's encoding CPU from the
// profile's measured figure for its encoder and preset (the encoder's
// default preset where the show names none), scaled by pixels per second,
// at the show's 4 encodes at once (the profile measured each alone: it
// says so); the total is their sum, shown with the profile's cores and
// onair's own CPU beside; an encoder and preset the profile has not
// measured is said so, not guessed.
func TestPlanEstimatesEachEncodeFromTheProfile(t *testing.T) {
	pr, ok := LookupProfile("cpu_2core")
	if !ok {
		t.Fatal("no profile cpu_2core")
	}
	measured := func(enc, preset string) float64 {
		for _, e := range pr.Encoders {
			if e.Encoder == enc && e.Preset == preset && e.Width == 1920 && e.Height == 1080 && e.FrameRate == 30 && e.Concurrent == 1 {
				return e.CorePercent
			}
		}
		t.Fatalf("profile cpu_2core has no 1080p30 figure for %s %s", enc, preset)
		return 0
	}
	for _, c := range []struct {
		size  string
		scale float64
	}{{"1920x1080", 1}, {"1280x720", 1280 * 720 / (1920.0 * 1080)}} {
		t.Run(c.size, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "show.hcl")
			if err := os.WriteFile(path, []byte(strings.Replace(encodeShow, "SIZE", c.size, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			res := compile(t, load(t, path, nil), Options{Target: targets["cpu"], Profile: "cpu_2core"})
			e := res.Plan.Estimates
			want := map[string]struct {
				enc, preset string
				pct         float64
				measured    bool
			}{
				"output.rec":  {"libx264", "veryfast", c.scale * measured("libx264", "veryfast"), true},
				"output.web":  {"libx264", "medium", c.scale * measured("libx264", "medium"), true},
				"output.site": {"libx265", "ultrafast", c.scale * measured("libx265", "ultrafast"), true},
				"output.slow": {"libx264", "slow", 0, false},
			}
			if len(e.Encodes) != len(want) {
				t.Fatalf("encodes %+v; want the 4 outputs", e.Encodes)
			}
			var sum float64
			for _, got := range e.Encodes {
				w, ok := want[got.Output]
				if !ok || got.Encoder != w.enc || got.Preset != w.preset || got.Measured != w.measured || math.Abs(got.CorePercent-w.pct) > 0.01 {
					t.Errorf("%s: %+v; want %+v", got.Output, got, w)
				}
				sum += w.pct
			}
			if math.Abs(e.EncodeCorePercent-sum) > 0.01 || e.HostCores != 2 || e.ConcurrentEncodes != 4 {
				t.Errorf("total %g %% at %d at once on %d cores; want %g %% at 4 on 2", e.EncodeCorePercent, e.ConcurrentEncodes, e.HostCores, sum)
			}
			if e.ShowCorePercent != round3(100*e.CPUCores) || e.ShowCorePercent <= 0 {
				t.Errorf("onair's own CPU %g %%; want the drawing's %g cores", e.ShowCorePercent, e.CPUCores)
			}
			var text bytes.Buffer
			if err := WriteText(&text, res.Plan, false); err != nil {
				t.Fatal(err)
			}
			basis := fmt.Sprintf("from 1 alone fed flat out (%g %%); 4 at once not measured", measured("libx264", "medium"))
			if c.scale != 1 {
				basis += ", scaled from 1920x1080@30 by pixels per second"
			}
			for _, line := range []string{"encoding cpu", "3 of 4 output(s) measured, 4 at once; the machine's 2 cores are 200 %", "output.web", "libx264 medium " + c.size + "@30", basis, "output.slow", "not measured",
				fmt.Sprintf("show cpu             %.0f %% of one core; with the encodes %.0f %%", e.ShowCorePercent, e.ShowCorePercent+e.EncodeCorePercent),
				"profile cpu_2core has no measured figure for output.slow (libx264 slow)"} {
				if !strings.Contains(text.String(), line) {
					t.Errorf("the plan's text lacks %q:\n%s", line, text.String())
				}
			}
		})
	}
}

// EncodeCost takes, for each concurrency measured, the paced figure over
// one fed flat out and the nearest size; interpolates between
// concurrencies, never beyond them; scales by pixels per second; and says
// which figures it used.
func TestEncodeCostInterpolatesBetweenConcurrencies(t *testing.T) {
	fig := func(n int, paced bool, w, h int, pct float64) EncoderCost {
		return EncoderCost{Encoder: "libx264", Preset: "veryfast", Width: w, Height: h, FrameRate: 30, Concurrent: n, Paced: paced, CorePercent: pct, Source: "test"}
	}
	pr := &Profile{Name: "test", Encoders: []EncoderCost{
		fig(1, false, 1920, 1080, 100),
		fig(1, true, 1920, 1080, 120),
		fig(4, false, 1280, 720, 50),
		fig(4, true, 1920, 1080, 180),
		fig(2, true, 1920, 1080, 150),
		fig(2, true, 1280, 720, 70),
	}}
	const hd = 1280 * 720 / (1920.0 * 1080)
	for _, c := range []struct {
		w, h, n int
		pct     float64
		basis   string
	}{
		{1920, 1080, 1, 120, "from 1 alone paced (120 %)"},
		{1920, 1080, 0, 120, "from 1 alone paced (120 %)"},
		{1920, 1080, 3, 165, "between 2 at once paced (150 %) and 4 at once paced (180 %), at 3"},
		{1920, 1080, 4, 180, "from 4 at once paced (180 %)"},
		{1920, 1080, 8, 180, "from 4 at once paced (180 %); 8 at once not measured"},
		{1280, 720, 2, 70, "from 2 at once paced (70 %)"},
		{1280, 720, 4, 180 * hd, "from 4 at once paced (180 %), scaled from 1920x1080@30 by pixels per second"},
		{1280, 720, 3, 70 + (180*hd-70)/2, "between 2 at once paced (70 %) and 4 at once paced (180 %), at 3, scaled from 1920x1080@30 by pixels per second"},
	} {
		est, ok := pr.EncodeCost("libx264", "veryfast", c.w, c.h, 30, c.n)
		if !ok || math.Abs(est.CorePercent-c.pct) > 1e-9 || est.Basis != c.basis {
			t.Errorf("%dx%d, %d at once: %g %% (%q), ok %v; want %g %% (%q)", c.w, c.h, c.n, est.CorePercent, est.Basis, ok, c.pct, c.basis)
		}
	}
	if _, ok := pr.EncodeCost("libx264", "medium", 1920, 1080, 30, 1); ok {
		t.Error("a preset the profile has not measured has a figure")
	}
	if _, err := ParseProfile([]byte(`{"name": "p", "backend": "cpu", "cores": {"value": 2, "source": "s"}, "memory_bytes": {"value": 1, "source": "s"},
		"encoders": [{"encoder": "libx264", "preset": "veryfast", "width": 1920, "height": 1080, "frame_rate": 30, "core_percent": 100, "source": "s"}]}`)); err == nil || !strings.Contains(err.Error(), "concurrent 0") {
		t.Errorf("a figure without its concurrency: %v", err)
	}
}
