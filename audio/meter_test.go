package audio

import (
	"math"
	"math/rand/v2"
	"testing"
)

// directTruePeak is the true peak by the definition: every input followed
// by its four phases' outputs, each phase's taps multiplied out one by one
// (inputs before the first are 0), the largest magnitude of all, in dBTP.
func directTruePeak(signal []float32) float64 {
	var peak float64
	for ch := range Channels {
		x := func(n int) float64 {
			if n < 0 {
				return 0
			}
			return float64(signal[n*Channels+ch])
		}
		for n := range len(signal) / Channels {
			for p := range tpPhases {
				var y float64
				for j, h := range tpPhases[p] {
					y += h * x(n-j)
				}
				peak = math.Max(peak, math.Abs(y))
			}
		}
	}
	return gainToDB(peak)
}

// programme is seconds of something like speech: independent white noise
// per channel with a 14 kHz sine through it (high-frequency content,
// where a true peak differs most from the sample peak), its level rising
// and falling by 26 dB four times a second (syllables), peaks at dbfs.
func programme(seed uint64, dbfs, secs float64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	a := DBToGain(dbfs)
	n := int(secs * Rate)
	b := make([]float32, 0, n*Channels)
	for i := range n {
		t := float64(i) / Rate
		g := a * math.Pow(10, -26.0/20*(0.5+0.5*math.Cos(2*math.Pi*4*t)))
		s := math.Sin(2 * math.Pi * 14000 * t)
		b = append(b, float32(g*(0.5*s+0.5*(2*rng.Float64()-1))), float32(g*(0.5*s-0.5*(2*rng.Float64()-1))))
	}
	return b
}

// The meter reads the same whatever the blocks it is fed (ticks, single
// frames, odd lengths across the 100 ms sub-blocks' edges), and its true
// peak of programme is the interpolator's by its definition, to rounding:
// the symmetric-phase arithmetic, the chunks skipped in its quiet and the
// split pieces change no reading.
func TestMeterReadsTheSameInAnyBlocks(t *testing.T) {
	sig := programme(7, -1, 3.5)
	want := directTruePeak(sig)
	ticks := measure(sig)
	if math.Abs(ticks.MaxTruePeak-want) > 1e-9 {
		t.Errorf("max true peak %.12f dBTP, by the definition %.12f", ticks.MaxTruePeak, want)
	}
	if ticks.MaxTruePeak <= ticks.SamplePeak {
		t.Errorf("true peak %.3f dBTP not above the sample peak %.3f dBFS: no interpolation measured", ticks.MaxTruePeak, ticks.SamplePeak)
	}
	var m Meter
	for i, sizes := 0, []int{1, 7, 4799, 1601, 333, 4800}; i < len(sig); {
		n := min(sizes[i%len(sizes)]*Channels, len(sig)-i)
		m.Add(sig[i : i+n])
		i += n
	}
	odd := m.Levels()
	for _, c := range []struct {
		name string
		a, b float64
	}{
		{"momentary", odd.Momentary, ticks.Momentary},
		{"short-term", odd.ShortTerm, ticks.ShortTerm},
		{"integrated", odd.Integrated, ticks.Integrated},
		{"range", odd.Range, ticks.Range},
		{"sample peak", odd.SamplePeak, ticks.SamplePeak},
		{"true peak", odd.TruePeak, ticks.TruePeak},
		{"max true peak", odd.MaxTruePeak, ticks.MaxTruePeak},
	} {
		if math.Abs(c.a-c.b) > 1e-9 {
			t.Errorf("%s: %.12f in odd blocks, %.12f in ticks", c.name, c.a, c.b)
		}
	}
}

// TruePeakFloor's promise: a signal whose true peak is at or above the
// floor reads it exactly; one under it reads no more than the floor and
// no less than its sample peak. A 12 kHz sine 45° off its samples (true
// peak 3 dB over the sample peak) stepped across the floor.
func TestTruePeakFloor(t *testing.T) {
	for db := TruePeakFloor - 8; db <= TruePeakFloor+8; db += 0.5 {
		sig := sine(nil, 12000, db, 0.5, math.Pi/4)
		l := measure(sig)
		want := directTruePeak(sig)
		if want >= TruePeakFloor {
			if math.Abs(l.MaxTruePeak-want) > 1e-9 {
				t.Errorf("%v dBFS: true peak %.4f dBTP, by the definition %.4f", db, l.MaxTruePeak, want)
			}
		} else if l.MaxTruePeak > TruePeakFloor || l.MaxTruePeak < l.SamplePeak-1e-9 {
			t.Errorf("%v dBFS (true peak %.2f, under the floor): reads %.2f dBTP, sample peak %.2f", db, want, l.MaxTruePeak, l.SamplePeak)
		}
	}
}

