package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/plan"
)

func TestPlanCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "plan.json")
	cases := []struct {
		name     string
		args     []string
		rc       int
		stdout   []string
		stderr   []string
		noStdout []string
	}{
		{"summary", []string{"plan", "-backend", "cuda", "-summary", "shows/minimal.hcl"}, 0,
			[]string{`Plan for show "minimal"`, "Nodes:", "Event loops:", "Threads:", "Fused hops:", "Estimates against nvidia_l4"}, nil,
			[]string{"Groups in start order"}},
		{"detail", []string{"plan", "shows/minimal.hcl"}, 0, []string{"Groups in start order", "source.bars (start order 0)"}, nil, nil},
		{"cpu backend", []string{"plan", "-backend", "cpu", "shows/minimal.hcl"}, 0, []string{"test_pattern", "Estimates against cpu"}, nil, []string{"mode=pinned", "vram"}},
		// On the GPU a test pattern is cut on the GPU on its pacing loop: no
		// thread drawing it, no upload.
		{"cuda test pattern", []string{"plan", "-backend", "cuda", "shows/minimal.hcl"}, 0,
			[]string{"pacing_0     test_pattern_cuda    nv12      pattern=bars"}, nil, []string{"mode=pinned", "thread       test_pattern", "\n  upload "}},
		{"save", []string{"plan", "-summary", "-out", out, "shows/minimal.hcl"}, 0, []string{"Saved the plan to " + out}, nil, nil},
		{"trace", []string{"plan", "-summary", "-trace", "build", "shows/minimal.hcl"}, 0, nil, []string{"== after build ==", "source.bars/one_to_many (one_to_many"}, nil},
		{"a check fails", []string{"plan", "compiler/testdata/bad/formats.hcl"}, 1, nil,
			[]string{"Formats disagree along an edge [formats]", "compiler/testdata/bad/formats.hcl:11:3: error: Formats disagree"}, []string{"Plan for"}},
		{"show errors", []string{"plan", "compiler/testdata/no-such.hcl"}, 1, nil, []string{"no-such.hcl"}, nil},
		{"bad backend", []string{"plan", "-backend", "metal", "shows/minimal.hcl"}, 2, nil, []string{`there is no backend "metal": the backends are cuda, cpu`}, nil},
		{"bad trace", []string{"plan", "-trace", "nope", "shows/minimal.hcl"}, 2, nil, []string{"the passes are"}, nil},
		{"bad profile", []string{"plan", "-profile", "nvidia_a100", "shows/minimal.hcl"}, 2, nil, []string{"nvidia_h200"}, nil},
		{"no path", []string{"plan"}, 2, nil, []string{"usage: onair plan"}, nil},
		{"help", []string{"plan", "-h"}, 0, nil, []string{"-summary", "-var-file"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc, stdout, stderr := runCLI(t, c.args...)
			if rc != c.rc {
				t.Fatalf("rc=%d, want %d\nstdout:\n%s\nstderr:\n%s", rc, c.rc, stdout, stderr)
			}
			for _, s := range c.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range c.noStdout {
				if strings.Contains(stdout, s) {
					t.Errorf("stdout has %q", s)
				}
			}
			for _, s := range c.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
		})
	}
	// The saved plan loads in this version and belongs to this show.
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := plan.LoadVersion(f, version)
	if err != nil {
		t.Fatal(err)
	}
	if p.Show != "minimal" || p.ToolVersion != version {
		t.Errorf("saved plan: show %q tool %q", p.Show, p.ToolVersion)
	}
}

// The seeds' show: the fused counts `onair plan` opens with.
func TestPlanDemo192Counts(t *testing.T) {
	rc, out, errb := runCLI(t, "plan", "-backend", "cuda", "-summary", "shows/demo-192.hcl")
	if rc != 0 {
		t.Fatalf("rc=%d: %s", rc, errb)
	}
	for _, want := range []string{
		"  one_to_many_nb            192\n",
		"  raw_video_file_cuda        47\n",
		"  nvdec_file                105\n",
		"fuse input routing     105 groups, removed demux ×105",
		"fuse decode loops      105 groups, removed dec_video ×105, input_rec ×105, added nvdec_file ×105",
		"fuse fan-out           192 groups, removed one_to_many ×192, added one_to_many_nb ×192",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan -summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "  demux ") || strings.Contains(out, "  one_to_many  ") {
		t.Errorf("fused kinds still counted:\n%s", out)
	}
}

