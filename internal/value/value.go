// Package value holds the small value types every layer of onair shares:
// exact rationals (frame rates, time bases), frame sizes, pixel formats and
// colour tags (each spelt in JSON as the plan spells it), and Settings, the
// named values of a block such as the canvas. One definition each, with
// their parsers, so the show language, the plan, the frames and the
// backends read them the same way; and the geometry limits (geometry.go),
// which all of them enforce.
//
// value must never import anything of onair's: it is the leaf.
package value

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Rational is an exact frame rate or time base; Den > 0.
type Rational struct{ Num, Den int64 }

// ParseRational reads "30" or "30000/1001": whole numbers, both positive.
func ParseRational(s string) (Rational, error) {
	num, den, frac := strings.Cut(s, "/")
	n, err1 := strconv.ParseInt(num, 10, 64)
	d := int64(1)
	var err2 error
	if frac {
		d, err2 = strconv.ParseInt(den, 10, 64)
	}
	if err1 != nil || err2 != nil || n <= 0 || d <= 0 {
		return Rational{}, fmt.Errorf("%q is not a positive whole number or fraction such as 30 or 30000/1001", s)
	}
	return Rational{Num: n, Den: d}, nil
}

// Inverse is 1/r: a frame rate's period.
func (r Rational) Inverse() Rational { return Rational{Num: r.Den, Den: r.Num} }

// Float is r as a float64.
func (r Rational) Float() float64 { return float64(r.Num) / float64(r.Den) }

// String renders "30" or "30000/1001" ("0" for the zero value).
func (r Rational) String() string {
	switch r.Den {
	case 0:
		return "0"
	case 1:
		return strconv.FormatInt(r.Num, 10)
	}
	return strconv.FormatInt(r.Num, 10) + "/" + strconv.FormatInt(r.Den, 10)
}

// MarshalText spells r as String does: the plan's "30" or "30000/1001".
func (r Rational) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads what ParseRational reads.
func (r *Rational) UnmarshalText(b []byte) error {
	x, err := ParseRational(string(b))
	if err != nil {
		return err
	}
	*r = x
	return nil
}

// Size is a frame size in pixels.
type Size struct{ W, H int }

// ParseSize reads "1920x1080": both positive.
func ParseSize(s string) (Size, error) {
	w, h, ok := strings.Cut(s, "x")
	W, err1 := strconv.Atoi(w)
	H, err2 := strconv.Atoi(h)
	if !ok || err1 != nil || err2 != nil || W <= 0 || H <= 0 {
		return Size{}, fmt.Errorf("size %q: want WIDTHxHEIGHT such as 1920x1080", s)
	}
	return Size{W: W, H: H}, nil
}

// String renders "1920x1080".
func (s Size) String() string { return strconv.Itoa(s.W) + "x" + strconv.Itoa(s.H) }

// MarshalText spells s as String does: the plan's "1920x1080".
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads what ParseSize reads.
func (s *Size) UnmarshalText(b []byte) error {
	x, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = x
	return nil
}

// Settings are named values as a schema declares them: string, int, bool
// or []string. Read back from JSON they hold the same types (whole numbers
// as int, lists as []string), so a saved plan's settings equal a fresh
// one's.
type Settings map[string]any

// String is the string value of key ("" when absent).
func (s Settings) String(key string) string { v, _ := s[key].(string); return v }

// Int is the whole-number value of key (0 when absent).
func (s Settings) Int(key string) int { v, _ := s[key].(int); return v }

// Bool is the value of key (false when absent).
func (s Settings) Bool(key string) bool { v, _ := s[key].(bool); return v }

// Strings is the list value of key (nil when absent).
func (s Settings) Strings(key string) []string { v, _ := s[key].([]string); return v }

// Keys lists the keys, sorted.
func (s Settings) Keys() []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Clone copies s (lists too).
func (s Settings) Clone() Settings {
	out := make(Settings, len(s))
	for k, v := range s {
		if l, ok := v.([]string); ok {
			v = append([]string{}, l...)
		}
		out[k] = v
	}
	return out
}

// UnmarshalJSON reads an object of strings, whole numbers, booleans and
// lists of strings; anything else is an error naming the key.
func (s *Settings) UnmarshalJSON(b []byte) error {
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil { // null
		*s = nil
		return nil
	}
	out := make(Settings, len(raw))
	for k, v := range raw {
		n, err := Normalize(v)
		if err != nil {
			return fmt.Errorf("setting %s: %v", k, err)
		}
		out[k] = n
	}
	*s = out
	return nil
}

// Normalize turns a value read from JSON into the type Settings hold: a
// whole float64 into int, a list of strings into []string.
func Normalize(v any) (any, error) {
	switch x := v.(type) {
	case string, bool, int, []string:
		return x, nil
	case float64:
		if x != float64(int(x)) {
			return nil, fmt.Errorf("%v is not a whole number", x)
		}
		return int(x), nil
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("a list holds %v, not a string", e)
			}
			out[i] = s
		}
		return out, nil
	case nil:
		return nil, fmt.Errorf("null is not a value")
	}
	return nil, fmt.Errorf("%v (%T) is not a string, whole number, bool or list of strings", v, v)
}
