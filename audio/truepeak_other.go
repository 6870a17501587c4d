//go:build !amd64 || purego

package audio

// Elsewhere truePeakOf's interpolator is its loop alone.
const haveAVX2 = false

func tpVec(buf []float64, c, n int) float64 { return 0 }

func kWeightVec(k *[Channels]kWeighting, l, r []float64) (energy, peak float64, ok bool) {
	return 0, 0, false
}
