package cuda

// The scaler's filters, built on the host and handed to the kernel as
// tables. They are the CPU scaler's (package cpu's newFilter and trim), step
// for step, so that the GPU's output matches the CPU's byte for byte: cuda
// may not import cpu, so the arithmetic is repeated here, and the tests
// compare the two compositors' pictures.

// coefBits is the fixed-point precision of the coefficients; the kernel
// keeps 6 fractional bits between its horizontal and vertical pass and
// rounds as the CPU does (compositor.h).
const coefBits = 12

// filter is a 1-D resampling filter: for destination position i, taps
// coefficients applied to source positions start[i]+k.
type filter struct {
	src, dst int
	taps     int
	start    []int32
	coef     []int32 // dst*taps, each group sums to 1<<coefBits
}

// newFilter builds the triangle filter that maps src samples onto dst with
// centre-aligned positions: two-tap interpolation when enlarging, a triangle
// widened by the ratio when shrinking; positions outside the source clamp to
// its edge. Then the taps that are zero everywhere are trimmed.
func newFilter(src, dst int) *filter {
	ratio := float64(src) / float64(dst)
	support := 1.0
	if ratio > 1 {
		support = ratio
	}
	taps := int(2*support) + 2
	if taps > src {
		taps = src
	}
	if taps < 1 {
		taps = 1
	}
	f := &filter{src: src, dst: dst, taps: taps, start: make([]int32, dst), coef: make([]int32, dst*taps)}
	w := make([]float64, taps)
	for i := 0; i < dst; i++ {
		center := (float64(i)+0.5)*ratio - 0.5
		first := int(center - support + 1)
		if float64(first) > center-support+1 { // int() truncates toward zero: floor it
			first--
		}
		if first+taps > src {
			first = src - taps
		}
		if first < 0 {
			first = 0
		}
		for k := range w {
			w[k] = 0
		}
		lo, hi := int(center-support)-1, int(center+support)+1
		var sum float64
		for s := lo; s <= hi; s++ {
			d := float64(s) - center
			if d < 0 {
				d = -d
			}
			wt := 1 - d/support
			if wt <= 0 {
				continue
			}
			k := min(max(s, 0), src-1) - first
			if k < 0 {
				k = 0
			} else if k >= taps {
				k = taps - 1
			}
			w[k] += wt
			sum += wt
		}
		f.start[i] = int32(first)
		var isum int32
		best := 0
		for k := range w {
			v := int32(w[k]/sum*(1<<coefBits) + 0.5)
			f.coef[i*taps+k] = v
			isum += v
			if w[k] > w[best] {
				best = k
			}
		}
		f.coef[i*taps+best] += (1 << coefBits) - isum
	}
	return f.trim()
}

// trim narrows the window to the widest span of taps that are non-zero at
// some position, each position's window starting at its first non-zero tap
// (kept inside the source).
func (f *filter) trim() *filter {
	width := 0
	firsts := make([]int, f.dst)
	for i := 0; i < f.dst; i++ {
		cf := f.coef[i*f.taps : (i+1)*f.taps]
		lo, hi := 0, len(cf)-1
		for lo < hi && cf[lo] == 0 {
			lo++
		}
		for hi > lo && cf[hi] == 0 {
			hi--
		}
		firsts[i] = lo
		width = max(width, hi-lo+1)
	}
	if width == f.taps {
		return f
	}
	n := &filter{src: f.src, dst: f.dst, taps: width, start: make([]int32, f.dst), coef: make([]int32, f.dst*width)}
	for i := 0; i < f.dst; i++ {
		st := int(f.start[i]) + firsts[i]
		lo := firsts[i]
		if st+width > f.src {
			d := st + width - f.src
			st -= d
			lo -= d
		}
		n.start[i] = int32(st)
		for k := 0; k < width; k++ {
			if o := lo + k; o >= 0 && o < f.taps {
				n.coef[i*width+k] = f.coef[i*f.taps+o]
			}
		}
	}
	return n
}

// filterKey is one scaling geometry: source window and destination sizes.
type filterKey struct{ sw, sh, dw, dh int }

// block lays out the four filters of a geometry (luma x, luma y, chroma x,
// chroma y) as the kernel reads them: 4 tap counts, 4 start offsets, 4
// coefficient offsets, then the arrays (compositor.h).
func (k filterKey) block() []int32 {
	fs := [4]*filter{newFilter(k.sw, k.dw), newFilter(k.sh, k.dh), newFilter(k.sw/2, k.dw/2), newFilter(k.sh/2, k.dh/2)}
	n := 12
	for _, f := range fs {
		n += len(f.start) + len(f.coef)
	}
	b := make([]int32, 12, n)
	for i, f := range fs {
		b[i] = int32(f.taps)
		b[4+i] = int32(len(b))
		b = append(b, f.start...)
		b[8+i] = int32(len(b))
		b = append(b, f.coef...)
	}
	return b
}
