package plan

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/onairhq/onair/internal/value"
)

func samplePlan() *Plan {
	return &Plan{
		FormatVersion: FormatVersion, ToolVersion: "1.2.3", Show: "s", ShowHash: "abc123",
		Size: value.Size{W: 1280, H: 720}, FrameRate: value.Rational{Num: 30, Den: 1}, Format: value.NV12,
		Nodes: []Node{
			{ID: "source.a/test_pattern", Kind: "test_pattern", Address: "source.a", Group: "source.a", Placement: Placement{Loop: "pacing_0"}, Params: map[string]any{"pattern": "bars", "z": 1.0}},
			{ID: "bus.m/compositor", Kind: "compositor", Address: "bus.m", Group: "bus.m", Placement: Placement{Thread: true}},
		},
		Edges: []Edge{{From: "source.a/test_pattern", To: "bus.m/compositor", Capacity: 3, Policy: "drop", Format: "nv12"}},
		Loops: []Loop{{Name: "default"}, {Name: "pacing_0", Sources: []string{"source.a"}, Nodes: []string{"source.a/test_pattern"}}},
	}
}

func TestMarshalLoadRoundTrip(t *testing.T) {
	p := samplePlan()
	b1, err := Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := LoadVersion(bytes.NewReader(b1), "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	b2, err := Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatalf("round trip changed the bytes:\n%s\n---\n%s", b1, b2)
	}
}

