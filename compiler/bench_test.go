package compiler

import (
	"fmt"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/lang"
)

func BenchmarkPlanDemo192(b *testing.B) {
	show := load(b, "../shows/demo-192.hcl", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, diags := Compile(show, Options{Target: gpu, ToolVersion: "bench"}); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/plan")
}

// generatedShow is a show of n sources in the demo's proportions (55 %
// HEVC, 25 % raw, 20 % browser), one quad scene per four sources, two
// Program buses, 20 AUX buses and an output per bus.
func generatedShow(n int) *lang.Show {
	rng := hcl.Range{Filename: "generated.hcl", Start: hcl.Pos{Line: 1, Column: 1}}
	s := &lang.Show{Name: fmt.Sprintf("gen-%d", n), Size: lang.Size{W: 1920, H: 1080}, FrameRate: lang.Rational{Num: 30, Den: 1},
		Format: lang.NV12, Profile: "nvidia_h200", Hash: "generated", DeclRange: rng,
		Canvas: lang.DefaultCanvas()}
	for i := 0; i < n; i++ {
		src := &lang.Source{Index: i, Key: lang.Key{Kind: lang.IntKey, Int: i}, Loop: true, Format: lang.NV12, Streams: 1, DeclRange: rng}
		switch {
		case i%20 < 11:
			src.Kind, src.Name, src.Path = "hevc_file", "cam", fmt.Sprintf("media/clip%d.hevc", i%3)
		case i%20 < 16:
			src.Kind, src.Name, src.Path = "raw_file", "vt", fmt.Sprintf("media/raw%d.nv12", i%4)
		default:
			src.Kind, src.Name, src.Socket = "browser", "gfx", fmt.Sprintf("/run/onair/gfx-%d.sock", i)
		}
		s.Sources = append(s.Sources, src)
	}
	for q := 0; q*4 < n; q++ {
		sc := &lang.Scene{Name: "quad", Key: lang.Key{Kind: lang.IntKey, Int: q}, DeclRange: rng}
		for k := 0; k < 4 && q*4+k < n; k++ {
			sc.Layers = append(sc.Layers, &lang.Layer{Source: s.Sources[q*4+k], Rect: lang.Rect{X: k % 2 * 960, Y: k / 2 * 540, W: 960, H: 540}, Fit: "contain", Opacity: 1})
		}
		s.Scenes = append(s.Scenes, sc)
	}
	for _, name := range []string{"a", "b"} {
		s.Buses = append(s.Buses, &lang.Bus{Kind: "program", Name: name, Scene: s.Scenes[0], DeclRange: rng})
	}
	for i := 0; i < 20; i++ {
		s.Buses = append(s.Buses, &lang.Bus{Kind: "aux", Name: "mon", Key: lang.Key{Kind: lang.IntKey, Int: i}, Source: s.Sources[i*7%n], DeclRange: rng})
	}
	for _, bus := range s.Buses {
		s.Outputs = append(s.Outputs, &lang.Output{Kind: "null", Name: "o_" + bus.Name, Key: bus.Key, Bus: bus, DeclRange: rng})
	}
	return s
}

func benchGenerated(b *testing.B, n int) {
	show := generatedShow(n)
	stat := func(string) (int64, error) { return 0, fmt.Errorf("no file") }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, _ := Compile(show, Options{Target: gpu, ToolVersion: "bench", StatFile: stat})
		if res.Plan == nil {
			b.Fatal("no plan")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/source")
}

func BenchmarkPlanGenerated1k(b *testing.B)  { benchGenerated(b, 1000) }
func BenchmarkPlanGenerated10k(b *testing.B) { benchGenerated(b, 10000) }

// The generated show compiles to the expected shape, so the benchmark
// measures a real compilation (its capacity findings aside).
func TestGeneratedShowCompiles(t *testing.T) {
	res, _ := Compile(generatedShow(1000), Options{Target: gpu, ToolVersion: "test", StatFile: func(string) (int64, error) { return 0, fmt.Errorf("none") }})
	for _, f := range res.Findings {
		if f.Rule.ID != "capacity" {
			t.Errorf("unexpected finding: %s %s", f.Rule.ID, f.Diag.Summary)
		}
	}
	c := count(res.Plan)
	if c.kinds["one_to_many_nb"] != 1000 || c.kinds["raw_video_file_cuda"] != 250 || c.kinds["compositor"] != 22 {
		t.Errorf("generated plan: %v", c.kinds)
	}
}
