package compiler

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
)

// Kinds the compiler has never heard of, declared only by their traits.
func init() {
	nodes.Register(&nodes.Kind{
		Name: "test_splitter", Doc: "A routing kind a test registers.",
		Params:    []nodes.Param{{Name: "offers", Type: nodes.Int, Default: 1}},
		Traits:    nodes.Traits{Blocking: true, Roles: nodes.Routing, Domain: nodes.Host, Takes: []string{nodes.FormatPackets}, Emits: []string{nodes.FormatPackets}, MaxOutputs: 8},
		Readiness: "every offered stream has carried a packet",
	})
	nodes.Register(&nodes.Kind{
		Name: "test_spray", Doc: "A fan-out kind a test registers, two consumers at most.",
		Traits:    nodes.Traits{Roles: nodes.FanOut, Takes: []string{nodes.FormatNV12, nodes.FormatP010}, Emits: []string{nodes.FormatNV12, nodes.FormatP010}, MaxOutputs: 2},
		Readiness: "every edge leaving it has carried a frame",
	})
	nodes.Register(&nodes.Kind{
		Name: "test_mute", Doc: "A sink with no readiness condition.",
		Traits: nodes.Traits{Roles: nodes.Sink, Takes: []string{nodes.FormatNV12}},
	})
}

// handGraph builds a graph from (id, kind, group, format) rows and edges.
type row struct{ id, kind, group, format string }

func handGraph(t *testing.T, rows []row, edges [][2]string) *Result {
	t.Helper()
	g := NewGraph()
	sources := map[string]*lang.Source{}
	for _, r := range rows {
		k, ok := nodes.Lookup(r.kind)
		if !ok {
			t.Fatalf("no kind %s", r.kind)
		}
		n := &Node{ID: r.id, Kind: r.kind, Decl: k, Address: r.group, Group: r.group, Format: r.format,
			Params: map[string]any{}, Range: hcl.Range{Filename: "hand.hcl", Start: hcl.Pos{Line: 1, Column: 1}}}
		if strings.HasPrefix(r.group, "source.") {
			if sources[r.group] == nil {
				sources[r.group] = &lang.Source{Kind: "hevc_file", Name: strings.TrimPrefix(r.group, "source.")}
			}
			n.Source = sources[r.group]
		}
		g.AddNode(n)
	}
	for _, e := range edges {
		g.AddEdge(&Edge{From: e[0], To: e[1], Capacity: 3, Policy: "block", Format: g.Node(e[0]).Format})
	}
	show := &lang.Show{Name: "hand", Size: lang.Size{W: 1280, H: 720}, FrameRate: lang.Rational{Num: 30, Den: 1}, Format: lang.NV12}
	return &Result{Show: show, Graph: g}
}

func findingsOf(fs []Finding) map[string][]string {
	out := map[string][]string{}
	for _, f := range fs {
		out[f.Rule.ID] = append(out[f.Rule.ID], f.Diag.Summary+": "+f.Diag.Detail)
	}
	return out
}

