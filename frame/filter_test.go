package frame

import "testing"

// dense is the weight filter f gives each source sample at destination
// position First+i.
func dense(f *Filter, i int) []int32 {
	w := make([]int32, f.Src)
	for k := 0; k < f.Taps; k++ {
		w[int(f.Start[i])+k] += f.Coef[i*f.Taps+k]
	}
	return w
}

// A part of a filter weighs every source sample as the whole filter does
// at each position it holds, enlarging and shrinking, at the edges and
// inside: a compositor that builds only the visible part draws the same
// bytes.
func TestFilterPartIsTheWholeFilters(t *testing.T) {
	for _, c := range []struct{ src, dst, lo, hi int }{
		{160, 640, 0, 64}, {160, 640, 100, 164}, {160, 640, 576, 640},
		{640, 90, 0, 32}, {640, 90, 40, 90}, {1920, 7, 3, 5},
		{90, 2000, 1000, 1002}, {2, 500, 250, 300}, {1, 10, 0, 10},
	} {
		whole, part := NewFilter(c.src, c.dst), NewFilterPart(c.src, c.dst, c.lo, c.hi)
		if part.First != c.lo || len(part.Start) != c.hi-c.lo || len(part.Coef) != len(part.Start)*part.Taps {
			t.Fatalf("%+v: First %d, %d positions, %d coefficients", c, part.First, len(part.Start), len(part.Coef))
		}
		for i := c.lo; i < c.hi; i++ {
			a, b := dense(whole, i), dense(part, i-c.lo)
			for s := range a {
				if a[s] != b[s] {
					t.Fatalf("%+v: position %d, source %d: the part weighs %d, the whole filter %d", c, i, s, b[s], a[s])
				}
			}
		}
	}
	// The positions of a layer 2^30 wide on a 640-pixel canvas: 640 of
	// them, built at once.
	if f := NewFilterPart(640, 1<<30, 1<<29, 1<<29+640); len(f.Start) != 640 {
		t.Fatalf("%d positions", len(f.Start))
	}
}