func TestPlanJSONIsDeterministic(t *testing.T) {
	rc1, a, _ := runCLI(t, "plan", "-json", "shows/studio.hcl")
	rc2, b, _ := runCLI(t, "plan", "-json", "shows/studio.hcl")
	if rc1 != 0 || rc2 != 0 || a != b {
		t.Fatalf("plan -json: rc %d %d, same bytes %v", rc1, rc2, a == b)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(a), &p); err != nil {
		t.Fatal(err)
	}
	if p.FormatVersion != plan.FormatVersion || len(p.Nodes) == 0 {
		t.Fatalf("plan -json: %+v", p.Estimates)
	}
}

func TestPlanVarChangesCanvasOfShow(t *testing.T) {
	// studio.hcl's vt_count variable sets how many raw sources there are.
	rc, out, errb := runCLI(t, "plan", "-backend", "cuda", "-json", "-var", "vt_count=2", "shows/studio.hcl")
	if rc != 0 {
		t.Fatalf("rc=%d: %s", rc, errb)
	}
	if n := strings.Count(out, `"kind": "raw_video_file_cuda"`); n != 2 {
		t.Errorf("-var vt_count=2 gave %d raw readers", n)
	}
}

// onair plan -backend cpu examples/cpu-demo.hcl folds the two clips but
// says that only source.clip[1] feeds bus.mon, and that source.checker
// is drawn at 320x180.
func TestPlanCPUDemoFolds(t *testing.T) {
	rc, out, errb := runCLI(t, "plan", "-backend", "cpu", "examples/cpu-demo.hcl")
	if rc != 0 {
		t.Fatalf("rc %d\n%s", rc, errb)
	}
	for _, want := range []string{
		"320x180 in source.checker",
		"bus.mon/compositor (3) in source.clip[1]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

func TestGraphCommand(t *testing.T) {
	rc, out, errb := runCLI(t, "graph", "shows/minimal.hcl")
	if rc != 0 || !strings.HasPrefix(out, `digraph "minimal"`) || !strings.Contains(out, "subgraph cluster_1") || !strings.Contains(out, `label="nv12 ×3"`) {
		t.Fatalf("graph dot: rc=%d\n%s\n%s", rc, out, errb)
	}
	rc, out, _ = runCLI(t, "graph", "-format", "mermaid", "shows/minimal.hcl")
	if rc != 0 || !strings.HasPrefix(out, "flowchart LR") || !strings.Contains(out, `subgraph loop_pacing_0["loop pacing_0"]`) {
		t.Fatalf("graph mermaid: rc=%d\n%s", rc, out)
	}
	// minimal.hcl runs its one source on pacing_0; the default loop and
	// pacing_1..3 run nothing and draw no cluster.
	for _, format := range []string{"dot", "mermaid"} {
		_, out, _ := runCLI(t, "graph", "-format", format, "shows/minimal.hcl")
		if n := strings.Count(out, "subgraph"); n != 1 {
			t.Errorf("graph -format %s: %d loop clusters, want 1 (pacing_0; the other loops have no nodes):\n%s", format, n, out)
		}
		for _, empty := range []string{"loop default", "loop pacing_1", "loop pacing_3"} {
			if strings.Contains(out, empty) {
				t.Errorf("graph -format %s draws the empty %s", format, empty)
			}
		}
	}
	if rc, _, errb := runCLI(t, "graph", "-format", "svg", "shows/minimal.hcl"); rc != 2 || !strings.Contains(errb, "dot or mermaid") {
		t.Fatalf("graph -format svg: rc=%d %s", rc, errb)
	}
	if rc, _, _ := runCLI(t, "graph", "compiler/testdata/bad/fanout.hcl"); rc != 1 {
		t.Fatalf("graph of a show that cannot compile: rc=%d", rc)
	}
}

func TestNodesCommand(t *testing.T) {
	rc, out, _ := runCLI(t, "nodes")
	if rc != 0 || !strings.Contains(out, "one_to_many_nb") || !strings.Contains(out, "return_queue") {
		t.Fatalf("nodes: rc=%d\n%s", rc, out)
	}
	rc, md, _ := runCLI(t, "nodes", "-markdown")
	if rc != 0 || !strings.HasPrefix(md, "# Node kinds") || !bytes.Contains([]byte(md), []byte("## raw_video_file_cuda")) {
		t.Fatalf("nodes -markdown: rc=%d", rc)
	}
	if rc, _, _ := runCLI(t, "nodes", "extra"); rc != 2 {
		t.Fatalf("nodes extra: rc=%d", rc)
	}
}
