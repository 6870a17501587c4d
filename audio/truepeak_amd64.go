//go:build amd64 && !purego

package audio

import (
	"math"

	"golang.org/x/sys/cpu"
)

// truePeakOf's interpolator and K-weighting in AVX2 and FMA
// (truepeak_amd64.s), where the CPU has both; truepeak_other.go is the rest
// of the world's.
var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func tpPeak4AVX2(w *float64, n int, coef *[tpCoefs]float64, out *[4]float64)

// tpVec interpolates the windows buf[c:c+n] (n a multiple of 4) and
// returns the largest magnitude among their phases 1-3.
func tpVec(buf []float64, c, n int) float64 {
	var out [4]float64
	_ = buf[c+n-1+tpTaps-1] // every window's last input is in buf
	tpPeak4AVX2(&buf[c], n, &tpCoef, &out)
	return max(out[0], out[1], out[2], out[3])
}

//go:noescape
func kWeightAVX(k *[Channels]kWeighting, src *float32, n int, c *[16]float64, out *[3]float64)

// kwCoef are kWeight's coefficients for kWeightAVX, each twice (a lane a
// channel), then the mask that clears a float64's sign.
var kwCoef = func() (c [16]float64) {
	for i, v := range [...]float64{kwB0, kwB1, kwB2, kwA2, kwA1, kwC2, kwC1, math.Float64frombits(1<<63 - 1)} {
		c[2*i], c[2*i+1] = v, v
	}
	return
}()

// kWeightVec is kWeightFrom in kWeightAVX: the piece filtered where it
// lies, nothing copied.
func kWeightVec(k *[Channels]kWeighting, piece []float32) (energy, peak float64) {
	n := len(piece) / Channels
	if n == 0 {
		return 0, 0
	}
	var out [3]float64
	kWeightAVX(k, &piece[0], n, &kwCoef, &out)
	return out[0], max(out[1], out[2])
}

//go:noescape
func absMaxAVX2(p *float64, n int, c *float64) float64

// absMax is the largest magnitude in x (0 for none; a NaN is passed
// over, as a loop of comparisons does).
func absMax(x []float64) float64 {
	var m float64
	n4 := len(x) &^ 3
	if haveAVX2 && n4 > 0 {
		m = absMaxAVX2(&x[0], n4, &tpCoef[tpCoefs-1])
		x = x[n4:]
	}
	for _, v := range x {
		if a := math.Abs(v); a > m {
			m = a
		}
	}
	return m
}