// The rules read traits: a routing kind and a fan-out kind registered
// today are checked exactly as demux and one_to_many are.
func TestRulesReadTraitsNotNames(t *testing.T) {
	cases := []struct {
		name  string
		rows  []row
		edges [][2]string
		rule  string
		want  string // "" = no finding of that rule
	}{
		{
			name:  "a new routing kind whose stream has no consumer",
			rows:  []row{{"s/in", "input_rec", "s", "packets"}, {"s/split", "test_splitter", "s", "packets"}},
			edges: [][2]string{{"s/in", "s/split"}},
			rule:  "input-routing", want: "offers 1 stream(s) but 0 consumer(s)",
		},
		{
			name:  "a new routing kind with its one consumer",
			rows:  []row{{"s/in", "input_rec", "s", "packets"}, {"s/split", "test_splitter", "s", "packets"}, {"s/dec", "dec_video", "s", "nv12"}},
			edges: [][2]string{{"s/in", "s/split"}, {"s/split", "s/dec"}},
			rule:  "input-routing", want: "",
		},
		{
			name: "a new fan-out kind wider than it allows",
			rows: []row{{"s/pat", "test_pattern", "s", "nv12"}, {"s/fan", "test_spray", "s", "nv12"},
				{"a/c", "compositor", "a", "nv12"}, {"b/c", "compositor", "b", "nv12"}, {"c/c", "compositor", "c", "nv12"}},
			edges: [][2]string{{"s/pat", "s/fan"}, {"s/fan", "a/c"}, {"s/fan", "b/c"}, {"s/fan", "c/c"}},
			rule:  "input-routing", want: "feeds 3 consumers; the kind allows 2",
		},
		{
			name: "a new fan-out kind within its width",
			rows: []row{{"s/pat", "test_pattern", "s", "nv12"}, {"s/fan", "test_spray", "s", "nv12"},
				{"a/c", "compositor", "a", "nv12"}, {"b/c", "compositor", "b", "nv12"}},
			edges: [][2]string{{"s/pat", "s/fan"}, {"s/fan", "a/c"}, {"s/fan", "b/c"}},
			rule:  "input-routing", want: "",
		},
		{
			name: "a pacer that broadcasts",
			rows: []row{{"s/pat", "test_pattern", "s", "nv12"}, {"s/rt", "realtime", "s", "nv12"},
				{"a/c", "compositor", "a", "nv12"}, {"b/c", "compositor", "b", "nv12"}},
			edges: [][2]string{{"s/pat", "s/rt"}, {"s/rt", "a/c"}, {"s/rt", "b/c"}},
			rule:  "input-routing", want: "is not a fan-out",
		},
		{
			name:  "a kind without a readiness condition",
			rows:  []row{{"s/pat", "test_pattern", "s", "nv12"}, {"o/m", "test_mute", "o", ""}},
			edges: [][2]string{{"s/pat", "o/m"}},
			rule:  "readiness", want: "states no readiness condition",
		},
		{
			name:  "a new fan-out kind carrying 10-bit frames into an 8-bit compositor",
			rows:  []row{{"s/pat", "test_pattern", "s", "p010"}, {"s/fan", "test_spray", "s", "p010"}, {"a/c", "compositor", "a", "nv12"}},
			edges: [][2]string{{"s/pat", "s/fan"}, {"s/fan", "a/c"}},
			rule:  "formats", want: "emits p010 (10-bit) but a works in nv12 (8-bit)",
		},
		{
			name: "a source decoded twice",
			rows: []row{{"source.cam/in", "input_rec", "source.cam", "packets"}, {"source.cam/split", "test_splitter", "source.cam", "packets"},
				{"source.cam/dec", "dec_video", "source.cam", "nv12"}, {"source.cam/dec2", "dec_video", "source.cam", "nv12"}},
			edges: [][2]string{{"source.cam/in", "source.cam/split"}, {"source.cam/split", "source.cam/dec"}, {"source.cam/split", "source.cam/dec2"}},
			rule:  "input-routing", want: "source.cam has 1 reading and 2 decoding nodes",
		},
		{
			name:  "a source reaching a compositor past its fan-out",
			rows:  []row{{"source.cam/pat", "test_pattern", "source.cam", "nv12"}, {"source.cam/rt", "realtime", "source.cam", "nv12"}, {"bus.a/c", "compositor", "bus.a", "nv12"}},
			edges: [][2]string{{"source.cam/pat", "source.cam/rt"}, {"source.cam/rt", "bus.a/c"}},
			rule:  "input-routing", want: "feeds bus.a directly from source.cam/rt",
		},
		{
			name: "a source without colour tags",
			rows: []row{{"source.cam/pat", "test_pattern", "source.cam", "nv12"}},
			rule: "formats", want: "emits frames without colour tags",
		},
		{
			name: "groups in a cycle",
			rows: []row{{"s/pat", "test_pattern", "s", "nv12"}, {"s/fan", "test_spray", "s", "nv12"},
				{"a/c", "compositor", "a", "nv12"}, {"b/c", "compositor", "b", "nv12"}},
			edges: [][2]string{{"s/pat", "s/fan"}, {"s/fan", "a/c"}, {"a/c", "b/c"}, {"b/c", "s/fan"}},
			rule:  "group-order", want: "The groups s → a → b → s feed each other",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := handGraph(t, c.rows, c.edges)
			got := findingsOf(res.Run(Checks()...))[c.rule]
			if c.want == "" {
				if len(got) > 0 {
					t.Fatalf("unexpected %s findings: %v", c.rule, got)
				}
				return
			}
			for _, g := range got {
				if strings.Contains(g, c.want) {
					return
				}
			}
			t.Fatalf("%s: want a finding containing %q, got %v", c.rule, c.want, got)
		})
	}
}

