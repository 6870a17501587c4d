package cpu

import (
	"unsafe"

	"github.com/onairhq/onair/frame"
)

// The exact 2:1 and 4:1 shrinks (a grid's cells): away from the edges
// their filters are one fixed set of taps, the triangle frame.NewFilter
// builds for the ratio, whose 12-bit coefficients are exact (4096/8 and
// 4096/32 times the integer weights 1 3 3 1 and 1 3 5 7 7 5 3 1). The
// general path's two rounded passes then reduce to one integer sum
// rounded once: for 2:1 the horizontal pass stores exactly 8 times the
// weighted sum S of a row (512·S + 32 >> 6), and the vertical pass
// returns (2^17 + 4096·T) >> 18 = (T + 32) >> 6 for T the 4×4 weighted
// sum; for 4:1, 2·S and (T + 512) >> 10. Integer sums commute, so the
// fast path adds the source rows first (a plain element-wise loop over
// the row, channels and all) and then across, and draws the same bytes
// as the general path (TestShrinkMatchesGeneral).

// shrink is a filter's run of positions [lo, hi) (indices into its
// Start) that are the exact r:1 shrink's; r is 0 where there is none.
type shrink struct{ r, lo, hi int }

// shrinkCoefs are the interior coefficients of frame.NewFilter(r·n, n).
var shrinkCoefs = map[int][]int32{
	2: {512, 1536, 1536, 512},
	4: {128, 384, 640, 896, 896, 640, 384, 128},
}

// findShrink returns f's longest run of exact-shrink positions.
func findShrink(f *frame.Filter) shrink {
	for _, r := range []int{2, 4} {
		w := shrinkCoefs[r]
		if f.Src != r*f.Dst || f.Taps < len(w) {
			continue
		}
		best, lo := shrink{}, -1
		for i := 0; i <= len(f.Start); i++ {
			if i < len(f.Start) && isShrink(f, i, r, w) {
				if lo < 0 {
					lo = i
				}
				continue
			}
			if lo >= 0 && i-lo > best.hi-best.lo {
				best = shrink{r, lo, i}
			}
			lo = -1
		}
		return best
	}
	return shrink{}
}

func isShrink(f *frame.Filter, i, r int, w []int32) bool {
	if int(f.Start[i]) != r*(f.First+i)-r/2 {
		return false
	}
	cf := f.Coef[i*f.Taps : (i+1)*f.Taps]
	for k, c := range cf {
		if k < len(w) && c != w[k] || k >= len(w) && c != 0 {
			return false
		}
	}
	return true
}

