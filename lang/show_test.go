package lang

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

func mustLoad(t *testing.T, paths []string, opts Options) *Show {
	t.Helper()
	s, diags := Load(paths, opts)
	if diags.HasErrors() {
		t.Fatalf("Load(%v): %v", paths, diags)
	}
	return s
}

// TestProjectShows validates every show the project ships.
func TestProjectShows(t *testing.T) {
	files, _ := filepath.Glob("../shows/*.hcl")
	ex, _ := filepath.Glob("../examples/*.hcl")
	files = append(files, ex...)
	if len(files) == 0 {
		t.Fatal("no shows found in ../shows")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { mustLoad(t, []string{f}, Options{}) })
	}
}

func TestDemo192Shape(t *testing.T) {
	s := mustLoad(t, []string{"../shows/demo-192.hcl"}, Options{})
	kinds := map[string]int{}
	for i, src := range s.Sources {
		kinds[src.Kind]++
		if src.Index != i {
			t.Fatalf("source %s has Index %d at position %d", src.Address(), src.Index, i)
		}
	}
	if kinds["hevc_file"] != 105 || kinds["raw_file"] != 47 || kinds["browser"] != 40 {
		t.Errorf("source kinds = %v, want 105 hevc_file, 47 raw_file, 40 browser", kinds)
	}
	buses := map[string]int{}
	for _, b := range s.Buses {
		buses[b.Kind]++
	}
	if buses["program"] != 2 || buses["aux"] != 20 || len(s.Scenes) != 256 || len(s.Outputs) != 24 {
		t.Errorf("buses %v, %d scenes, %d outputs; want 2 program, 20 aux, 256 scenes, 24 outputs", buses, len(s.Scenes), len(s.Outputs))
	}
	if s.Size != (Size{W: 1920, H: 1080}) || s.FrameRate != (Rational{Num: 30, Den: 1}) {
		t.Errorf("size %v rate %v", s.Size, s.FrameRate)
	}
}

