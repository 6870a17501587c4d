package timecode

import (
	"strings"
	"testing"
	"time"
)

var (
	df30 = MustRate(30000, 1001)
	df60 = MustRate(60000, 1001)
)

// Known drop-frame values (SMPTE ST 12-1's counting rules).
func TestDropFrameKnownValues(t *testing.T) {
	cases := []struct {
		r     Rate
		frame int64
		want  string
	}{
		{df30, 0, "00:00:00;00"},
		{df30, 1799, "00:00:59;29"},
		{df30, 1800, "00:01:00;02"}, // ;00 and ;01 dropped
		{df30, 3597, "00:01:59;29"},
		{df30, 3598, "00:02:00;02"},
		{df30, 17981, "00:09:59;29"},
		{df30, 17982, "00:10:00;00"}, // tens of minutes keep ;00 and ;01
		{df30, 17983, "00:10:00;01"},
		{df30, 17984, "00:10:00;02"},
		{df30, 19781, "00:10:59;29"},
		{df30, 19782, "00:11:00;02"},
		{df30, 107892, "01:00:00;00"},
		{df30, 2589407, "23:59:59;29"},
		{df30, 2589408, "00:00:00;00"}, // a day wraps
		{df30, -1, "23:59:59;29"},
		{df60, 3599, "00:00:59;59"},
		{df60, 3600, "00:01:00;04"}, // four dropped at 60000/1001
		{df60, 35964, "00:10:00;00"},
		{df60, 215784, "01:00:00;00"},
		{df60, 5178815, "23:59:59;59"},
	}
	for _, c := range cases {
		got := c.r.Label(c.frame)
		if got.String() != c.want {
			t.Errorf("%s: frame %d is %s, want %s", c.r, c.frame, got, c.want)
		}
		if back := c.r.Frame(got); back != ((c.frame%c.r.PerDay())+c.r.PerDay())%c.r.PerDay() {
			t.Errorf("%s: %s is frame %d, want %d", c.r, got, back, c.frame)
		}
	}
	if df30.PerDay() != 2589408 || df60.PerDay() != 5178816 {
		t.Errorf("frames a day: %d at 29.97, %d at 59.94", df30.PerDay(), df60.PerDay())
	}
}

// The frame after 00:00:59;29 is 00:01:00;02; every label round-trips over
// a whole day, and consecutive frames never repeat or skip a label that
// exists.
func TestEveryFrameOfADayRoundTrips(t *testing.T) {
	for _, r := range []Rate{df30, df60, MustRate(25, 1), MustRate(30, 1), MustRate(24000, 1001)} {
		day := r.PerDay()
		prev := r.Label(day - 1)
		for n := int64(0); n < day; n++ {
			tc := r.Label(n)
			if err := r.Check(tc); err != nil {
				t.Fatalf("%s: frame %d is labelled %s, which Check refuses: %v", r, n, tc, err)
			}
			if got := r.Frame(tc); got != n {
				t.Fatalf("%s: frame %d → %s → %d", r, n, tc, got)
			}
			if n > 0 && !(tc.H > prev.H || tc.M > prev.M && tc.H == prev.H || tc.S > prev.S && tc.M == prev.M && tc.H == prev.H ||
				tc.F > prev.F && tc.S == prev.S && tc.M == prev.M && tc.H == prev.H) {
				t.Fatalf("%s: %s follows %s", r, tc, prev)
			}
			prev = tc
		}
	}
	if got := df30.Label(df30.Frame(Timecode{0, 0, 59, 29, true}) + 1); got.String() != "00:01:00;02" {
		t.Errorf("after 00:00:59;29 comes %s, want 00:01:00;02", got)
	}
}

