package compiler

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/lang"
)

// settingsShow is two HEVC sources and an H.264 one on a program bus,
// with canvas lines of the test's.
func settingsShow(t *testing.T, canvas string) string {
	t.Helper()
	src := `show {
  name       = "settings"
  size       = "320x180"
  frame_rate = "30"
  profile    = "nvidia_h200"
}
canvas {
` + canvas + `
}
source "hevc_file" "cam" {
  count = 2
  path  = "cam${count.index}.hevc"
}
source "h264_file" "old" {
  path = "old.h264"
}
scene "s" {
  layer {
    source = source.cam[0]
  }
  layer {
    source = source.cam[1]
  }
  layer {
    source = source.old
  }
}
bus "program" "pgm" {
  scene = scene.s
}
output "null" "pgm" {
  bus = bus.pgm
}
`
	path := filepath.Join(t.TempDir(), "settings.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// planText is the plan as `onair plan` prints it.
func planText(t *testing.T, res *Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteText(&b, res.Plan, true); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// canvas nvdec_parser reaches the HEVC nvdec_file nodes as their param
// parser (only when it is not NVIDIA's, the kind's default; never on H.264),
// and the plan's decode-loops fusion says which parser reads them. Where
// the decoders stay dec_video, NVIDIA's parser reads them and the fusion
// says so.
func TestNVDECParserReachesTheDecoders(t *testing.T) {
	cases := []struct {
		name, canvas string
		parser       any // the HEVC nvdec_file nodes' param (nil: absent)
		says         string
	}{
		{"default", ``, nil, "hands them straight to NVDEC (HEVC parsed by NVIDIA's parser)"},
		{"nvidia", `nvdec_parser = "nvidia"`, nil, "hands them straight to NVDEC (HEVC parsed by NVIDIA's parser)"},
		{"onair", `nvdec_parser = "onair"`, "onair", "hands them straight to NVDEC (HEVC parsed by onair's parser)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := compile(t, load(t, settingsShow(t, c.canvas), nil), Options{})
			files := 0
			for _, n := range res.Plan.Nodes {
				if n.Kind != "nvdec_file" {
					continue
				}
				files++
				want := c.parser
				if n.Params["codec"] == "h264" {
					want = nil // H.264 always has NVIDIA's parser
				}
				if got, ok := n.Params["parser"]; got != want || ok != (want != nil) {
					t.Errorf("%s: parser %v, want %v", n.ID, got, want)
				}
			}
			if files != 3 {
				t.Fatalf("%d nvdec_file nodes, want 3", files)
			}
			if text := planText(t, res); !strings.Contains(text, c.says) {
				t.Errorf("the plan does not say %q:\n%s", c.says, text)
			}
		})
	}
	t.Run("dec_video", func(t *testing.T) {
		res := compile(t, load(t, settingsShow(t, `nvdec_parser = "onair"
input_routing = "demux"`), nil), Options{})
		for _, n := range res.Plan.Nodes {
			if _, ok := n.Params["parser"]; ok || n.Kind == "nvdec_file" {
				t.Errorf("%s (%s) carries parser %v: a dec_video always has NVIDIA's", n.ID, n.Kind, n.Params["parser"])
			}
		}
		if want := `NVIDIA's parser reads them (nvdec_parser = "onair" applies to nvdec_file`; !strings.Contains(planText(t, res), want) {
			t.Errorf("the plan does not say %q:\n%s", want, planText(t, res))
		}
	})
}

// A value the canvas does not know is refused as the show loads, at its
// line and column, with the values it may take.
func TestBadCanvasSettingsAreRefusedWhereTheyAre(t *testing.T) {
	cases := []struct {
		line, want string
		col        int
	}{
		{`nvdec_parser = "ffmpeg"`, "one of nvidia, onair", 16},
		{`go_procs = 2000`, "between 0 and 1024", 12},
		{`go_procs = -1`, "between 0 and 1024", 12},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			path := settingsShow(t, c.line)
			_, diags := lang.Load([]string{path}, lang.Options{})
			if !diags.HasErrors() {
				t.Fatal("loaded without errors")
			}
			d := diags[0]
			if d.Severity != hcl.DiagError || d.Subject == nil || d.Subject.Filename != path || d.Subject.Start.Line != 8 || d.Subject.Start.Column != c.col {
				t.Errorf("%v points at %v, want %s:8:%d", d, d.Subject, path, c.col)
			}
			if !strings.Contains(d.Detail, c.want) {
				t.Errorf("detail %q does not say %q", d.Detail, c.want)
			}
		})
	}
}

// canvas go_procs is in the plan's canvas (what the runtime applies) and
// in the plan's Threads part; the thread estimate does not change.
func TestGoProcsInThePlan(t *testing.T) {
	before := compile(t, load(t, settingsShow(t, ``), nil), Options{})
	res := compile(t, load(t, settingsShow(t, `go_procs = 3`), nil), Options{})
	if got := res.Plan.Canvas.Int("go_procs"); got != 3 {
		t.Errorf("the plan's canvas go_procs is %d, want 3", got)
	}
	if res.Plan.Estimates.Threads != before.Plan.Estimates.Threads {
		t.Errorf("go_procs changed the thread estimate: %d, without it %d", res.Plan.Estimates.Threads, before.Plan.Estimates.Threads)
	}
	text := planText(t, res)
	at := strings.Index(text, "\nThreads: ")
	if at < 0 {
		t.Fatalf("no Threads part:\n%s", text)
	}
	threads, _, _ := strings.Cut(text[at+1:], "\n\n")
	if want := "go_procs = 3: Go's scheduler runs the show's goroutines and loops on 3 processors"; !strings.Contains(threads, want) {
		t.Errorf("the Threads part does not say %q:\n%s", want, threads)
	}
	if strings.Contains(planText(t, before), "go_procs") {
		t.Error("a plan without go_procs mentions it")
	}
}
