package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkValidateDemo192 is `onair validate shows/demo-192.hcl` without
// the printing: read, parse, resolve, expand and check 192 sources, 256
// scenes, 22 buses and 24 outputs.
func BenchmarkValidateDemo192(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		s, diags := Load([]string{"../shows/demo-192.hcl"}, Options{})
		if diags.HasErrors() || len(s.Sources) != 192 {
			b.Fatalf("demo-192: %d sources, %v", len(s.Sources), diags)
		}
	}
}

// generatedShow writes a show of n separately declared sources, one scene
// per four of them, a Program bus on the first scene and an AUX bus per
// scene, each with a null output.
func generatedShow(tb testing.TB, n int) string {
	var sb strings.Builder
	sb.WriteString("show {\n  name = \"gen\"\n  size = \"1920x1080\"\n  frame_rate = \"30\"\n}\n")
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			fmt.Fprintf(&sb, "source \"hevc_file\" \"s%d\" {\n  path = \"media/clip%d.hevc\"\n}\n", i, i%8)
		} else {
			fmt.Fprintf(&sb, "source \"test_pattern\" \"s%d\" {\n  pattern = \"ramp\"\n}\n", i)
		}
	}
	for sc := 0; sc < n/4; sc++ {
		fmt.Fprintf(&sb, "scene \"q%d\" {\n", sc)
		for j := 0; j < 4; j++ {
			fmt.Fprintf(&sb, "  layer {\n    source = source.s%d\n    rect = [%d, %d, 960, 540]\n  }\n", sc*4+j, (j%2)*960, (j/2)*540)
		}
		sb.WriteString("}\n")
		fmt.Fprintf(&sb, "bus \"aux\" \"a%d\" {\n  scene = scene.q%d\n}\noutput \"null\" \"o%d\" {\n  bus = bus.a%d\n}\n", sc, sc, sc, sc)
	}
	sb.WriteString("bus \"program\" \"pgm\" {\n  scene = scene.q0\n}\n")
	path := filepath.Join(tb.TempDir(), "gen.hcl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkGeneratedShow shows that the cost of Load grows linearly with
// the number of sources: ns/source should stay flat from 1,000 to 10,000.
func BenchmarkGeneratedShow(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("sources=%d", n), func(b *testing.B) {
			path := generatedShow(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s, diags := Load([]string{path}, Options{})
				if diags.HasErrors() || len(s.Sources) != n {
					b.Fatalf("%d sources, %v", len(s.Sources), diags)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/source")
		})
	}
}

// TestGeneratedShowLoads keeps the generator honest in normal test runs.
func TestGeneratedShowLoads(t *testing.T) {
	s := mustLoad(t, []string{generatedShow(t, 100)}, Options{})
	if len(s.Sources) != 100 || len(s.Scenes) != 25 || len(s.Buses) != 26 || s.Scenes[24].Layers[3].Source != s.Sources[99] {
		t.Fatalf("generated show wrong: %d sources %d scenes %d buses", len(s.Sources), len(s.Scenes), len(s.Buses))
	}
}