func TestFeatures(t *testing.T) {
	s := mustLoad(t, []string{"testdata/good/features.hcl"}, Options{})
	if s.Name != "studio" || s.Format != P010 || s.FrameRate != (Rational{Num: 30000, Den: 1001}) || s.Size != (Size{W: 1280, H: 720}) {
		t.Errorf("show = %q %v %v %v", s.Name, s.Format, s.FrameRate, s.Size)
	}
	c := s.Canvas
	if c.Int("pacing_loops") != 2 || c.String("raw_upload") != "direct" || c.Int("import_ttl_ms") != 10000 || len(c.Strings("frame_metadata")) != 2 || !c.Attrs.Has("pacing_loops") || c.Attrs.Has("raw_upload") {
		t.Errorf("canvas = %+v", c)
	}
	var addrs []string
	for _, src := range s.Sources {
		addrs = append(addrs, src.Address())
	}
	want := []string{"source.cam[0]", "source.cam[1]", "source.cam[2]", "source.bars", `source.g["left"]`, `source.g["right"]`}
	if len(addrs) != len(want) {
		t.Fatalf("sources %q, want %q", addrs, want)
	}
	for i := range want {
		if addrs[i] != want[i] {
			t.Fatalf("sources %q, want %q", addrs, want)
		}
	}
	cam := s.Sources[0]
	if cam.Path != filepath.Join("testdata", "good", "clip.hevc") || !cam.Loop || cam.Format != P010 || cam.Size != s.Size || cam.Streams != 1 || cam.Colour.Primaries != "bt709" {
		t.Errorf("cam[0] = %+v", cam)
	}
	if !cam.Attrs.Has("path") || !cam.Attrs.Has("format") || cam.Attrs.Has("loop") || cam.Attrs["path"].Start.Line != 38 {
		t.Errorf("cam[0].Attrs = %v", cam.Attrs)
	}
	bars := s.Sources[3]
	if !bars.Attrs.Has("colour") || bars.Attrs["colour.transfer"].Start.Line != 46 || bars.Attrs.Has("colour.bogus") {
		t.Errorf("bars.Attrs = %v", bars.Attrs)
	}
	if bars.Pattern != "ramp" || bars.Colour != (Colour{"bt2020", "pq", "bt2020nc", "full"}) || bars.Format != P010 {
		t.Errorf("bars = %+v", bars)
	}
	if g := s.Sources[4]; g.Socket != "/run/l.sock" || g.Key != (Key{Kind: StringKey, Str: "left"}) {
		t.Errorf("g[left] = %+v", g)
	}
	all := s.Scenes[0]
	// dynamic layers z = 0, -1, -2, -3 then a static one at z 0: sorted
	// bottom first, ties in declaration order.
	var order []string
	for _, ly := range all.Layers {
		order = append(order, ly.Source.Address())
	}
	wantOrder := []string{"source.bars", "source.cam[2]", "source.cam[1]", "source.cam[0]", `source.g["left"]`}
	for i := range wantOrder {
		if i >= len(order) || order[i] != wantOrder[i] {
			t.Fatalf("layer order %q, want %q", order, wantOrder)
		}
	}
	top := all.Layers[4]
	if top.Opacity != 0.5 || top.Fit != "cover" || top.Crop == nil || *top.Crop != (Rect{0, 0, 640, 360}) || top.Rect != (Rect{0, 0, 1280, 720}) {
		t.Errorf("top layer = %+v", top)
	}
	if all.Layers[0].Rect != (Rect{300, 0, 100, 100}) || all.Layers[0].Opacity != 1 || all.Layers[0].Fit != "stretch" {
		t.Errorf("bottom layer = %+v", all.Layers[0])
	}
	if len(s.Scenes) != 4 || s.Scenes[2].Address() != "scene.solo[1]" || s.Scenes[2].Layers[0].Source != s.Sources[1] {
		t.Errorf("solo scenes wrong: %d scenes", len(s.Scenes))
	}
	if len(s.Buses) != 3 || s.Buses[0].Scene != all || s.Buses[2].Address() != `bus.mon["b"]` || s.Buses[2].Scene != s.Scenes[3] {
		t.Errorf("buses wrong")
	}
	if len(s.Outputs) != 4 || s.Outputs[0].Path != filepath.Join("testdata", "good", "out", "pgm.y4m") ||
		s.Outputs[1].IntervalMs != 1000 || s.Outputs[1].Quality != 80 || s.Outputs[2].Bus != s.Buses[2] || s.Outputs[3].Args[1] != "libx264" {
		t.Errorf("outputs wrong: %+v", s.Outputs)
	}
	if len(s.Moved) != 1 || s.Moved[0].From != "source.cams[1]" || s.Moved[0].To != "source.cam[1]" {
		t.Errorf("moved = %+v", s.Moved)
	}
	if len(s.Files) != 1 || len(s.Hash) != 64 {
		t.Errorf("files %d hash %q", len(s.Files), s.Hash)
	}
}

// TestVariablePrecedence: environment < var file < -var, and the hash
// follows the values in effect.
func TestVariablePrecedence(t *testing.T) {
	show := []string{"testdata/good/features.hcl"}
	cases := []struct {
		name      string
		opts      Options
		cams      int
		label     string
		gfxSocket string
	}{
		{"defaults", Options{}, 3, "studio", "/run/l.sock"},
		{"env", Options{Env: []string{"ONAIR_VAR_cams=4", "PATH=/bin", "ONAIR_VAR_label=env"}}, 4, "env", "/run/l.sock"},
		{"file over env", Options{Env: []string{"ONAIR_VAR_cams=4"}, VarFiles: []string{"testdata/good/vars.hcl"}}, 2, "from-file", "/run/l.sock"},
		{"flag over file", Options{VarFiles: []string{"testdata/good/vars.hcl"}, Vars: map[string]string{"cams": "1", "gfx": `{left = "/x.sock"}`}}, 1, "from-file", "/x.sock"},
		{"string stays raw", Options{Vars: map[string]string{"label": "a b [c]"}}, 3, "a b [c]", "/run/l.sock"},
	}
	hashes := map[string]string{}
	for _, c := range cases {
		s := mustLoad(t, show, c.opts)
		n := 0
		for _, src := range s.Sources {
			if src.Kind == "hevc_file" {
				n++
			}
		}
		if n != c.cams || s.Name != c.label || s.Sources[n+1].Socket != c.gfxSocket {
			t.Errorf("%s: %d cams, label %q, socket %q; want %d, %q, %q", c.name, n, s.Name, s.Sources[n+1].Socket, c.cams, c.label, c.gfxSocket)
		}
		if prev, dup := hashes[s.Hash]; dup {
			t.Errorf("%s and %s share hash %s", c.name, prev, s.Hash)
		}
		hashes[s.Hash] = c.name
	}
	again := mustLoad(t, show, Options{})
	if hashes[again.Hash] != "defaults" {
		t.Errorf("hash not deterministic")
	}
	_, diags := Load(show, Options{Vars: map[string]string{"cam": "1"}})
	if !diags.HasErrors() || diags[0].Summary != "Value for undeclared variable" {
		t.Errorf("undeclared -var: %v", diags)
	}
	_, diags = Load(show, Options{Vars: map[string]string{"cams": "0"}})
	if got := diagLines(diags, hcl.DiagError); len(got) != 1 || got[0] != "1:1 Invalid value for variable" {
		t.Errorf("validation with -var: %v", diags)
	}
}

