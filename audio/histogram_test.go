package audio

import (
	"math"
	"math/rand/v2"
	"testing"
)

// scanAbove is histogram.above by its definition: every bin from the
// threshold's up, one by one.
func scanAbove(h *histogram, threshold float64) (int64, float64) {
	var n int64
	var s float64
	for i := binOf(threshold); i < len(h.count); i++ {
		n += h.count[i]
		s += h.sum[i]
	}
	if n == 0 {
		return 0, 0
	}
	return n, s / float64(n)
}

// scanLRA is histogram.lra by its definition, bin by bin.
func scanLRA(h *histogram) float64 {
	n, z := scanAbove(h, histLow)
	if n == 0 {
		return 0
	}
	from := binOf(loudness(z) - 20)
	total, _ := scanAbove(h, loudness(z)-20)
	pct := func(q float64) float64 {
		want := int64(math.Ceil(q * float64(total)))
		var seen int64
		for i := from; i < len(h.count); i++ {
			seen += h.count[i]
			if seen >= want && h.count[i] > 0 {
				return histLow + (float64(i)+0.5)*histStep
			}
		}
		return histLow + float64(len(h.count))*histStep
	}
	return pct(0.95) - pct(0.10)
}

// The histogram's group totals give what scanning its bins one by one
// gives: the count above a gate exactly, the mean square to rounding (the
// sums are added in another order), the range's percentiles exactly; over
// programme-like spreads of blocks, a few blocks, one loud outlier, and
// blocks on the groups' edges.
func TestHistogramGroupsReadAsTheBins(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fills := map[string][]float64{
		"empty":      nil,
		"one":        {-23},
		"edges":      {-70 + histGroup*histStep, -70 + 2*histGroup*histStep - 1e-9, -50, -50 + 1e-9, 9.999},
		"outlier":    {-60, -59.5, -61, -3},
		"programme":  nil,
		"wide":       nil,
		"under gate": {-75, -80, -71},
	}
	for range 3000 {
		fills["programme"] = append(fills["programme"], -23+6*rng.NormFloat64())
	}
	for range 500 {
		fills["wide"] = append(fills["wide"], -70+80*rng.Float64())
	}
	for name, ls := range fills {
		var h histogram
		for _, l := range ls {
			h.add(math.Pow(10, (l+0.691)/10))
		}
		for _, th := range []float64{histLow, -60, -45.005, -23, -20 + 1e-7, 0, 10, 20} {
			n, z := h.above(th)
			wn, wz := scanAbove(&h, th)
			if n != wn || math.Abs(z-wz) > 1e-12*wz {
				t.Errorf("%s: above %v LUFS: %d blocks of mean square %v, the bins %d of %v", name, th, n, z, wn, wz)
			}
		}
		if got, want := h.lra(), scanLRA(&h); got != want {
			t.Errorf("%s: loudness range %v LU, the bins %v", name, got, want)
		}
	}
}
