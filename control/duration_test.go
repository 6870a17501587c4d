package control

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// ntsc is the frame period a bus at 30000/1001 counts its ticks by (whole
// nanoseconds, as nodes/show keeps it).
const ntsc = time.Duration(1_000_000_000 * 1001 / 30000)

// rateOf is the frame rate whose period is frame (0: none).
func rateOf(frame time.Duration) (int64, int64) {
	switch frame {
	case ntsc:
		return 30000, 1001
	case 0:
		return 0, 0
	}
	return int64(time.Second / frame), 1
}

// TestParseDurationFramesAndSeconds: an operator's "15f", "12", "0.5s" and
// "500ms" are what they say, frames counting as exactly that many of the
// bus's ticks (d / period, as the switcher divides), and everything else is
// refused saying what to write.
func TestParseDurationFramesAndSeconds(t *testing.T) {
	cases := []struct {
		in     string
		frame  time.Duration
		ticks  int64 // frames: the ticks the bus counts
		d      time.Duration
		errMsg string
	}{
		{in: "15f", frame: ntsc, ticks: 15},
		{in: "12", frame: ntsc, ticks: 12},
		{in: "15f", frame: time.Second / 30, d: 500 * time.Millisecond},
		{in: "1f", frame: time.Second / 25, ticks: 1},
		{in: "0", frame: ntsc, d: 0},
		{in: "0.5s", frame: ntsc, d: 500 * time.Millisecond},
		{in: "500ms", d: 500 * time.Millisecond},
		{in: "15f", errMsg: "does not say its frame rate"},
		{in: "1.5f", frame: ntsc, errMsg: "frames are a whole number"},
		{in: "2000f", frame: ntsc, errMsg: "too long"},
		{in: "2m", frame: ntsc, errMsg: "out of range"},
		{in: "-1s", frame: ntsc, errMsg: "out of range"},
		{in: "soon", frame: ntsc, errMsg: "not a duration"},
	}
	for _, c := range cases {
		num, den := rateOf(c.frame)
		d, err := ParseDuration(c.in, num, den)
		switch {
		case c.errMsg != "":
			if err == nil || !strings.Contains(err.Error(), c.errMsg) || !strings.Contains(err.Error(), "write frames (15f, or 15)") {
				t.Errorf("ParseDuration(%q) = %v, %v; want an error saying %q and what to write", c.in, d, err, c.errMsg)
			}
		case err != nil:
			t.Errorf("ParseDuration(%q): %v", c.in, err)
		case c.ticks > 0 && int64(d/c.frame) != c.ticks:
			t.Errorf("ParseDuration(%q) = %v: %d ticks of %v, want %d", c.in, d, int64(d/c.frame), c.frame, c.ticks)
		case c.ticks == 0 && d != c.d:
			t.Errorf("ParseDuration(%q) = %v, want %v", c.in, d, c.d)
		}
	}
}

// FuzzParseDuration: any text is refused or read as a duration in range;
// a whole number of frames is read as exactly that many ticks.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"15f", "12", "0.5s", "500ms", "1m", "f", "", "9999999999f", "1e3ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s, 30000, 1001)
		if err != nil {
			return
		}
		if d < 0 || d > MaxTransition+2*ntsc {
			t.Fatalf("ParseDuration(%q) = %v: out of range", s, d)
		}
		if n, e := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(s), "f"), 10, 32); e == nil && uint64(d/ntsc) != n {
			t.Fatalf("ParseDuration(%q) = %v: %d ticks, want %d", s, d, d/ntsc, n)
		}
	})
}