func TestChecksHaveStableIDsAndDocs(t *testing.T) {
	want := []string{"group-order", "input-routing", "readiness", "formats", "nvdec-caps", "queue-sizing", "capacity"}
	got := Checks()
	if len(got) != len(want) {
		t.Fatalf("%d checks, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.ID != want[i] {
			t.Errorf("check %d is %s, want %s", i, r.ID, want[i])
		}
		if r.Summary() == "" || !strings.Contains(r.Doc, "\n\n") {
			t.Errorf("%s: doc needs a title paragraph and an explanation", r.ID)
		}
		if r.Severity != hcl.DiagError {
			t.Errorf("%s: checks are errors", r.ID)
		}
		if l, ok := LookupRule(r.ID); !ok || l != r {
			t.Errorf("LookupRule(%s) failed", r.ID)
		}
	}
}

func TestQueueNeeded(t *testing.T) {
	for _, c := range []struct {
		poll int
		fps  float64
		want int
	}{{8, 60, 3}, {8, 30, 3}, {0, 60, 2}, {33, 30, 3}, {17, 60, 4}, {100, 60, 8}} {
		if got := QueueNeeded(c.poll, c.fps); got != c.want {
			t.Errorf("QueueNeeded(%d ms, %g fps) = %d, want %d", c.poll, c.fps, got, c.want)
		}
	}
}

func TestProfiles(t *testing.T) {
	for _, name := range []string{"nvidia_l4", "nvidia_t4", "nvidia_h200"} {
		p, ok := LookupProfile(name)
		if !ok {
			t.Fatalf("no profile %s", name)
		}
		if p.NVDECEngines.Value <= 0 || p.VRAMBytes.Value <= 0 || len(p.SourceLimits) == 0 {
			t.Errorf("%s: incomplete: %+v", name, p)
		}
	}
	l4, _ := LookupProfile("nvidia_l4")
	for _, c := range []struct {
		mode string
		fps  float64
		max  int
	}{{"direct", 25, 192}, {"direct", 30, 192}, {"direct", 29.97, 192}, {"direct", 60, 99}, {"direct", 50, 99}} {
		lims := l4.SourceLimitFor(c.mode, c.fps)
		if len(lims) == 0 || lims[0].MaxSources != c.max {
			t.Errorf("L4 at %g fps: %+v, want %d sources", c.fps, lims, c.max)
		}
	}
	if lims := l4.SourceLimitFor("hwupload", 60); len(lims) != 2 || lims[1].MaxRawSources != 16 {
		t.Errorf("L4 hwupload at 60 fps: %+v, want the raw-source limit", lims)
	}
	if lims := l4.SourceLimitFor("hwupload", 30); len(lims) != 1 {
		t.Errorf("the 60 fps hwupload limit must not apply at 30 fps: %+v", lims)
	}
	h200, _ := LookupProfile("nvidia_h200")
	if h200.NVDECEngines.Value != 7 || h200.NVENC.Value != 0 || h200.PCIeGeneration.Value != 5 {
		t.Errorf("H200 figures disagree with GPU.md: %+v", h200)
	}
	if _, err := ParseProfile([]byte(`{"name":"x","nvdec_engines":{"value":1}}`)); err == nil {
		t.Error("a figure without a source note was accepted")
	}
}

// Only compositors scale: a pacer fed frames of another size than it
// passes on is reported; a compositor taking any size is not.
func TestFrameSizesAgreeAlongEdges(t *testing.T) {
	res := handGraph(t, []row{{"s/pat", "test_pattern", "s", "nv12"}, {"s/rt", "realtime", "s", "nv12"}, {"s/fan", "one_to_many", "s", "nv12"}, {"a/c", "compositor", "a", "nv12"}},
		[][2]string{{"s/pat", "s/rt"}, {"s/rt", "s/fan"}, {"s/fan", "a/c"}})
	g := res.Graph
	g.Node("s/pat").Size = lang.Size{W: 640, H: 360}
	g.Node("s/rt").Size = lang.Size{W: 1280, H: 720}
	g.Node("s/fan").Size = lang.Size{W: 1280, H: 720}
	g.Node("a/c").Size = lang.Size{W: 1920, H: 1080}
	got := findingsOf(res.Run(formatsRule))["formats"]
	var sizes []string
	for _, f := range got {
		if strings.Contains(f, "sizes disagree") {
			sizes = append(sizes, f)
		}
	}
	if len(sizes) != 1 || !strings.Contains(sizes[0], "s/pat emits 640x360 frames into s/rt, which expects 1280x720") {
		t.Fatalf("size findings: %v", sizes)
	}
}
