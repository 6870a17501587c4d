package cpu

import (
	"bytes"
	"math/rand/v2"
	"slices"
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

// TestRowSumsVecMatchGo: the exact shrinks' row sums over bytes give the
// same values with the vector code (AVX2 where the CPU has it) as with
// the plain loops, for random rows of every length up to 70 (odd ones,
// and tails after the multiples of 8), the carried sums too.
func TestRowSumsVecMatchGo(t *testing.T) {
	if !haveAVX2 {
		t.Log("no vector code on this CPU: the loops are compared with themselves")
	}
	rng := rand.New(rand.NewPCG(29, 2))
	row := func(n int) []uint8 {
		r := make([]uint8, n+3) // longer than n: the functions stop at the first row's length
		for i := range r {
			r[i] = uint8(rng.Uint32())
		}
		return r
	}
	ints := func(n int) []int32 {
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(rng.Uint32() >> 12)
		}
		return v
	}
	eq := func(what string, n int, a, b []int32) {
		t.Helper()
		if !slices.Equal(a, b) {
			t.Fatalf("%s, %d samples: vector %v, loop %v", what, n, a, b)
		}
	}
	for n := 0; n <= 70; n++ {
		r := [4][]uint8{row(n)[:n], row(n), row(n), row(n)}
		c0 := ints(n)

		v1, v2 := make([]int32, n), make([]int32, n)
		rowSum4(v1, r[0], r[1], r[2], r[3], 0)
		sum4From(v2, r[0], r[1], r[2], r[3], 0, 0)
		eq("rowSum4", n, v1, v2)

		c1, c2 := make([]int32, n), make([]int32, n)
		rowHead2(c1, r[0], r[1], 0)
		head2From(c2, r[0], r[1], 0, 0)
		eq("rowHead2", n, c1, c2)

		c1, c2 = slices.Clone(c0), slices.Clone(c0)
		rowTail2(v1, c1, r[0], r[1], 0)
		tail2From(v2, c2, r[0], r[1], 0, 0)
		eq("rowTail2 sum", n, v1, v2)
		eq("rowTail2 carry", n, c1, c2)

		c1, c2 = slices.Clone(c0), slices.Clone(c0)
		rowTail4(v1, c1, r[0], r[1], r[2], r[3], 0)
		tail4From(v2, c2, r[0], r[1], r[2], r[3], 0, 0)
		eq("rowTail4 sum", n, v1, v2)
		eq("rowTail4 carry", n, c1, c2)
	}
}