// runShrink draws the destination columns [ix0, ix1) and rows [iy0, iy1),
// all inside both filters' exact runs: per row, the 2r source rows summed
// with their weights into tmp, then each output the weighted sum of 2r of
// those across, rounded, blended and stored.
func (j *planeJob[T]) runShrink(tmp []int32, ix0, ix1, iy0, iy1 int) []int32 {
	r, ch, shift := j.rx.r, j.ch, j.shift
	cnt := ix1 - ix0
	n := (r*cnt + r) * ch
	if cap(tmp) < 2*n {
		tmp = make([]int32, 2*n)
	}
	// A row of output sums the 2r source rows from Start[y]; the next
	// row's starts r further on, so each half is shared by two output
	// rows: with weights w (first half) and their reverse (second), the
	// second half's sum under w is 2r times its plain sum less its sum
	// under the reverse, carried from row to row.
	v, carry := tmp[:n], tmp[n:2*n]
	sx := (j.sx0 + int(j.fx.Start[ix0])) * ch
	a, na := j.alpha, 256-j.alpha
	for y := iy0; y < iy1; y++ {
		o := (j.sy0+int(j.fy.Start[y]))*j.srcPitch + sx
		p := j.srcPitch
		if r == 2 {
			if y == iy0 {
				rowHead2(carry, j.src[o:o+n], j.src[o+p:o+p+n], shift)
			}
			o += 2 * p
			rowTail2(v, carry, j.src[o:o+n], j.src[o+p:o+p+n], shift)
		} else {
			if y == iy0 {
				rowSum4(carry, j.src[o:o+n], j.src[o+p:o+p+n], j.src[o+2*p:o+2*p+n], j.src[o+3*p:o+3*p+n], shift)
			}
			o += 4 * p
			rowTail4(v, carry, j.src[o:o+n], j.src[o+p:o+p+n], j.src[o+2*p:o+2*p+n], j.src[o+3*p:o+3*p+n], shift)
		}
		drow := j.dst[(j.dy0+y)*j.dstPitch+(j.dx0+ix0)*ch:]
		drow = drow[:cnt*ch]
		done := 0 // the bytes drawn by the vector code
		if a == 256 && unsafe.Sizeof(drow[0]) == 1 {
			if r == 2 {
				done = vecAcross2(asBytes(drow), v, ch)
			} else if ch == 1 {
				done = vecAcross4(asBytes(drow), v)
			}
		}
		switch {
		case r == 2 && ch == 1:
			for i := done; i < len(drow); i++ {
				w := v[2*i : 2*i+4 : 2*i+4]
				drow[i] = j.out((w[0]+3*(w[1]+w[2])+w[3]+32)>>6, drow[i], a, na)
			}
		case r == 2:
			for i := done; i+1 < len(drow); i += 2 {
				w := v[2*i : 2*i+8 : 2*i+8]
				drow[i] = j.out((w[0]+3*(w[2]+w[4])+w[6]+32)>>6, drow[i], a, na)
				drow[i+1] = j.out((w[1]+3*(w[3]+w[5])+w[7]+32)>>6, drow[i+1], a, na)
			}
		case ch == 1:
			for i := done; i < len(drow); i++ {
				w := v[4*i : 4*i+8 : 4*i+8]
				drow[i] = j.out((w[0]+w[7]+3*(w[1]+w[6])+5*(w[2]+w[5])+7*(w[3]+w[4])+512)>>10, drow[i], a, na)
			}
		default:
			for i := 0; i+1 < len(drow); i += 2 {
				w := v[4*i : 4*i+16 : 4*i+16]
				drow[i] = j.out((w[0]+w[14]+3*(w[2]+w[12])+5*(w[4]+w[10])+7*(w[6]+w[8])+512)>>10, drow[i], a, na)
				drow[i+1] = j.out((w[1]+w[15]+3*(w[3]+w[13])+5*(w[5]+w[11])+7*(w[7]+w[9])+512)>>10, drow[i+1], a, na)
			}
		}
	}
	return tmp
}

// out stores value v (never out of range: the weights are positive and
// sum to one) blended over d with alpha a (256 opaque), as the general
// path does.
func (j *planeJob[T]) out(v int32, d T, a, na int32) T {
	if a < 256 {
		v = (v*a + (int32(d)>>j.shift)*na + 128) >> 8
	}
	return T(v << j.shift)
}

// The row sums below run over the whole rows of the window, channels
// and all; for bytes their leading multiple of 8 goes to the vec
// functions (AVX2 on amd64, shrink_amd64.s), the rest, and every P010
// row, to the loops of the From functions, which start at sample from.
// Integer sums: both give the same values (TestRowSumsVecMatchGo).

