//go:build amd64 && !purego

package audio

import (
	"math"
	"math/rand/v2"
	"testing"
)

// close says whether two readings agree bit for bit or, where the compiler
// fuses Go's multiply-adds (GOAMD64=v3) and the kernels do not, to 1e-12.
func close(got, want float64) bool {
	return math.Float64bits(got) == math.Float64bits(want) || math.Abs(got-want) <= 1e-12*math.Abs(want)
}

// The AVX2 interpolator gives truePeakOf's values (bit for bit where Go
// fuses nothing, the default GOAMD64=v1): over noise,
// a loud tone near full scale and a block with one spike (every window
// position, every length of the vector part, and peaks so far above and
// below what the block reaches).
func TestTruePeakVectorIsExact(t *testing.T) {
	if !haveAVX2 {
		t.Skip("this CPU has no AVX2")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	signals := map[string][]float64{}
	noise := make([]float64, 700)
	tone := make([]float64, 700)
	spike := make([]float64, 700)
	for i := range noise {
		noise[i] = rng.Float64()*2 - 1
		tone[i] = 0.89 * math.Sin(2*math.Pi*997*float64(i)/Rate+0.3)
	}
	spike[350] = -0.7
	signals["noise"], signals["tone"], signals["spike"] = noise, tone, spike
	defer func(v bool) { haveAVX2 = v }(haveAVX2)
	for name, sig := range signals {
		for n := tpTaps; n < len(sig); n += 37 {
			for _, above := range []float64{0, 0.1, 0.95} {
				buf := sig[len(sig)-n:]
				haveAVX2 = false
				want := truePeakOf(buf, above)
				haveAVX2 = true
				if got := truePeakOf(buf, above); !close(got, want) {
					t.Fatalf("%s, %d inputs, above %v: the vector interpolator reads %v, the loop %v", name, n, above, got, want)
				}
			}
		}
	}
}

// kWeightAVX gives kWeight's energy, peak and filter state, block after
// block (bit for bit), left and right different; the Go path's copies are
// the piece's samples.
func TestKWeightVectorIsExact(t *testing.T) {
	if !haveAVX2 {
		t.Skip("this CPU has no AVX2")
	}
	defer func(v bool) { haveAVX2 = v }(haveAVX2)
	rng := rand.New(rand.NewPCG(3, 4))
	var kGo, kVec [Channels]kWeighting
	for block, n := range []int{1, 7, 480, 1600, 0, 333} {
		piece := make([]float32, Channels*n)
		for i := range n {
			piece[2*i] = float32(rng.Float64()*2 - 1)
			piece[2*i+1] = float32(0.5 * math.Sin(float64(block*n+i)/7))
		}
		l, r := make([]float64, n), make([]float64, n)
		haveAVX2 = false
		e0, p0, copied0 := kWeightFrom(&kGo, piece, l, r)
		haveAVX2 = true
		e1, p1, copied1 := kWeightFrom(&kVec, piece, nil, nil)
		if !close(e1, e0) || p1 != p0 || !copied0 || copied1 {
			t.Fatalf("block %d (%d samples): the vector filter reads energy %v peak %v, the loop %v %v (copied: %v, %v)", block, n, e1, p1, e0, p0, copied1, copied0)
		}
		for i := range n {
			if l[i] != float64(piece[2*i]) || r[i] != float64(piece[2*i+1]) {
				t.Fatalf("block %d: sample %d copied as %v %v, the piece's %v %v", block, i, l[i], r[i], piece[2*i], piece[2*i+1])
			}
		}
		for c := range kGo {
			for i, v := range []float64{kGo[c].x1, kGo[c].x2, kGo[c].y1, kGo[c].y2, kGo[c].z1, kGo[c].z2} {
				w := []float64{kVec[c].x1, kVec[c].x2, kVec[c].y1, kVec[c].y2, kVec[c].z1, kVec[c].z2}[i]
				if !close(w, v) {
					t.Fatalf("block %d: channel %d's state %d is %v, the loop's %v", block, c, i, w, v)
				}
			}
		}
	}
}
