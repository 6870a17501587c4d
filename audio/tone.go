package audio

import (
	"fmt"
	"math"
)

// Tone is a test pattern's line-up tone: a sine of Hz at LevelDBFS (peak,
// on both channels), and once a second, on the tick the picture flashes,
// one tick of it at BlipDBFS. Every sample is a function of its index
// alone, so a source restarted at frame n sounds as if it had never
// stopped.
type Tone struct {
	Hz        float64
	LevelDBFS float64
	BlipDBFS  float64
	Cadence   Cadence
}

// The line-up tone's defaults: EBU's 1 kHz at −18 dBFS, a blip 12 dB louder.
const (
	ToneHz   = 1000.0
	ToneDBFS = -18.0
	BlipDBFS = -6.0
)

// NewTone checks the tone's values.
func NewTone(hz, levelDBFS float64, c Cadence) (Tone, error) {
	switch {
	case !(hz > 0 && hz < Rate/2):
		return Tone{}, fmt.Errorf("audio: tone of %v Hz: use a frequency between 0 and %d Hz", hz, Rate/2)
	case !(levelDBFS <= 0 && levelDBFS >= -120):
		return Tone{}, fmt.Errorf("audio: tone at %v dBFS: use a level between -120 and 0 dBFS", levelDBFS)
	}
	blip := math.Min(levelDBFS+12, 0)
	return Tone{Hz: hz, LevelDBFS: levelDBFS, BlipDBFS: blip, Cadence: c}, nil
}

// Flashes says whether video frame n is the one that flashes: the first
// frame at or after each whole second (frame 0, then every second's).
func Flashes(n, num, den int64) bool {
	if n <= 0 {
		return n == 0
	}
	// second of frame n is floor(n·den/num); it flashes when that moved.
	return n*den/num != (n-1)*den/num
}

// Block writes frame n's samples into dst (reused when large enough) and
// returns it: Cadence.Samples(n) sample frames, interleaved.
func (t Tone) Block(dst []float32, n int64) []float32 {
	s0 := t.Cadence.Start(n)
	count := t.Cadence.Samples(n)
	dst = grow(dst, count*Channels)
	level := t.LevelDBFS
	if Flashes(n, t.Cadence.Num, t.Cadence.Den) {
		level = t.BlipDBFS
	}
	a := DBToGain(level)
	// The phase is the fraction of a cycle at the sample's index, so it
	// keeps its precision however far into the show.
	cycles := t.Hz / Rate
	for i := 0; i < count; i++ {
		_, frac := math.Modf(cycles * float64(s0+int64(i)))
		v := float32(a * math.Sin(2*math.Pi*frac))
		dst[2*i], dst[2*i+1] = v, v
	}
	return dst
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// DBToGain converts decibels to a linear gain.
func DBToGain(db float64) float64 { return math.Pow(10, db/20) }
