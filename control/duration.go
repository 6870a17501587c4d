package control

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FrameRater is a Show that knows its frame rate, so that a transition's
// duration may be given in frames.
type FrameRater interface {
	FrameRate() (num, den int64)
}

// MaxTransition is the longest transition a request may ask for.
const MaxTransition = time.Minute

// ParseDuration reads a transition's duration as an operator writes it:
// frames ("15f", or a bare whole number, "12") at the show's frame rate
// num/den (num 0: unknown), or a Go duration ("500ms", "0.5s", "1s");
// between 0 and MaxTransition. A whole number of frames is exact: n frames
// are n·den/num seconds rounded up to the nanosecond, which a bus counts as
// n ticks of its period.
func ParseDuration(s string, num, den int64) (time.Duration, error) {
	bad := func(why string) error {
		return fmt.Errorf("duration %q: %s; write frames (15f, or 15) or a duration (500ms, 0.5s) between 0 and %v", s, why, MaxTransition)
	}
	n0 := strings.TrimSuffix(strings.TrimSpace(s), "f")
	if n, err := strconv.ParseUint(n0, 10, 32); err == nil {
		if num <= 0 || den <= 0 {
			return 0, bad("this show does not say its frame rate, so frames are unknown")
		}
		ns := (int64(n)*den*1_000_000_000 + num - 1) / num
		if n > uint64(MaxTransition.Seconds())*uint64(num/den+1) || time.Duration(ns) > MaxTransition {
			return 0, bad("too long")
		}
		return time.Duration(ns), nil
	}
	if n0 != strings.TrimSpace(s) {
		return 0, bad("frames are a whole number")
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, bad("not a duration")
	case d < 0 || d > MaxTransition:
		return 0, bad("out of range")
	}
	return d, nil
}