// asBytes is s as bytes, for T of one byte.
func asBytes[T sample](s []T) []uint8 {
	return unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// rowSum4 is the 4:1 shrink's first four rows, weights 1 3 5 7 …
func rowSum4[T sample](v []int32, r0, r1, r2, r3 []T, shift uint) {
	r1, r2, r3, v = r1[:len(r0)], r2[:len(r0)], r3[:len(r0)], v[:len(r0)]
	from := 0
	if unsafe.Sizeof(r0[0]) == 1 {
		from = vecSum4(v, asBytes(r0), asBytes(r1), asBytes(r2), asBytes(r3))
	}
	sum4From(v, r0, r1, r2, r3, shift, from)
}

func sum4From[T sample](v []int32, r0, r1, r2, r3 []T, shift uint, from int) {
	r0, r1, r2, r3, v = r0[from:], r1[from:len(r0)], r2[from:len(r0)], r3[from:len(r0)], v[from:len(r0)]
	if shift == 6 {
		for e := range r0 {
			v[e] = int32(r0[e]>>6) + 3*int32(r1[e]>>6) + 5*int32(r2[e]>>6) + 7*int32(r3[e]>>6)
		}
		return
	}
	for e := range r0 {
		v[e] = int32(r0[e]) + 3*int32(r1[e]) + 5*int32(r2[e]) + 7*int32(r3[e])
	}
}

// rowHead2 is the first half of a 2:1 output row, weights 1 3.
func rowHead2[T sample](c []int32, r0, r1 []T, shift uint) {
	r1, c = r1[:len(r0)], c[:len(r0)]
	from := 0
	if unsafe.Sizeof(r0[0]) == 1 {
		from = vecHead2(c, asBytes(r0), asBytes(r1))
	}
	head2From(c, r0, r1, shift, from)
}

func head2From[T sample](c []int32, r0, r1 []T, shift uint, from int) {
	r0, r1, c = r0[from:], r1[from:len(r0)], c[from:len(r0)]
	if shift == 6 {
		for e := range r0 {
			c[e] = int32(r0[e]>>6) + 3*int32(r1[e]>>6)
		}
		return
	}
	for e := range r0 {
		c[e] = int32(r0[e]) + 3*int32(r1[e])
	}
}

// rowTail2 adds the second half (3 1) to the carried first into v and
// carries these rows' sum under 1 3 on.
func rowTail2[T sample](v, c []int32, r2, r3 []T, shift uint) {
	r3, v, c = r3[:len(r2)], v[:len(r2)], c[:len(r2)]
	from := 0
	if unsafe.Sizeof(r2[0]) == 1 {
		from = vecTail2(v, c, asBytes(r2), asBytes(r3))
	}
	tail2From(v, c, r2, r3, shift, from)
}

func tail2From[T sample](v, c []int32, r2, r3 []T, shift uint, from int) {
	r2, r3, v, c = r2[from:], r3[from:len(r2)], v[from:len(r2)], c[from:len(r2)]
	if shift == 6 {
		for e := range r2 {
			a, b := int32(r2[e]>>6), int32(r3[e]>>6)
			t := 3*a + b
			v[e] = c[e] + t
			c[e] = 4*(a+b) - t
		}
		return
	}
	for e := range r2 {
		a, b := int32(r2[e]), int32(r3[e])
		t := 3*a + b
		v[e] = c[e] + t
		c[e] = 4*(a+b) - t
	}
}

// rowTail4 is rowTail2's 4:1 (7 5 3 1, carried as 1 3 5 7).
func rowTail4[T sample](v, c []int32, r4, r5, r6, r7 []T, shift uint) {
	r5, r6, r7, v, c = r5[:len(r4)], r6[:len(r4)], r7[:len(r4)], v[:len(r4)], c[:len(r4)]
	from := 0
	if unsafe.Sizeof(r4[0]) == 1 {
		from = vecTail4(v, c, asBytes(r4), asBytes(r5), asBytes(r6), asBytes(r7))
	}
	tail4From(v, c, r4, r5, r6, r7, shift, from)
}

func tail4From[T sample](v, c []int32, r4, r5, r6, r7 []T, shift uint, from int) {
	r4, r5, r6, r7, v, c = r4[from:], r5[from:len(r4)], r6[from:len(r4)], r7[from:len(r4)], v[from:len(r4)], c[from:len(r4)]
	if shift == 6 {
		for e := range r4 {
			a, b, d, f := int32(r4[e]>>6), int32(r5[e]>>6), int32(r6[e]>>6), int32(r7[e]>>6)
			t := 7*a + 5*b + 3*d + f
			v[e] = c[e] + t
			c[e] = 8*(a+b+d+f) - t
		}
		return
	}
	for e := range r4 {
		a, b, d, f := int32(r4[e]), int32(r5[e]), int32(r6[e]), int32(r7[e])
		t := 7*a + 5*b + 3*d + f
		v[e] = c[e] + t
		c[e] = 8*(a+b+d+f) - t
	}
}
