package frame

import (
	"math"
	"testing"
)

// TestKeyIsPremultipliedOver checks the integer key against the real
// arithmetic it stands for, over every alpha and opacity step and a spread
// of values: a straight colour c at alpha a, stored premultiplied over
// black, keyed with opacity o over d, lands at d·(1 − o·a) + c·o·a within
// the rounding of its three steps (the stored value: half a step; the
// weight, in 256ths: half of (d − black)/256; the result: half a step); a
// transparent pixel leaves d exactly and an opaque one is the plain
// opacity blend.
func TestKeyIsPremultipliedOver(t *testing.T) {
	for _, bits := range []int{8, 10} {
		maxv := int32(1)<<bits - 1
		black := int32(16) << (bits - 8)
		for o := int32(0); o <= 256; o += 8 {
			for a := int32(0); a <= 255; a++ {
				e := KeyAlpha(o, a)
				for _, c := range []int32{black, 40 << (bits - 8), 128 << (bits - 8), 235 << (bits - 8)} {
					v := int32(math.Round(float64(black) + float64(a)/255*float64(c-black))) // premultiplied over black
					for _, d := range []int32{black, 90 << (bits - 8), 200 << (bits - 8)} {
						got := Key(v, d, black, o, e, maxv)
						w := float64(o) / 256 * float64(a) / 255
						want := float64(d)*(1-w) + float64(c)*w
						if tol := 1 + 0.5*math.Abs(float64(d-black))/256; math.Abs(float64(got)-want) > tol+1e-9 {
							t.Fatalf("%d bits: c %d at alpha %d, opacity %d/256 over %d: %d, want %.2f", bits, c, a, o, d, got, want)
						}
						if a == 0 && got != d {
							t.Fatalf("%d bits: a transparent pixel over %d made it %d", bits, d, got)
						}
						if a == Opaque && got != (v*o+d*(256-o)+128)>>8 {
							t.Fatalf("%d bits: an opaque pixel is not the opacity blend", bits)
						}
					}
				}
			}
		}
	}
}

func TestQuadAlphaIsTheRoundedMean(t *testing.T) {
	for _, c := range []struct{ a, b, c, d, want int32 }{
		{0, 0, 0, 0, 0}, {255, 255, 255, 255, 255}, {0, 255, 0, 255, 128}, {1, 1, 1, 2, 1}, {1, 2, 2, 2, 2}, {0, 0, 0, 255, 64},
	} {
		if got := QuadAlpha(c.a, c.b, c.c, c.d); got != c.want {
			t.Errorf("QuadAlpha(%d, %d, %d, %d) = %d, want %d", c.a, c.b, c.c, c.d, got, c.want)
		}
	}
}

// TestAlphaPlanes: only frames that ask for an alpha plane have one; it
// survives a pool's recycling, CopyFrom carries it (or makes it opaque),
// and Fill makes it opaque.
func TestAlphaPlanes(t *testing.T) {
	plain, _ := NewPool(NV12, 8, 4, 0)
	keyed, _ := NewAlphaPool(P010, 8, 4, 0)
	p, _ := plain.Get()
	k, _ := keyed.Get()
	if p.Alpha != nil || len(k.Alpha) != AlphaSize(8, 4) || plain.HasAlpha() || !keyed.HasAlpha() {
		t.Fatalf("alpha planes of %d and %d bytes", len(p.Alpha), len(k.Alpha))
	}
	if len(k.Bytes()) != P010.Size(8, 4) {
		t.Errorf("a keyed frame's Bytes are %d long, want the colour planes' %d", len(k.Bytes()), P010.Size(8, 4))
	}
	for i := range k.Alpha {
		k.Alpha[i] = byte(i)
	}
	k.Release()
	if k2, _ := keyed.Get(); k2 != k || k2.Alpha[5] != 5 {
		t.Errorf("the recycled frame lost its alpha plane")
	}
	other, _ := NewAlpha(P010, 8, 4)
	if other.Alpha[0] != Opaque {
		t.Errorf("NewAlpha's frame has alpha %d, want opaque", other.Alpha[0])
	}
	if err := other.CopyFrom(k); err != nil || other.Alpha[7] != 7 {
		t.Errorf("CopyFrom left alpha %d: %v", other.Alpha[7], err)
	}
	q, _ := New(P010, 8, 4)
	if err := other.CopyFrom(q); err != nil || other.Alpha[7] != Opaque {
		t.Errorf("a copy of a frame without alpha has alpha %d, want opaque", other.Alpha[7])
	}
	k.Fill()
	if k.Alpha[3] != Opaque {
		t.Errorf("Fill left alpha %d", k.Alpha[3])
	}
}