func TestLoadRefuses(t *testing.T) {
	cur := fmt.Sprintf(`{"format_version":%d`, FormatVersion) // an object left open
	good, _ := Marshal(samplePlan())
	other := samplePlan()
	other.FormatVersion = FormatVersion + 1
	otherFmt, _ := Marshal(other)
	dangling := samplePlan()
	dangling.Edges[0].To = "nowhere"
	dang, _ := Marshal(dangling)
	layer := func(rect [4]int, opacity float64) string {
		p := samplePlan()
		p.Scenes = append(p.Scenes, Scene{Address: "scene.bad", Layers: []Layer{{Source: "source.a", Rect: rect, Fit: "stretch", Opacity: opacity}}})
		b, _ := Marshal(p)
		return string(b)
	}
	crop := func(c [4]int) string {
		p := samplePlan()
		p.Nodes[0].Size = value.Size{W: 1280, H: 720}
		p.Scenes = append(p.Scenes, Scene{Address: "scene.bad", Layers: []Layer{{Source: "source.a", Rect: [4]int{0, 0, 1280, 720}, Crop: &c, Fit: "stretch", Opacity: 1}}})
		b, _ := Marshal(p)
		return string(b)
	}
	sized := func(canvas, source value.Size) string {
		p := samplePlan()
		p.Size, p.Nodes[0].Size = canvas, source
		b, _ := Marshal(p)
		return string(b)
	}
	cases := []struct {
		name, in, tool, want string
	}{
		{"corrupt", `{"format_version": 1, `, "", "corrupt JSON"},
		{"not a plan", `{"hello": 1}`, "", "no format_version"},
		{"other format", string(otherFmt), "", fmt.Sprintf("plan format %d, but this onair reads format %d", FormatVersion+1, FormatVersion)},
		{"other tool", string(good), "9.9.9", `onair "1.2.3", but this is onair "9.9.9"`},
		{"unknown field", strings.Replace(string(good), `"show":`, `"extra": 1, "show":`, 1), "", "unknown field"},
		{"trailing", string(good) + "{}", "", "corrupt JSON"},
		{"dangling edge", string(dang), "", "unknown node"},
		{"only a format version", cur + `}`, "", "names no show"},
		{"only a format version, tool checked", cur + `}`, "1.2.3", `onair ("1.2.3") can use: it names no tool_version`},
		{"no nodes", cur + `,"show":"s","nodes":[]}`, "", "no nodes"},
		{"a layer of no width", layer([4]int{0, 0, 0, 10}, 1), "", "scene.bad layer 0: rect [0, 0, 0, 10]: width and height must be positive"},
		{"a layer more than opaque", layer([4]int{0, 0, 10, 10}, 1.5), "", "opacity 1.5 is outside 0 to 1"},
		// Issue 27: a posted plan with w = 1e14 stopped the Program group
		// ("makeslice: len out of range") or panicked a band worker.
		{"a layer 1e14 wide", layer([4]int{0, 0, 1e14, 120}, 1), "", "scene.bad layer 0: rect [0, 0, 100000000000000, 120] reaches past the rect_reach limit on the 1280x720 canvas"},
		{"a layer 2e7 wide", layer([4]int{0, 0, 2e7, 120}, 1), "", "rect_reach"},
		{"a layer of 2^30 by 2^30", layer([4]int{0, 0, 1 << 30, 1 << 30}, 1), "", "rect_reach"},
		{"a layer far left", layer([4]int{-1 << 62, 0, 640, 360}, 1), "", "rect_reach"},
		{"a crop outside its source", crop([4]int{0, 0, 1282, 720}), "", "scene.bad layer 0: crop [0, 0, 1282, 720] reaches past the crop_reach limit of the source's 1280x720 picture"},
		{"a canvas too large", sized(value.Size{W: 1000000, H: 1000000}, value.Size{}), "", "the canvas: size 1000000x1000000: width and height must be between 2 and 16384"},
		{"a canvas of no size", sized(value.Size{}, value.Size{}), "", `size "0x0": want WIDTHxHEIGHT`},
		// The plan's typed values (format 3) are read, not guessed.
		{"an older format", strings.Replace(string(good), fmt.Sprintf(`"format_version": %d`, FormatVersion), `"format_version": 2`, 1), "", "plan format 2, older than this onair's format 3 (which types the plan's sizes, rates, formats and colours): re-run onair plan"},
		{"a frame rate spelt wrong", strings.Replace(string(good), `"frame_rate": "30"`, `"frame_rate": "thirty"`, 1), "", `"thirty" is not a positive whole number or fraction`},
		{"a frame rate as a number", strings.Replace(string(good), `"frame_rate": "30"`, `"frame_rate": 30`, 1), "", "field frame_rate is a JSON number (at byte"},
		{"no frame rate", strings.Replace(string(good), `"frame_rate": "30",`, ``, 1), "", "no frame_rate"},
		{"a pixel format onair lacks", strings.Replace(string(good), `"format": "nv12",`, `"format": "rgb24",`, 1), "", `unknown pixel format "rgb24": use nv12 or p010`},
		{"no pixel format", strings.Replace(string(good), `"format": "nv12",`, ``, 1), "", "no pixel format"},
		{"a size spelt wrong", strings.Replace(string(crop([4]int{0, 0, 10, 10})), `"size": "1280x720"`, `"size": "1280*720"`, 1), "", `size "1280*720": want WIDTHxHEIGHT`},
		{"an edge's stream spelt wrong", strings.Replace(string(good), `"format": "nv12"
    }`, `"format": "nv21"
    }`, 1), "", `stream format "nv21" is none of nv12, p010, packets, dmabuf`},
		{"a source too large", sized(value.Size{W: 1280, H: 720}, value.Size{W: 100000, H: 2}), "", `node "source.a/test_pattern": size 100000x2`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadVersion(strings.NewReader(c.in), c.tool)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	_, err := LoadVersion(bytes.NewReader(otherFmt), "")
	var ve *VersionError
	if !errors.As(err, &ve) || ve.What != "format_version" {
		t.Fatalf("want a VersionError, got %v", err)
	}
}

func TestLoadUsesToolVersion(t *testing.T) {
	good, _ := Marshal(samplePlan())
	old := ToolVersion
	defer func() { ToolVersion = old }()
	ToolVersion = "1.2.3"
	if _, err := Load(bytes.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	ToolVersion = "2.0.0"
	if _, err := Load(bytes.NewReader(good)); err == nil {
		t.Fatal("a plan of another tool version loaded")
	}
}

func TestCheckKinds(t *testing.T) {
	p := samplePlan()
	known := func(k string) bool { return k == "test_pattern" || k == "compositor" }
	if err := p.CheckKinds(known); err != nil {
		t.Fatal(err)
	}
	p.Nodes[1].Kind = "hologram"
	err := p.CheckKinds(known)
	if err == nil || !strings.Contains(err.Error(), `unknown node kind "hologram" (node bus.m/compositor)`) || !strings.Contains(err.Error(), "compile the show again") {
		t.Fatalf("got %v", err)
	}
}

func TestCheckShow(t *testing.T) {
	p := samplePlan()
	if err := CheckShow(p, "abc123"); err != nil {
		t.Fatal(err)
	}
	err := CheckShow(p, "def456")
	if err == nil || !strings.Contains(err.Error(), "another show") {
		t.Fatalf("got %v", err)
	}
}

func FuzzLoadPlan(f *testing.F) {
	good, _ := Marshal(samplePlan())
	f.Add(good)
	f.Add([]byte(`{"format_version":3}`))
	f.Add([]byte(`{"format_version":3,"show":"s","size":"0x0","frame_rate":"1/0","format":"p010"}`))
	f.Add([]byte(`{"format_version":3,"nodes":[{"id":"a","kind":"k","placement":{"thread":true}}],"edges":[{"from":"a","to":"a","capacity":1}]}`))
	f.Add([]byte(`[]`))
	// Geometry at the limits and past them (issue 27).
	for _, r := range [][4]int{{-5120, -2880, 11520, 6480}, {0, 0, 1e14, 120}, {0, 0, 1 << 30, 1 << 30}, {-1 << 62, 0, 2, 2}} {
		p := samplePlan()
		c := [4]int{0, 0, 1280, 720}
		p.Nodes[0].Size = value.Size{W: 1280, H: 720}
		p.Scenes = []Scene{{Address: "scene.s", Layers: []Layer{{Source: "source.a", Rect: r, Crop: &c, Fit: "cover", Opacity: 1}}}}
		b, _ := Marshal(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := LoadVersion(bytes.NewReader(data), "")
		if err != nil {
			return
		}
		// Whatever loads is within the geometry limits.
		canvas, err := p.CanvasSize()
		if err != nil {
			t.Fatalf("a plan loads with %v", err)
		}
		for _, sc := range p.Scenes {
			for _, l := range sc.Layers {
				if err := value.CheckRect(canvas, l.Rect); err != nil {
					t.Fatalf("a plan loads with %s: %v", sc.Address, err)
				}
			}
		}
		// Whatever loads must marshal, and load again to the same bytes.
		b, err := Marshal(p)
		if err != nil {
			t.Fatalf("a loaded plan does not marshal: %v", err)
		}
		q, err := LoadVersion(bytes.NewReader(b), "")
		if err != nil {
			t.Fatalf("a marshalled plan does not load: %v\n%s", err, b)
		}
		b2, _ := Marshal(q)
		if !bytes.Equal(b, b2) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
	})
}
