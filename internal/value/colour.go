package value

import (
	"fmt"
	"slices"
	"strings"
)

// The colour tags onair knows, each list in the order the show language
// offers them (its colour block reads these lists).
var (
	ColourPrimaries = []string{"bt709", "bt2020", "bt601"}
	ColourTransfers = []string{"bt709", "pq", "hlg", "srgb"}
	ColourMatrices  = []string{"bt709", "bt2020nc", "bt601"}
	ColourRanges    = []string{"limited", "full"}
)

// Colour holds the colour tags of pictures: how their samples are to be
// read. The zero Colour is no tags at all (a reader that needs some takes
// BT.709, limited range).
type Colour struct {
	Primaries string // bt709 | bt2020 | bt601
	Transfer  string // bt709 | pq | hlg | srgb
	Matrix    string // bt709 | bt2020nc | bt601
	Range     string // limited | full
}

// ParseColour reads "primaries/transfer/matrix/range", such as
// bt709/bt709/bt709/limited: four tags onair knows, or an error saying
// which is wrong. "" is the zero Colour.
func ParseColour(s string) (Colour, error) {
	if s == "" {
		return Colour{}, nil
	}
	p := strings.Split(s, "/")
	if len(p) != 4 {
		return Colour{}, fmt.Errorf("colour %q: want primaries/transfer/matrix/range such as bt709/bt709/bt709/limited", s)
	}
	for i, known := range [4][]string{ColourPrimaries, ColourTransfers, ColourMatrices, ColourRanges} {
		if !slices.Contains(known, p[i]) {
			return Colour{}, fmt.Errorf("colour %q: %s %q is none of %s", s, [4]string{"primaries", "transfer", "matrix", "range"}[i], p[i], strings.Join(known, ", "))
		}
	}
	return Colour{Primaries: p[0], Transfer: p[1], Matrix: p[2], Range: p[3]}, nil
}

// String spells c as ParseColour reads it ("" for the zero Colour).
func (c Colour) String() string {
	if c == (Colour{}) {
		return ""
	}
	return c.Primaries + "/" + c.Transfer + "/" + c.Matrix + "/" + c.Range
}

// MarshalText spells c as String does.
func (c Colour) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads what ParseColour reads; a malformed tag is an error.
func (c *Colour) UnmarshalText(b []byte) error {
	x, err := ParseColour(string(b))
	if err != nil {
		return err
	}
	*c = x
	return nil
}

// Or is c, or def when c is the zero Colour (no tags at all).
func (c Colour) Or(def Colour) Colour {
	if c == (Colour{}) {
		return def
	}
	return c
}
