package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	v "github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/plan"
)

// A hand-built plan: two sources feeding one program bus with one output.
func twoSourcePlan() *plan.Plan {
	src := func(addr, path string) []plan.Node {
		return []plan.Node{
			{ID: addr + "/raw_video_file_cuda", Kind: "raw_video_file_cuda", Address: addr, Params: map[string]any{"path": path, "mode": "direct"}, Placement: plan.Placement{Thread: true}},
			{ID: addr + "/realtime", Kind: "realtime", Address: addr, Params: map[string]any{"time_base": "1/120000"}, Placement: plan.Placement{Loop: "pacing_0"}},
			{ID: addr + "/one_to_many_nb", Kind: "one_to_many_nb", Address: addr, Placement: plan.Placement{Loop: "pacing_0"}},
		}
	}
	p := &plan.Plan{Show: "t", Size: v.Size{W: 1920, H: 1080}, FrameRate: v.Rational{Num: 30, Den: 1}, Format: v.NV12}
	p.Nodes = append(p.Nodes, src("source.a", "a.nv12")...)
	p.Nodes = append(p.Nodes, src("source.b", "b.nv12")...)
	p.Nodes = append(p.Nodes,
		plan.Node{ID: "bus.pgm/compositor", Kind: "compositor", Address: "bus.pgm", Params: map[string]any{"scenes": []any{"scene.s"}, "input_poll_ms": 8}, Placement: plan.Placement{Thread: true}},
		plan.Node{ID: "bus.mon/compositor", Kind: "compositor", Address: "bus.mon", Params: map[string]any{"source": "source.b"}, Placement: plan.Placement{Thread: true}},
		plan.Node{ID: "output.rec/record", Kind: "record", Address: "output.rec", Params: map[string]any{"path": "out.y4m"}, Placement: plan.Placement{Thread: true}},
	)
	for _, s := range []string{"source.a", "source.b"} {
		p.Edges = append(p.Edges,
			plan.Edge{From: s + "/raw_video_file_cuda", To: s + "/realtime", Capacity: 1, Policy: "block", Format: "nv12"},
			plan.Edge{From: s + "/realtime", To: s + "/one_to_many_nb", Capacity: 1, Policy: "block", Format: "nv12"},
			plan.Edge{From: s + "/one_to_many_nb", To: "bus.pgm/compositor", Capacity: 3, Policy: "drop", Format: "nv12"},
		)
	}
	p.Edges = append(p.Edges,
		plan.Edge{From: "source.b/one_to_many_nb", To: "bus.mon/compositor", Capacity: 3, Policy: "drop", Format: "nv12"},
		plan.Edge{From: "bus.pgm/compositor", To: "output.rec/record", Capacity: 2, Policy: "block", Format: "nv12"})
	p.Scenes = []plan.Scene{{Address: "scene.s", Layers: []plan.Layer{
		{Source: "source.a", Rect: [4]int{0, 0, 960, 540}, Fit: "stretch", Opacity: 1},
		{Source: "source.b", Rect: [4]int{960, 0, 960, 540}, Fit: "stretch", Opacity: 1},
	}}}
	return p
}

// roundTrip saves and reloads a plan, as `onair plan -out` and a later
// diff would: numbers come back as float64 and lists as []any.
func roundTrip(t *testing.T, p *plan.Plan) *plan.Plan {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q plan.Plan
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	return &q
}

func TestDiffActions(t *testing.T) {
	live := LiveParam
	LiveParam = func(kind, param string) bool { return param == "input_poll_ms" || param == "scenes" }
	defer func() { LiveParam = live }()

	type want struct {
		actions  map[string]Action
		attr     map[string]string // element -> attribute that forced its replacement
		glitches []string
		restarts []string
	}
	tests := []struct {
		name   string
		change func(p *plan.Plan)
		want   want
	}{
		{"no change", func(p *plan.Plan) {}, want{actions: map[string]Action{}}},
		{"path forces replacement", func(p *plan.Plan) { p.Nodes[3].Params["path"] = "c.nv12" },
			want{actions: map[string]Action{"source.b": Replace}, attr: map[string]string{"source.b": "raw_video_file_cuda.path"},
				glitches: []string{"bus.mon", "bus.pgm"}, restarts: []string{"source.b"}}},
		{"live param updates", func(p *plan.Plan) { p.Nodes[6].Params["input_poll_ms"] = 4 },
			want{actions: map[string]Action{"bus.pgm": Update}}},
		{"opacity updates the scene", func(p *plan.Plan) { p.Scenes[0].Layers[1].Opacity = 0.5 },
			want{actions: map[string]Action{"scene.s": Update}}},
		{"kind change replaces", func(p *plan.Plan) { p.Nodes[2].Kind = "one_to_many" },
			want{actions: map[string]Action{"source.a": Replace}, attr: map[string]string{"source.a": "kind"},
				glitches: []string{"bus.pgm"}, restarts: []string{"source.a"}}},
		{"rename with moved is an update", func(p *plan.Plan) {
			renameSource(p, "source.a", "source.z")
			p.Moved = []plan.Moved{{From: "source.a", To: "source.z"}}
		}, want{actions: map[string]Action{"source.z": Update}}},
		{"rename without moved deletes and creates", func(p *plan.Plan) { renameSource(p, "source.a", "source.z") },
			want{actions: map[string]Action{"source.a": Delete, "source.z": Create, "bus.pgm": Update, "scene.s": Update},
				glitches: []string{"bus.pgm"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := twoSourcePlan()
			nw := twoSourcePlan()
			tt.change(nw)
			// Compare a saved old plan with a freshly built new one.
			r := Diff(roundTrip(t, old), nw)
			got := map[string]Action{}
			gotAttr := map[string]string{}
			for _, c := range r.Changes {
				got[c.Address] = c.Action
				if c.Action == Replace {
					gotAttr[c.Address] = c.Attribute
				}
			}
			if !reflect.DeepEqual(got, tt.want.actions) {
				t.Errorf("actions = %v, want %v", got, tt.want.actions)
			}
			if tt.want.attr == nil {
				tt.want.attr = map[string]string{}
			}
			if !reflect.DeepEqual(gotAttr, tt.want.attr) {
				t.Errorf("forcing attributes = %v, want %v", gotAttr, tt.want.attr)
			}
			var gl []string
			for _, g := range r.Impact.Glitches {
				gl = append(gl, g.Bus)
			}
			if !reflect.DeepEqual(gl, tt.want.glitches) {
				t.Errorf("glitches = %v, want %v", gl, tt.want.glitches)
			}
			if !reflect.DeepEqual(r.Impact.Restarts, tt.want.restarts) {
				t.Errorf("restarts = %v, want %v", r.Impact.Restarts, tt.want.restarts)
			}
			if r.Changed() != (len(tt.want.actions) > 0) {
				t.Errorf("Changed() = %v", r.Changed())
			}
			var buf bytes.Buffer
			if err := r.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + buf.String())
		})
	}
}