func TestDirectoryMerge(t *testing.T) {
	s := mustLoad(t, []string{"testdata/good/dir"}, Options{})
	if s.Name != "split" || s.FrameRate != (Rational{Num: 25, Den: 1}) || len(s.Sources) != 1 || len(s.Outputs) != 1 || s.Outputs[0].Bus != s.Buses[0] || len(s.Files) != 2 {
		t.Errorf("merged show wrong: %+v", s)
	}
}

// TestConcurrentLoads: Load shares nothing between calls (the schema and
// function table are read-only), so commands may load shows in parallel.
func TestConcurrentLoads(t *testing.T) {
	done := make(chan *Show)
	for i := 0; i < 4; i++ {
		go func() {
			s, _ := Load([]string{"testdata/good/features.hcl"}, Options{})
			done <- s
		}()
	}
	var hash string
	for i := 0; i < 4; i++ {
		s := <-done
		if s == nil || (hash != "" && s.Hash != hash) {
			t.Fatalf("concurrent loads disagree")
		}
		hash = s.Hash
	}
}

func TestShowRel(t *testing.T) {
	written := map[string]bool{"/run/onair/gfx.sock": true} // written as absolute paths
	cases := []struct{ dir, p, want string }{
		{"shows", "shows/media/a.nv12", "media/a.nv12"},
		{"shows", "media/a.nv12", "../media/a.nv12"},
		{"examples", "out/pgm.y4m", "../out/pgm.y4m"},
		{".", "clip.nv12", "clip.nv12"},
		{"/data/show", "/data/show/media/a.nv12", "media/a.nv12"},
		{"/data/show/examples", "/data/show/out/pgm.y4m", "../out/pgm.y4m"},
		{"/data/show", "/run/onair/gfx.sock", "/run/onair/gfx.sock"},
		{"shows", "/run/onair/gfx.sock", "/run/onair/gfx.sock"},
		{"shows", "", ""},
	}
	for _, c := range cases {
		s := &Show{Dir: c.dir, written: written}
		if got := s.Rel(c.p); got != c.want {
			t.Errorf("Show{Dir: %q}.Rel(%q) = %q, want %q", c.dir, c.p, got, c.want)
		}
	}
}

// TestPlanPathsDoNotDependOnTheWorkingDirectory: a show loaded by a relative
// and by an absolute path gives the same show-relative paths, and a path
// the show wrote as absolute stays absolute.
func TestPlanPathsDoNotDependOnTheWorkingDirectory(t *testing.T) {
	abs, _ := filepath.Abs("../examples/cpu-demo.hcl")
	var got [2][]string
	for i, p := range []string{"../examples/cpu-demo.hcl", abs} {
		s, diags := Load([]string{p}, Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		for _, src := range s.Sources {
			if src.Path != "" {
				got[i] = append(got[i], s.Rel(src.Path))
			}
		}
		for _, o := range s.Outputs {
			got[i] = append(got[i], s.Rel(o.Path))
		}
	}
	if strings.Join(got[0], " ") != strings.Join(got[1], " ") || !strings.Contains(strings.Join(got[0], " "), "../out/pgm.y4m") {
		t.Fatalf("relative load %v, absolute load %v", got[0], got[1])
	}
	s, _ := Load([]string{"../shows/studio.hcl"}, Options{})
	for _, src := range s.Sources {
		if src.Kind == "browser" && !strings.HasPrefix(s.Rel(src.Socket), "/run/onair/") {
			t.Fatalf("an absolute socket path became %q", s.Rel(src.Socket))
		}
	}
}
