// Package timecode is SMPTE ST 12 time and control code as a show counts
// it: a frame count since midnight written HH:MM:SS:FF, drop-frame at
// 30000/1001 and 60000/1001 (HH:MM:SS;FF: frame numbers 00 and 01, or 00
// to 03 at 60000/1001, are skipped at the start of every minute not
// divisible by ten, so the labels keep pace with the clock), non-drop at
// every other rate (whole-second labels of the nominal rate, the rate
// rounded up).
//
// It is pure arithmetic, tested against known values and fuzzed. It must
// never import anything of onair's: frame/, playout/, lang/ and nodes/show
// all use it.
package timecode

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Rate is a frame rate as timecode counts it.
type Rate struct {
	Num, Den int64 // frames per second, Num/Den
	Nominal  int64 // frames in a labelled second: Num/Den rounded up
	Drop     bool  // drop-frame: 30000/1001 and 60000/1001
}

// NewRate returns the timecode rate of num/den frames per second.
func NewRate(num, den int64) (Rate, error) {
	if num <= 0 || den <= 0 {
		return Rate{}, fmt.Errorf("timecode: frame rate %d/%d: both parts must be positive", num, den)
	}
	g := gcd(num, den)
	num, den = num/g, den/g
	nominal := (num + den - 1) / den
	if nominal > 999 {
		return Rate{}, fmt.Errorf("timecode: frame rate %d/%d: over 999 frames a second has no timecode", num, den)
	}
	return Rate{Num: num, Den: den, Nominal: nominal, Drop: den == 1001 && (num == 30000 || num == 60000)}, nil
}

// MustRate is NewRate for rates known to be valid.
func MustRate(num, den int64) Rate {
	r, err := NewRate(num, den)
	if err != nil {
		panic(err)
	}
	return r
}

func (r Rate) String() string {
	s := strconv.FormatInt(r.Num, 10)
	if r.Den != 1 {
		s += "/" + strconv.FormatInt(r.Den, 10)
	}
	if r.Drop {
		return s + " drop-frame"
	}
	return s + " non-drop"
}

// dropped is how many frame numbers a drop-frame minute skips: 2 at
// 30000/1001, 4 at 60000/1001, 0 otherwise.
func (r Rate) dropped() int64 {
	if !r.Drop {
		return 0
	}
	return r.Nominal / 15
}

// PerDay is how many frames 24 hours of labels hold: the count wraps there.
func (r Rate) PerDay() int64 {
	d := r.dropped()
	return 24*3600*r.Nominal - 24*6*9*d
}

// Timecode is one label: hours, minutes, seconds and frames.
type Timecode struct {
	H, M, S uint8
	F       uint16
	Drop    bool // written with ';' before the frames
}

// String writes the label as HH:MM:SS:FF, or HH:MM:SS;FF when drop-frame.
func (t Timecode) String() string {
	sep := byte(':')
	if t.Drop {
		sep = ';'
	}
	b := make([]byte, 0, 12)
	b = two(b, int(t.H))
	b = append(b, ':')
	b = two(b, int(t.M))
	b = append(b, ':')
	b = two(b, int(t.S))
	b = append(b, sep)
	if t.F >= 100 {
		b = strconv.AppendInt(b, int64(t.F), 10)
	} else {
		b = two(b, int(t.F))
	}
	return string(b)
}

