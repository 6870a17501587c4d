package compiler

import (
	"bytes"
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
// default preset where the show names none), scaled by pixels per second;
// the total is their sum, shown with the profile's cores; an encoder and
// preset the profile has not measured is said so, not guessed.
func TestPlanEstimatesEachEncodeFromTheProfile(t *testing.T) {
	pr, ok := LookupProfile("cpu_2core")
	if !ok {
		t.Fatal("no profile cpu_2core")
	}
	measured := func(enc, preset string) float64 {
		for _, e := range pr.Encoders {
			if e.Encoder == enc && e.Preset == preset && e.Width == 1920 && e.Height == 1080 && e.FrameRate == 30 {
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
			if math.Abs(e.EncodeCorePercent-sum) > 0.01 || e.HostCores != 2 {
				t.Errorf("total %g %% on %d cores; want %g %% on 2", e.EncodeCorePercent, e.HostCores, sum)
			}
			var text bytes.Buffer
			if err := WriteText(&text, res.Plan, false); err != nil {
				t.Fatal(err)
			}
			for _, line := range []string{"encoding cpu", "3 of 4 output(s) measured; the machine's 2 cores are 200 %", "output.web", "libx264 medium " + c.size + "@30", "output.slow", "not measured",
				"profile cpu_2core has no measured figure for output.slow (libx264 slow)"} {
				if !strings.Contains(text.String(), line) {
					t.Errorf("the plan's text lacks %q:\n%s", line, text.String())
				}
			}
		})
	}
}
