package cpu

import (
	"github.com/onairhq/onair/nodes/media"
	"math/rand"
	"testing"

	"github.com/onairhq/onair/frame"
)

// TestRenderRandomGeometryNeverPanics draws layers of random sizes, crops,
// rectangles (partly or wholly off the canvas, tiny or huge), fits and
// opacities, and checks that nothing panics and the canvas stays black
// outside the union of the layer rectangles.
func TestRenderRandomGeometryNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	c := NewCompositor()
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		dst, _ := frame.New(f, 96, 64)
		srcs := map[[2]int]*frame.Frame{}
		for i := 0; i < 400; i++ {
			var layers []Layer
			for k := 0; k < 1+rng.Intn(3); k++ {
				sw, sh := 2+2*rng.Intn(100), 2+2*rng.Intn(60)
				src := srcs[[2]int{sw, sh}]
				if src == nil {
					src, _ = frame.New(f, sw, sh)
					media.Draw(src, media.Checker, int64(i), [3]uint8{}, nil)
					srcs[[2]int{sw, sh}] = src
				}
				layers = append(layers, Layer{
					Frame:   src,
					Rect:    frame.Rect{X: rng.Intn(300) - 150, Y: rng.Intn(200) - 100, W: rng.Intn(400) - 10, H: rng.Intn(300) - 10},
					Crop:    frame.Rect{X: rng.Intn(sw+20) - 10, Y: rng.Intn(sh+20) - 10, W: rng.Intn(sw + 10), H: rng.Intn(sh + 10)},
					Fit:     frame.Fit(rng.Intn(3)),
					Opacity: rng.Float64()*1.4 - 0.2,
					Z:       rng.Intn(3),
				})
			}
			if err := c.Render(dst, layers); err != nil {
				t.Fatal(err)
			}
			// Outside every layer's rectangle the canvas is black.
			for y := 0; y < 64; y += 7 {
			next:
				for x := 0; x < 96; x += 5 {
					for _, l := range layers {
						r := l.Rect.Even()
						if x >= r.X && x < r.X+r.W && y >= r.Y && y < r.Y+r.H {
							continue next
						}
					}
					want := 16
					if f == frame.P010 {
						want = 64
					}
					if got := luma(dst, x, y); got != want {
						t.Fatalf("%v case %d: Y(%d,%d) = %d outside every layer (%+v)", f, i, x, y, got, layers)
					}
				}
			}
		}
	}
}

// TestRenderHugeRandomGeometry is the same with rects up to 2^40 pixels
// (issue 27: tables sized by the whole rect ran the show out of memory),
// far past what the geometry limits let a show write: each draw is still
// cheap, because only the part on the canvas is built, and a layer draws
// nothing where it is not.
func TestRenderHugeRandomGeometry(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	c := NewCompositor()
	dst, _ := frame.New(frame.NV12, 96, 64)
	src, _ := frame.New(frame.NV12, 80, 46)
	media.Draw(src, media.Checker, 1, [3]uint8{}, nil)
	for i := 0; i < 300; i++ {
		big := func() int { return rng.Intn(1 << uint(10+rng.Intn(31))) }
		r := frame.Rect{X: 96 - big(), Y: 64 - big(), W: 2 + big(), H: 2 + big()}
		l := Layer{Frame: src, Rect: r, Fit: frame.Fit(rng.Intn(3)), Opacity: 0.25 + rng.Float64()}
		if err := c.Render(dst, []Layer{l}); err != nil {
			t.Fatal(err)
		}
		for _, s := range c.scalers {
			if len(s.lx.Start) > 96 || len(s.ly.Start) > 64 {
				t.Fatalf("case %d, rect %+v: filters of %d×%d positions on a 96x64 canvas", i, r, len(s.lx.Start), len(s.ly.Start))
			}
		}
	}
}
