//go:build !amd64 || purego

package audio

import "math"

// Elsewhere truePeakOf's interpolator is its loop alone.
const haveAVX2 = false

func tpVec(buf []float64, c, n int) float64 { return 0 }

func kWeightVec(k *[Channels]kWeighting, piece []float32) (energy, peak float64) { return 0, 0 }

// absMax is the largest magnitude in x (0 for none).
func absMax(x []float64) float64 {
	var m float64
	for _, v := range x {
		if a := math.Abs(v); a > m {
			m = a
		}
	}
	return m
}
