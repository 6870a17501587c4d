package cpu

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/onairhq/onair/frame"
)

// noise is a frame of random samples (every bit of a P010 word random
// too, as a careless producer might leave them).
func noise(t testing.TB, f frame.Format, w, h int, rng *rand.Rand) *frame.Frame {
	t.Helper()
	fr, err := frame.New(f, w, h)
	if err != nil {
		t.Fatal(err)
	}
	for p := range fr.Data {
		for i := range fr.Data[p] {
			fr.Data[p][i] = byte(rng.Uint32())
		}
	}
	return fr
}

// TestShrinkMatchesGeneral: the exact 2:1 and 4:1 shrinks' fast path
// draws the bytes the general two-pass filter draws, for layers placed
// anywhere (partly off the canvas, cropped, at odd even offsets), blended
// or opaque, in NV12 and P010, whole canvases and bands.
func TestShrinkMatchesGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	fastCases := 0
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		for it := 0; it < 60; it++ {
			cw, ch := 2*(8+rng.IntN(100)), 2*(8+rng.IntN(60))
			var layers []Layer
			for k := 0; k < 1+rng.IntN(3); k++ {
				r := []int{2, 4}[rng.IntN(2)]
				dw, dh := 2*(1+rng.IntN(60)), 2*(1+rng.IntN(40))
				src := noise(t, f, 2*(dw*r/2+rng.IntN(8)), 2*(dh*r/2+rng.IntN(8)), rng)
				crop := frame.Rect{X: 2 * rng.IntN((src.Width-dw*r)/2+1), Y: 2 * rng.IntN((src.Height-dh*r)/2+1), W: dw * r, H: dh * r}
				op := 1.0
				if rng.IntN(3) == 0 {
					op = rng.Float64()
				}
				layers = append(layers, Layer{
					Frame: src, Crop: crop, Opacity: op, Z: rng.IntN(3),
					Rect: frame.Rect{X: 2 * (rng.IntN(cw/2+dw) - dw/2), Y: 2 * (rng.IntN(ch/2+dh) - dh/2), W: dw, H: dh},
				})
			}
			fast, _ := frame.New(f, cw, ch)
			c := NewCompositor()
			if err := c.Render(fast, layers); err != nil {
				t.Fatal(err)
			}
			used := false
			for _, s := range c.scalers {
				used = used || s.lxs.r != 0 && s.lys.r != 0
				s.lxs, s.lys, s.cxs, s.cys = shrink{}, shrink{}, shrink{}, shrink{}
			}
			general, _ := frame.New(f, cw, ch)
			if err := c.Render(general, layers); err != nil {
				t.Fatal(err)
			}
			if used {
				fastCases++
			}
			for p := range fast.Data {
				if !bytes.Equal(fast.Data[p], general.Data[p]) {
					t.Fatalf("%v case %d (%dx%d canvas, layers %+v): plane %d differs from the general path", f, it, cw, ch, layers, p)
				}
			}
			// Bands of the fast path: the same canvas again.
			pa := NewParallel(1 + rng.IntN(4))
			banded, _ := frame.New(f, cw, ch)
			err := pa.Render(banded, layers)
			pa.Close()
			if err != nil {
				t.Fatal(err)
			}
			for p := range fast.Data {
				if !bytes.Equal(fast.Data[p], banded.Data[p]) {
					t.Fatalf("%v case %d: plane %d in bands differs", f, it, p)
				}
			}
		}
	}
	if fastCases < 60 {
		t.Errorf("only %d of 120 cases had a layer on the fast path", fastCases)
	}
}
