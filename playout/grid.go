package playout

import (
	"fmt"
	"math/bits"
)

// Grid is the tick grid of a bus: tick k presents at Origin + k·Den/Num
// seconds, in nanoseconds.
type Grid struct {
	Num, Den int64 // frames per second as a reduced fraction, Num > 0, Den > 0
	Origin   int64 // nanoseconds of tick 0 on the monotonic clock
}

// NewGrid returns the grid for a rate of num/den frames per second starting
// at origin.
func NewGrid(num, den, origin int64) (Grid, error) {
	if num <= 0 || den <= 0 {
		return Grid{}, fmt.Errorf("playout: frame rate %d/%d: both parts must be positive", num, den)
	}
	return Grid{Num: num, Den: den, Origin: origin}, nil
}

// Period is the frame period rounded down to a nanosecond; use At for exact
// tick times.
func (g Grid) Period() int64 { return 1_000_000_000 * g.Den / g.Num }

// At returns the presentation time of tick k (k ≥ 0), exact to the
// nanosecond (rounded down), without drift however large k grows.
func (g Grid) At(k int64) int64 {
	return g.Origin + mulDiv(k, 1_000_000_000*g.Den, g.Num)
}

// Index returns the last tick at or before t (t ≥ Origin), or -1 before it.
func (g Grid) Index(t int64) int64 {
	if t < g.Origin {
		return -1
	}
	k := mulDiv(t-g.Origin, g.Num, 1_000_000_000*g.Den)
	// mulDiv rounds down; At rounds down too, so step to the exact boundary.
	for g.At(k+1) <= t {
		k++
	}
	for k > 0 && g.At(k) > t {
		k--
	}
	return k
}

// mulDiv returns a·b/c rounded down for non-negative a, b and positive c,
// using a 128-bit intermediate so that a·b never overflows.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		panic(fmt.Sprintf("playout: %d·%d/%d overflows 64 bits", a, b, c))
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}