func renameSource(p *plan.Plan, from, to string) {
	ren := func(s string) string {
		if len(s) >= len(from) && s[:len(from)] == from {
			return to + s[len(from):]
		}
		return s
	}
	for i := range p.Nodes {
		p.Nodes[i].ID = ren(p.Nodes[i].ID)
		p.Nodes[i].Address = ren(p.Nodes[i].Address)
	}
	for i := range p.Edges {
		p.Edges[i].From = ren(p.Edges[i].From)
		p.Edges[i].To = ren(p.Edges[i].To)
	}
	for i := range p.Scenes {
		for j := range p.Scenes[i].Layers {
			p.Scenes[i].Layers[j].Source = ren(p.Scenes[i].Layers[j].Source)
		}
	}
}

func TestCompactAddresses(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"source.a"}, "source.a"},
		{[]string{"source.vt[0] (replaced)", "source.vt[1] (replaced)", "source.vt[2] (replaced)"}, "source.vt[0..2] (replaced)"},
		{[]string{"source.vt[0]", "source.vt[2]", "source.vt[3]"}, "source.vt[0], source.vt[2..3]"},
		{[]string{"source.cam[4] (deleted)", "source.cam[5] (replaced)"}, "source.cam[4] (deleted), source.cam[5] (replaced)"},
		{[]string{`source.cam["a"]`, `source.cam["b"]`, "source.x[1]", "source.y[2]"}, `source.cam["a"], source.cam["b"], source.x[1], source.y[2]`},
	}
	for _, tt := range tests {
		if got := compact(tt.in); got != tt.want {
			t.Errorf("compact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestLiveUpdates: what apply changes on air, as values: a live param
// changed, a live param the new plan leaves out (its default), a bus's
// scenes grown at the end; a list that lost a scene, or a value out of
// range, is not live and says why.
func TestLiveUpdates(t *testing.T) {
	withPreview := func(params map[string]any, scenes []any, poll int) *plan.Plan {
		p := twoSourcePlan()
		p.Nodes[6].Params = map[string]any{"scenes": scenes, "input_poll_ms": poll}
		p.Nodes = append(p.Nodes, plan.Node{ID: "output.pv/output_preview", Kind: "output_preview", Address: "output.pv", Params: params})
		return p
	}
	old := withPreview(map[string]any{"interval_ms": 500, "quality": 60}, []any{"scene.s"}, 8)
	for _, c := range []struct {
		name    string
		new     *plan.Plan
		updates string
		refused string
	}{
		{"quality", withPreview(map[string]any{"interval_ms": 500, "quality": 90}, []any{"scene.s"}, 8), "output.pv output_preview.quality=90", ""},
		{"interval left out", withPreview(map[string]any{"quality": 60}, []any{"scene.s"}, 8), "output.pv output_preview.interval_ms=1000", ""},
		{"a scene added", withPreview(map[string]any{"interval_ms": 500, "quality": 60}, []any{"scene.s", "scene.t"}, 8), "bus.pgm compositor.scenes=[scene.s scene.t]", ""},
		{"a scene gone", withPreview(map[string]any{"interval_ms": 500, "quality": 60}, []any{}, 8), "", "bus.pgm replace"},
		{"poll out of range", withPreview(map[string]any{"interval_ms": 500, "quality": 60}, []any{"scene.s"}, 5000), "", "bus.pgm replace"},
	} {
		lv := Diff(roundTrip(t, old), c.new).Live
		var ups []string
		for _, u := range lv.Updates {
			ups = append(ups, fmt.Sprintf("%s %s.%s=%v", u.Address, u.Kind, u.Param, u.Value))
		}
		if got := strings.Join(ups, "; "); got != c.updates {
			t.Errorf("%s: updates %q, want %q", c.name, got, c.updates)
		}
		if got := strings.Join(lv.Refused, "; "); c.refused == "" && got != "" || !strings.Contains(got, c.refused) {
			t.Errorf("%s: refused %q, want %q", c.name, got, c.refused)
		}
	}
}