func two(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

// IsZero reports whether t is the zero value (no timecode).
func (t Timecode) IsZero() bool { return t == Timecode{} }

// Label is the timecode of frame n counted from 00:00:00:00, wrapping at 24
// hours (a negative n counts back from midnight).
func (r Rate) Label(n int64) Timecode {
	day := r.PerDay()
	n %= day
	if n < 0 {
		n += day
	}
	if d := r.dropped(); d > 0 {
		per10 := 600*r.Nominal - 9*d // frames in ten minutes
		perMin := 60*r.Nominal - d   // in a minute that drops
		tens, rem := n/per10, n%per10
		n += 9 * d * tens
		if rem >= d {
			n += d * ((rem - d) / perMin)
		}
	}
	f := n % r.Nominal
	s := n / r.Nominal
	return Timecode{H: uint8(s / 3600), M: uint8(s / 60 % 60), S: uint8(s % 60), F: uint16(f), Drop: r.Drop}
}

// Frame is the frame count of t from 00:00:00:00. t must exist at the rate
// (Check).
func (r Rate) Frame(t Timecode) int64 {
	mins := int64(t.H)*60 + int64(t.M)
	n := (mins*60+int64(t.S))*r.Nominal + int64(t.F)
	return n - r.dropped()*(mins-mins/10)
}

// Check says whether t exists at the rate, and if not, why and what to
// write instead.
func (r Rate) Check(t Timecode) error {
	switch {
	case t.H > 23:
		return fmt.Errorf("hours %02d: a timecode's hours run from 00 to 23", t.H)
	case t.M > 59:
		return fmt.Errorf("minutes %02d: minutes run from 00 to 59", t.M)
	case t.S > 59:
		return fmt.Errorf("seconds %02d: seconds run from 00 to 59", t.S)
	case int64(t.F) >= r.Nominal:
		return fmt.Errorf("frame %02d: at %s frames run from 00 to %02d", t.F, r, r.Nominal-1)
	}
	if d := r.dropped(); d > 0 && t.S == 0 && int64(t.F) < d && t.M%10 != 0 {
		next := t
		next.F, next.Drop = uint16(d), true
		return fmt.Errorf("%s does not exist at %s: frames 00 to %02d of every minute not divisible by ten are dropped; the next timecode is %s",
			Timecode{t.H, t.M, t.S, t.F, true}, r, d-1, next)
	}
	return nil
}

// Parse reads HH:MM:SS:FF at the rate. Any separator may be ':' or ';'
// (and '.' or ',' before the frames, as some equipment writes them); the
// rate, not the separator, decides drop-frame. A timecode that does not
// exist at the rate is refused, saying why.
func (r Rate) Parse(s string) (Timecode, error) {
	var t Timecode
	fields, err := split(s)
	if err != nil {
		return t, err
	}
	var v [4]int
	for i, f := range fields {
		maxDigits := 2
		if i == 3 {
			maxDigits = max(2, len(strconv.FormatInt(r.Nominal-1, 10)))
		}
		if len(f) < 1 || len(f) > maxDigits {
			return t, fmt.Errorf("timecode %q: %s %q: want %s digits (HH:MM:SS:FF, or HH:MM:SS;FF at drop-frame rates)", s, fieldName[i], f, digitsWord(maxDigits))
		}
		for j := 0; j < len(f); j++ {
			if f[j] < '0' || f[j] > '9' {
				return t, fmt.Errorf("timecode %q: %s %q is not a number (HH:MM:SS:FF, or HH:MM:SS;FF at drop-frame rates)", s, fieldName[i], f)
			}
		}
		v[i], _ = strconv.Atoi(f)
	}
	if v[0] > 99 || v[1] > 99 || v[2] > 99 {
		return t, fmt.Errorf("timecode %q: out of range", s)
	}
	t = Timecode{H: uint8(v[0]), M: uint8(v[1]), S: uint8(v[2]), F: uint16(v[3]), Drop: r.Drop}
	if err := r.Check(t); err != nil {
		return Timecode{}, fmt.Errorf("timecode %q: %v", s, err)
	}
	return t, nil
}

var fieldName = [4]string{"hours", "minutes", "seconds", "frames"}

func digitsWord(n int) string {
	if n == 2 {
		return "one or two"
	}
	return "one to " + strconv.Itoa(n)
}

// split cuts s into its four fields.
func split(s string) ([]string, error) {
	if len(s) > 16 {
		return nil, fmt.Errorf("timecode %q: too long (HH:MM:SS:FF, or HH:MM:SS;FF at drop-frame rates)", s)
	}
	fields := strings.FieldsFunc(s, func(c rune) bool { return c == ':' || c == ';' || c == '.' || c == ',' })
	seps := 0
	for _, c := range s {
		if c == ':' || c == ';' || c == '.' || c == ',' {
			seps++
		}
	}
	if len(fields) != 4 || seps != 3 {
		return nil, fmt.Errorf("timecode %q: want four fields, HH:MM:SS:FF (or HH:MM:SS;FF at drop-frame rates)", s)
	}
	for i, c := range s {
		if (c == '.' || c == ',') && i != strings.LastIndexAny(s, ":;.,") {
			return nil, fmt.Errorf("timecode %q: '%c' may only come before the frames", s, c)
		}
	}
	return fields, nil
}

// LooksLike reports whether s is written as a timecode (four fields
// separated by ':' or ';') rather than, say, a duration: callers that take
// either decide with it, then Parse for the errors.
func LooksLike(s string) bool {
	return strings.Count(s, ":")+strings.Count(s, ";") >= 2
}

// TimeOfDay is the frame count of the wall-clock moment t (in t's own
// location) from midnight: at drop-frame and whole-number rates the frames
// elapsed since midnight, so the labels read the clock; at any other rate
// (24000/1001, say) the label of t's second plus the frames into it, as a
// non-drop count cannot keep pace with the clock.
func (r Rate) TimeOfDay(t time.Time) int64 {
	h, m, s := t.Clock()
	sec := int64(h)*3600 + int64(m)*60 + int64(s)
	ns := int64(t.Nanosecond())
	if r.Drop || r.Den == 1 {
		total := sec*1_000_000_000 + ns
		// total·Num/(Den·1e9), without overflow: total < 8.64e13, Num ≤ 1e6 in practice.
		return mulDiv(total, r.Num, r.Den*1_000_000_000)
	}
	return sec*r.Nominal + mulDiv(ns, r.Nominal, 1_000_000_000)
}

// Diff is how many frames b is after a, the shorter way round midnight
// (negative when b is before a).
func (r Rate) Diff(a, b int64) int64 {
	day := r.PerDay()
	d := ((b-a)%day + day) % day
	if d > day/2 {
		d -= day
	}
	return d
}

func mulDiv(a, b, c int64) int64 {
	// a·b/c in float-free integer arithmetic: split a to keep a·b in range.
	q, rem := a/c, a%c
	return q*b + rem*b/c
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
