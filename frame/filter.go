package frame

// The scaler's filters. The CPU compositor runs them and the GPU's kernel
// reads them as tables: one definition, so that the two draw the same
// bytes.

// CoefBits is the fixed-point precision of filter coefficients.
const CoefBits = 12

// Filter is a precomputed 1-D resampling filter: for each destination
// position First+i, Taps coefficients applied to source positions
// Start[i]+k. A filter holds the positions a compositor draws, not
// necessarily all Dst of them (NewFilterPart).
type Filter struct {
	Src, Dst int
	First    int // the first destination position held
	Taps     int
	Start    []int32 // one per position held
	Coef     []int32 // len(Start)*Taps, each group sums to 1<<CoefBits
}

// NewFilter builds the bilinear (triangle) filter that maps src samples onto
// dst samples with centre-aligned sample positions, as ffmpeg's
// scale=flags=bilinear does: a plain two-tap interpolation when enlarging and
// a triangle widened by the ratio when shrinking, so that shrinking averages
// rather than aliases. Positions outside the source clamp to its edge.
func NewFilter(src, dst int) *Filter { return NewFilterPart(src, dst, 0, dst) }

// NewFilterPart is NewFilter's positions [lo, hi) only, the same
// coefficients for each: what a compositor needs of a layer larger than
// the canvas or partly off it, whose tables then cost what is visible
// however large the layer (0 <= lo < hi <= dst).
func NewFilterPart(src, dst, lo, hi int) *Filter {
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
	n := hi - lo
	f := &Filter{Src: src, Dst: dst, First: lo, Taps: taps, Start: make([]int32, n), Coef: make([]int32, n*taps)}
	w := make([]float64, taps)
	for i := 0; i < n; i++ {
		center := (float64(lo+i)+0.5)*ratio - 0.5
		first := int(center - support + 1) // floor for positive; fixed below
		if float64(first) > center-support+1 {
			first--
		}
		if first+taps > src {
			first = src - taps
		}
		if first < 0 {
			first = 0
		}
		// Accumulate triangle weights of every source sample in reach onto
		// the clamped window [first, first+taps).
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
			c := min(max(s, 0), src-1)
			k := c - first
			if k < 0 {
				k = 0
			} else if k >= taps {
				k = taps - 1
			}
			w[k] += wt
			sum += wt
		}
		f.Start[i] = int32(first)
		var isum int32
		best := 0
		for k := range w {
			v := int32(w[k]/sum*(1<<CoefBits) + 0.5)
			f.Coef[i*taps+k] = v
			isum += v
			if w[k] > w[best] {
				best = k
			}
		}
		f.Coef[i*taps+best] += (1 << CoefBits) - isum
	}
	return f.trim()
}

// trim drops the leading and trailing taps that are zero for every
// position, so the inner loops do no useless multiplies.
func (f *Filter) trim() *Filter {
	// Per position, shift the window so it starts at its first non-zero tap,
	// then keep the widest span of non-zero taps.
	width := 0
	n := len(f.Start)
	firsts := make([]int, n)
	for i := 0; i < n; i++ {
		cf := f.Coef[i*f.Taps : (i+1)*f.Taps]
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
	if width == f.Taps {
		return f
	}
	t := &Filter{Src: f.Src, Dst: f.Dst, First: f.First, Taps: width, Start: make([]int32, n), Coef: make([]int32, n*width)}
	for i := 0; i < n; i++ {
		st := int(f.Start[i]) + firsts[i]
		lo := firsts[i]
		if st+width > f.Src { // keep the window inside the source
			d := st + width - f.Src
			st -= d
			lo -= d
		}
		t.Start[i] = int32(st)
		for k := 0; k < width; k++ {
			if o := lo + k; o >= 0 && o < f.Taps {
				t.Coef[i*width+k] = f.Coef[i*f.Taps+o]
			}
		}
	}
	return t
}