func TestNonDropFrame(t *testing.T) {
	cases := []struct {
		num, den int64
		frame    int64
		want     string
	}{
		{25, 1, 0, "00:00:00:00"},
		{25, 1, 24, "00:00:00:24"},
		{25, 1, 25, "00:00:01:00"},
		{25, 1, 90000, "01:00:00:00"},
		{30, 1, 1800, "00:01:00:00"},
		{30, 1, 108000, "01:00:00:00"},
		{50, 1, 49, "00:00:00:49"},
		{50, 1, 180000, "01:00:00:00"},
		{60, 1, 3600, "00:01:00:00"},
		{60, 1, 216000*24 - 1, "23:59:59:59"},
		{24000, 1001, 86400, "01:00:00:00"}, // non-drop: 24 labels a second
	}
	for _, c := range cases {
		r := MustRate(c.num, c.den)
		if r.Drop {
			t.Fatalf("%s counts drop-frame", r)
		}
		if got := r.Label(c.frame).String(); got != c.want {
			t.Errorf("%s: frame %d is %s, want %s", r, c.frame, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	good := []struct {
		r    Rate
		in   string
		want int64
	}{
		{df30, "01:00:00;00", 107892},
		{df30, "01:00:00:00", 107892}, // the rate decides drop-frame, not the separator
		{df30, "01;00;00;00", 107892},
		{df30, "00:01:00;02", 1800},
		{df30, "00:10:00;00", 17982},
		{df30, "00:10:00;01", 17983},
		{df60, "00:01:00;04", 3600},
		{MustRate(25, 1), "00:00:01:00", 25},
		{MustRate(25, 1), "00:00:01;00", 25},
		{MustRate(25, 1), "10:00:00.12", 900012},
		{MustRate(50, 1), "0:0:1:49", 99},
		{MustRate(120, 1), "00:00:01:119", 239},
	}
	for _, c := range good {
		tc, err := c.r.Parse(c.in)
		if err != nil {
			t.Errorf("%s: Parse(%q): %v", c.r, c.in, err)
			continue
		}
		if got := c.r.Frame(tc); got != c.want {
			t.Errorf("%s: %q is frame %d, want %d", c.r, c.in, got, c.want)
		}
	}
	bad := []struct {
		r    Rate
		in   string
		want string
	}{
		{df30, "00:01:00;00", "00:01:00;00 does not exist at 30000/1001 drop-frame: frames 00 to 01 of every minute not divisible by ten are dropped; the next timecode is 00:01:00;02"},
		{df30, "00:01:00;01", "does not exist"},
		{df60, "00:01:00;03", "the next timecode is 00:01:00;04"},
		{df30, "00:00:00;30", "frames run from 00 to 29"},
		{MustRate(25, 1), "00:00:00:25", "frames run from 00 to 24"},
		{MustRate(25, 1), "24:00:00:00", "hours run from 00 to 23"},
		{MustRate(25, 1), "00:60:00:00", "minutes run from 00 to 59"},
		{MustRate(25, 1), "00:00:60:00", "seconds run from 00 to 59"},
		{MustRate(25, 1), "00:00:00", "want four fields"},
		{MustRate(25, 1), "00:00:00:00:00", "want four fields"},
		{MustRate(25, 1), "00::00:00", "want four fields"},
		{MustRate(25, 1), "aa:00:00:00", "is not a number"},
		{MustRate(25, 1), "+1:00:00:00", "is not a number"},
		{MustRate(25, 1), "001:00:00:00", "want one or two digits"},
		{MustRate(25, 1), "00.00:00:00", "may only come before the frames"},
		{MustRate(25, 1), "", "want four fields"},
		{MustRate(25, 1), "5s", "want four fields"},
	}
	for _, c := range bad {
		_, err := c.r.Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Parse(%q) = %v, want an error with %q", c.r, c.in, err, c.want)
		}
	}
}

func TestTimeOfDay(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	one := time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)
	cases := []struct {
		r    Rate
		at   time.Time
		want string
	}{
		{MustRate(25, 1), at, "10:00:00:00"},
		{MustRate(25, 1), at.Add(40 * time.Millisecond), "10:00:00:01"},
		{MustRate(30, 1), at.Add(999 * time.Millisecond), "10:00:00:29"},
		// Drop-frame labels keep pace
		// with the clock: within a frame a day (3.6 ms an hour, so one
		// frame ahead by 10:00).
		{df30, one, "01:00:00;00"},
		{df60, one, "01:00:00;00"},
		{df30, one.Add(10 * time.Minute), "01:10:00;00"},
		{df30, at, "10:00:00;01"},
		{MustRate(24000, 1001), at.Add(500 * time.Millisecond), "10:00:00:12"},
	}
	for _, c := range cases {
		if got := c.r.Label(c.r.TimeOfDay(c.at)).String(); got != c.want {
			t.Errorf("%s at %s: %s, want %s", c.r, c.at.Format("15:04:05.000"), got, c.want)
		}
	}
}

func TestDiff(t *testing.T) {
	r := MustRate(25, 1)
	if d := r.Diff(10, 15); d != 5 {
		t.Errorf("Diff(10, 15) = %d", d)
	}
	if d := r.Diff(r.PerDay()-2, 3); d != 5 {
		t.Errorf("across midnight: %d, want 5", d)
	}
	if d := r.Diff(3, r.PerDay()-2); d != -5 {
		t.Errorf("back across midnight: %d, want -5", d)
	}
}

func TestLooksLike(t *testing.T) {
	for in, want := range map[string]bool{"00:00:10:00": true, "00:00:10;00": true, "10s": false, "1m30s": false, "1:2:3": true} {
		if LooksLike(in) != want {
			t.Errorf("LooksLike(%q) = %v", in, !want)
		}
	}
}

// Anything Parse accepts is a label of a frame that writes itself back the
// same; nothing makes it panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"00:00:59;29", "01:00:00;00", "00:01:00;00", "23:59:59:24", "0:0:0.0", "00:00:01:119", "aa", ";;;", "99:99:99:99"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(2))
	}
	rates := []Rate{df30, df60, MustRate(25, 1), MustRate(30, 1), MustRate(50, 1), MustRate(60, 1), MustRate(24000, 1001), MustRate(120, 1)}
	f.Fuzz(func(t *testing.T, s string, ri uint8) {
		r := rates[int(ri)%len(rates)]
		tc, err := r.Parse(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		n := r.Frame(tc)
		if n < 0 || n >= r.PerDay() {
			t.Fatalf("%q parsed to frame %d, outside the day", s, n)
		}
		if got := r.Label(n); got != tc {
			t.Fatalf("%q: frame %d is labelled %s, parsed as %s", s, n, got, tc)
		}
		again, err := r.Parse(tc.String())
		if err != nil || again != tc {
			t.Fatalf("%q → %s → %v, %v", s, tc, again, err)
		}
	})
}
