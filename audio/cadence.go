package audio

import (
	"fmt"
	"math/bits"
)

// Cadence is how many sample frames each video tick carries at a frame
// rate of Num/Den frames per second. Tick k covers the samples from
// Start(k) up to Start(k+1), where Start(k) is k·Rate·Den/Num rounded to
// the nearest sample (halves up): exact rational arithmetic, so audio never
// drifts from picture however long a show runs. At 30 fps every tick is
// 1600 samples; at 30000/1001 the ticks repeat 1602, 1601, 1602, 1601,
// 1602 (8008 samples in five ticks).
type Cadence struct {
	Num, Den int64 // frames per second, both positive
}

// NewCadence checks the rate.
func NewCadence(num, den int64) (Cadence, error) {
	if num <= 0 || den <= 0 {
		return Cadence{}, fmt.Errorf("audio: frame rate %d/%d: both parts must be positive", num, den)
	}
	return Cadence{num, den}, nil
}

// Start is the first sample frame of tick k (k ≥ 0).
func (c Cadence) Start(k int64) int64 {
	// round(k·Rate·Den/Num) = floor((2·k·Rate·Den + Num) / (2·Num)), in 128 bits.
	hi, lo := bits.Mul64(uint64(k), uint64(2*Rate*c.Den))
	lo, carry := bits.Add64(lo, uint64(c.Num), 0)
	hi += carry
	d := uint64(2 * c.Num)
	if hi >= d {
		panic(fmt.Sprintf("audio: tick %d at %d/%d overflows", k, c.Num, c.Den))
	}
	q, _ := bits.Div64(hi, lo, d)
	return int64(q)
}

// Samples is how many sample frames tick k carries.
func (c Cadence) Samples(k int64) int { return int(c.Start(k+1) - c.Start(k)) }

// Tick is the tick whose samples hold sample frame s (s ≥ 0).
func (c Cadence) Tick(s int64) int64 {
	k := s * c.Num / (Rate * c.Den) // close below; step to the exact tick
	for k > 0 && c.Start(k) > s {
		k--
	}
	for c.Start(k+1) <= s {
		k++
	}
	return k
}

// MaxSamples is the most sample frames any tick carries.
func (c Cadence) MaxSamples() int { return int((Rate*c.Den+c.Num-1)/c.Num) + 1 }