// Add returns each block's sample peak, the largest magnitude in it
// whatever its length and wherever it crosses a sub-block's edge, so that
// a bus sees its mix clip from its meter's pass: a full-scale sample on
// either channel reads 1, a NaN is passed over.
func TestAddReturnsTheBlocksSamplePeak(t *testing.T) {
	sig := sine(nil, 997, -6, 1, 0)
	sig[2*4801+1] = -1                // right channel, just past the first sub-block
	sig[2*9000] = float32(math.NaN()) // left
	var m Meter
	for i, n := 0, 0; i < len(sig); i += n {
		n = min(2*3203, len(sig)-i) // blocks across the sub-blocks' edges
		want := 0.0
		for _, v := range sig[i : i+n] {
			if a := math.Abs(float64(v)); a > want {
				want = a
			}
		}
		if got := m.Add(sig[i : i+n]); got != want {
			t.Fatalf("block at frame %d: sample peak %v, the block's largest magnitude %v", i/2, got, want)
		}
	}
}

// directKWeight is BS.1770's K-weighting by its definition: each channel
// through the shelf's and the high pass's difference equations, every
// product rounded, the squares of the output summed over each 100 ms
// sub-block and both channels.
func directKWeight(signal []float32) []float64 {
	var subs []float64
	var st [Channels][6]float64 // x1 x2 y1 y2 z1 z2
	for i := 0; i+subBlock*Channels <= len(signal); i += subBlock * Channels {
		var e float64
		for n := range subBlock {
			for ch := range Channels {
				s := &st[ch]
				x := float64(signal[i+n*Channels+ch])
				y := float64(kwB0*x) + float64(kwB1*s[0]) + float64(kwB2*s[1]) - float64(kwA1*s[2]) - float64(kwA2*s[3])
				z := y - float64(2*s[2]) + s[3] - float64(kwC1*s[4]) - float64(kwC2*s[5])
				*s = [6]float64{x, s[0], y, s[2], z, s[4]}
				e += float64(z * z)
			}
		}
		subs = append(subs, e)
	}
	return subs
}

// The meter's K-weighting (fused multiply-adds, the channels summed apart)
// reads each 100 ms sub-block's energy as the filters' definition does, to
// 1e-12: programme, a loud tone and a quiet one, fed as 30 fps ticks.
func TestKWeightingAsDefined(t *testing.T) {
	for name, sig := range map[string][]float32{
		"programme": programme(3, -1, 2),
		"tone -1":   sine(nil, 997, -1, 2, 0.1),
		"tone -60":  sine(nil, 40, -60, 2, 0),
	} {
		want := directKWeight(sig)
		var k [Channels]kWeighting
		l, r := make([]float64, subBlock), make([]float64, subBlock)
		var worst float64
		for j, w := range want {
			var e float64
			for tick := range 3 { // a 30 fps tick's 1600 frames each
				from := (j*subBlock + tick*subBlock/3) * Channels
				et, _, _ := kWeightFrom(&k, sig[from:from+subBlock/3*Channels], l[:subBlock/3], r[:subBlock/3])
				e += et
			}
			d := math.Abs(e-w) / w
			worst = max(worst, d)
			if d > 1e-12 {
				t.Fatalf("%s: sub-block %d's energy %v, by the definition %v", name, j, e, w)
			}
		}
		t.Logf("%s: largest difference %.2g of the energy", name, worst)
	}
}

// A piece under the floor is not copied for the interpolator, yet its last
// inputs are the next piece's history: a spike just after quiet blocks
// (the last of them shorter than the history), left and right different,
// reads the true peak by its definition.
func TestTruePeakAfterQuietBlocks(t *testing.T) {
	const quiet = subBlock
	sig := make([]float32, 0, Channels*2*quiet)
	for i := range quiet {
		l := float32(0.09) // −21 dBFS: under the floor's reach
		if i%2 == 1 {
			l = -0.09
		}
		sig = append(sig, l, float32(0.08*math.Sin(float64(i)/3)))
	}
	sig = append(sig, 0.3, -0.3, 0.3, -0.2) // the spike, −10.5 dBFS: the true peak between its two samples
	sig = append(sig, make([]float32, Channels*(quiet-2))...)
	var m Meter
	off := 0
	for _, n := range []int{quiet - 3, 3, quiet} { // two sub-blocks in all
		m.Add(sig[Channels*off : Channels*(off+n)])
		off += n
	}
	got, want := m.Levels().MaxTruePeak, directTruePeak(sig)
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("max true peak %.12f dBTP, by the definition %.12f", got, want)
	}
	if want-gainToDB(0.3) < 0.5 {
		t.Fatalf("the spike's true peak %.3f dBTP is near its sample peak: the test shows nothing", want)
	}
}
