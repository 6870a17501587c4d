package compiler

import (
	"bytes"
	"strings"
	"testing"

	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/plan"
)

// Folded groups list every param that differs between them, the ones the
// detail otherwise leaves out (size, frame rate, colour, path) included,
// value by value; those that agree stay out of the node line.
func TestWriteTextFoldListsHiddenParams(t *testing.T) {
	p := &plan.Plan{Show: "fold", Size: value.Size{W: 1280, H: 720}, FrameRate: value.Rational{Num: 30, Den: 1}, Format: value.NV12}
	type src struct{ name, size, rate, colour, path string }
	for i, s := range []src{
		{"source.a", "640x360", "30", "bt709/bt709/bt709/limited", "media/a.nv12"},
		{"source.b", "320x180", "25", "bt601/bt601/bt601/limited", "media/b.nv12"},
	} {
		p.Groups = append(p.Groups, plan.Group{Name: s.name, Order: i, Readiness: "ready"})
		p.Nodes = append(p.Nodes,
			plan.Node{ID: s.name + "/raw_file_cpu", Kind: "raw_file_cpu", Address: s.name, Group: s.name, Format: "nv12",
				Placement: plan.Placement{Thread: true},
				Params:    map[string]any{"size": s.size, "colour": s.colour, "path": s.path, "format": "nv12", "loop": true}},
			plan.Node{ID: s.name + "/realtime", Kind: "realtime", Address: s.name, Group: s.name, Format: "nv12",
				Placement: plan.Placement{Loop: "pacing_0"},
				Params:    map[string]any{"frame_rate": s.rate}})
		p.Edges = append(p.Edges, plan.Edge{From: s.name + "/raw_file_cpu", To: s.name + "/realtime", Capacity: 2})
	}
	var b bytes.Buffer
	if err := WriteText(&b, p, false); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"source.a … source.b (2 groups of one shape",
		"raw_file_cpu         nv12      colour=* loop=true path=* size=*\n",
		"realtime             nv12      frame_rate=*\n",
		"raw_file_cpu colour: bt709/bt709/bt709/limited in source.a; bt601/bt601/bt601/limited in source.b",
		"raw_file_cpu path: media/a.nv12 in source.a; media/b.nv12 in source.b",
		"raw_file_cpu size: 640x360 in source.a; 320x180 in source.b",
		"realtime frame_rate: 30 in source.a; 25 in source.b",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "format=") {
		t.Errorf("a hidden param every group agrees on is printed:\n%s", got)
	}
}
