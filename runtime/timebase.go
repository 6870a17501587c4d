package runtime

// Rational time bases.
//
// Invariants:
//   - A TimeBase is a positive fraction of a second, Num/Den, kept reduced.
//   - Conversions work on whole counts with 128-bit intermediates: the n-th
//     tick is computed from n, never by adding rounded steps, so no drift
//     builds up however long a show runs.

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// TimeBase is the unit a node counts and stamps time in: Num/Den seconds.
// 1/120000 counts in 1/120000 s; 1001/30000 is one tick at 29.97 fps.
type TimeBase struct {
	Num int64 `json:"num"`
	Den int64 `json:"den"`
}

// Common time bases.
var (
	Nanoseconds = TimeBase{1, 1_000_000_000}
	Base120k    = TimeBase{1, 120_000} // exact for 24, 25, 30, 50, 60 and their /1.001 rates
)

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// NewTimeBase returns num/den reduced, or an error if either is not positive.
func NewTimeBase(num, den int64) (TimeBase, error) {
	if num <= 0 || den <= 0 {
		return TimeBase{}, fmt.Errorf("time base %d/%d: numerator and denominator must be positive", num, den)
	}
	g := gcd(num, den)
	return TimeBase{num / g, den / g}, nil
}

// ParseTimeBase reads "1/120000", "1001/30000" or a whole number of seconds "1".
func ParseTimeBase(s string) (TimeBase, error) {
	num, den := s, "1"
	if i := strings.IndexByte(s, '/'); i >= 0 {
		num, den = s[:i], s[i+1:]
	}
	n, err1 := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	d, err2 := strconv.ParseInt(strings.TrimSpace(den), 10, 64)
	if err1 != nil || err2 != nil {
		return TimeBase{}, fmt.Errorf("time base %q: want NUM/DEN such as \"1/120000\"", s)
	}
	return NewTimeBase(n, d)
}

// FramePeriod is one frame at a frame rate "30", "30000/1001" or "29.97"-free
// rational form: the rate num/den fps gives a period of den/num s.
func FramePeriod(rate string) (TimeBase, error) {
	r, err := ParseTimeBase(rate)
	if err != nil {
		return TimeBase{}, fmt.Errorf("frame rate %q: want a whole number or NUM/DEN such as \"30000/1001\"", rate)
	}
	return NewTimeBase(r.Den, r.Num)
}

func (tb TimeBase) String() string { return fmt.Sprintf("%d/%d", tb.Num, tb.Den) }

// Valid reports whether tb is a usable (positive) time base.
func (tb TimeBase) Valid() bool { return tb.Num > 0 && tb.Den > 0 }

// mulDiv returns a*b/c rounded toward negative infinity (floor) or, with
// ceil, toward positive infinity, for a of either sign and b, c > 0.
func mulDiv(a, b, c int64, ceil bool) int64 {
	neg := a < 0
	ua := uint64(a)
	if neg {
		ua = uint64(-a)
	}
	hi, lo := bits.Mul64(ua, uint64(b))
	if hi >= uint64(c) { // would overflow int64: saturate
		if neg {
			return -1 << 63
		}
		return 1<<63 - 1
	}
	q, r := bits.Div64(hi, lo, uint64(c))
	// |a|*b = q*c + r
	if neg {
		if r != 0 && !ceil {
			q++
		}
		return -int64(q)
	}
	if r != 0 && ceil {
		q++
	}
	return int64(q)
}

// ToNanos converts a count in tb to nanoseconds, rounded down.
func (tb TimeBase) ToNanos(n int64) int64 {
	g := gcd(tb.Num*1_000_000_000, tb.Den)
	return mulDiv(n, tb.Num*1_000_000_000/g, tb.Den/g, false)
}

// ToNanosCeil converts a count in tb to nanoseconds, rounded up: the first
// nanosecond at or after the instant.
func (tb TimeBase) ToNanosCeil(n int64) int64 {
	g := gcd(tb.Num*1_000_000_000, tb.Den)
	return mulDiv(n, tb.Num*1_000_000_000/g, tb.Den/g, true)
}

// FromNanos converts nanoseconds to a count in tb, rounded down.
func (tb TimeBase) FromNanos(ns int64) int64 {
	g := gcd(tb.Den, tb.Num*1_000_000_000)
	return mulDiv(ns, tb.Den/g, tb.Num*1_000_000_000/g, false)
}

// Convert converts a count n in tb to a count in to, rounded down.
func (tb TimeBase) Convert(n int64, to TimeBase) int64 {
	// n * tb.Num/tb.Den / (to.Num/to.Den) = n * tb.Num*to.Den / (tb.Den*to.Num)
	num, den := tb.Num*to.Den, tb.Den*to.Num
	g := gcd(num, den)
	return mulDiv(n, num/g, den/g, false)
}

// Ticks returns how many units of tb one tick of period lasts, and whether
// that is a whole number (1/120000 holds a 30000/1001 fps tick exactly: 4004).
func (tb TimeBase) Ticks(period TimeBase) (int64, bool) {
	num, den := period.Num*tb.Den, period.Den*tb.Num
	return num / den, num%den == 0
}
