package cpu

import (
	"bytes"
	"github.com/onairhq/onair/nodes/media"
	"math/rand"
	"testing"

	"github.com/onairhq/onair/frame"
)

// TestParallelMatchesSerial: rendering in bands gives the same bytes as one
// compositor, for random scenes (fits, crops, opacities, layers off the
// canvas) in NV12 and P010, for every number of bands.
func TestParallelMatchesSerial(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		var srcs []*frame.Frame
		for i, sz := range [][2]int{{640, 360}, {1920, 1080}, {320, 240}} {
			fr, _ := frame.New(f, sz[0], sz[1])
			tp, _ := media.NewTestPattern(media.TestPatternConfig{ID: "s", StampID: uint16(i), Pattern: media.Pattern(i % 4), Format: f, Width: sz[0], Height: sz[1], Rate: frame.Rational{Num: 30, Den: 1}})
			tp.Next(fr)
			srcs = append(srcs, fr)
		}
		for scene := 0; scene < 12; scene++ {
			var layers []Layer
			for l := 0; l < 1+rng.Intn(5); l++ {
				src := srcs[rng.Intn(len(srcs))]
				layer := Layer{Frame: src, Fit: frame.Fit(rng.Intn(3)), Opacity: []float64{1, 1, 0.5, 0.8}[rng.Intn(4)], Z: rng.Intn(3),
					Rect: frame.Rect{X: rng.Intn(1400) - 200, Y: rng.Intn(800) - 100, W: 100 + rng.Intn(1200), H: 60 + rng.Intn(700)}}
				if rng.Intn(3) == 0 {
					layer.Crop = frame.Rect{X: rng.Intn(src.Width / 2), Y: rng.Intn(src.Height / 2), W: src.Width / 3, H: src.Height / 3}
				}
				layers = append(layers, layer)
			}
			want, _ := frame.New(f, 1280, 720)
			if err := NewCompositor().Render(want, layers); err != nil {
				t.Fatal(err)
			}
			for n := 1; n <= 5; n++ {
				p := NewParallel(n)
				got, _ := frame.New(f, 1280, 720)
				got.FillRect(0, 0, 1280, 720, 1000, 1000, 1000) // garbage that every band must overwrite
				if err := p.Render(got, layers); err != nil {
					t.Fatal(err)
				}
				p.Close()
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("%v scene %d in %d bands differs from one compositor", f, scene, n)
				}
			}
		}
	}
}

// BenchmarkParallel1080p: the 1080p four-layer scene of BenchmarkComposite
// drawn in one, two and four bands.
func BenchmarkParallel1080p(b *testing.B) {
	src, _ := frame.New(frame.NV12, 1920, 1080)
	tp, _ := media.NewTestPattern(media.TestPatternConfig{ID: "s", Width: 1920, Height: 1080, Rate: frame.Rational{Num: 30, Den: 1}})
	tp.Next(src)
	layers := []Layer{
		{Frame: src, Rect: frame.Rect{X: 0, Y: 0, W: 960, H: 540}, Opacity: 1},
		{Frame: src, Rect: frame.Rect{X: 960, Y: 0, W: 960, H: 540}, Opacity: 1},
		{Frame: src, Rect: frame.Rect{X: 0, Y: 540, W: 960, H: 540}, Opacity: 1},
		{Frame: src, Rect: frame.Rect{X: 960, Y: 540, W: 960, H: 540}, Fit: frame.Contain, Opacity: 0.5},
	}
	for _, n := range []int{1, 2, 4} {
		b.Run(map[int]string{1: "bands=1", 2: "bands=2", 4: "bands=4"}[n], func(b *testing.B) {
			p := NewParallel(n)
			defer p.Close()
			dst, _ := frame.New(frame.NV12, 1920, 1080)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p.Render(dst, layers)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/frame")
		})
	}
}
