package value

import (
	"fmt"
	"strconv"
)

// The geometry limits: how large a picture may be and how far a layer's
// rect and crop may reach, declared once. The show language checks a
// show against them (with the place in the file), a plan's loader checks a
// saved or posted plan, a running show checks a live change against the
// canvas on air, and the compositors bound their work by the part of a
// layer on the canvas, so that whatever passes costs what is visible.
//
// Why these bounds: a layer larger than the canvas is a zoom, a layer
// partly off the canvas a picture sliding in or out, and both are
// ordinary. A layer reaching RectReach canvas sides past every edge is
// a zoom of up to 2×RectReach+1 times the canvas, which no show has
// needed; past that a number is a typo or an attack (a rect 2^40 pixels
// wide once passed every check and the next cut ran out of memory). The
// bound keeps every coordinate a compositor sees below 2^31 (the GPU's
// kernel reads them as 32-bit ints) and every product of two below 2^63.

// GeometryLimit is one bound on a show's geometry.
type GeometryLimit struct {
	Name   string // as the reference and the errors name it: rect_reach
	Value  int
	Unit   string // what Value counts
	Doc    string // what it bounds
	Advice string // what to do when a show goes past it
}

// The limits' values; GeometryLimits documents them.
const (
	// MaxSide is the largest width or height of a canvas or a source's
	// picture, in pixels.
	MaxSide = 16384
	// RectReach is how many canvas widths (heights) a layer's rect may
	// reach past the canvas's left and right (top and bottom) edges.
	RectReach = 4
	// CropReach is how many source widths (heights) a layer's crop may
	// reach past the edges of its source's picture: none.
	CropReach = 0
)

// GeometryLimits is the table the checks read and the reference prints.
var GeometryLimits = []GeometryLimit{
	{Name: "picture_side", Value: MaxSide, Unit: "pixels",
		Doc:    "The largest width or height of the canvas and of a source's picture; both are even (4:2:0 chroma) and at least 2.",
		Advice: "Use a smaller size: 3840x2160 is UHD."},
	{Name: "rect_reach", Value: RectReach, Unit: "canvas sides",
		Doc: "How far a layer's rect may reach past the canvas: x from -" + strconv.Itoa(RectReach) + " canvas widths, x + width up to " + strconv.Itoa(RectReach+1) +
			" (y and height likewise in canvas heights), so a rect is at most " + strconv.Itoa(2*RectReach+1) + " times the canvas on each side. " +
			"A layer larger than the canvas, or partly off it, is drawn at the cost of the part on the canvas.",
		Advice: "Check the arithmetic that computes the rect; to show part of a picture larger, crop it instead."},
	{Name: "crop_reach", Value: CropReach, Unit: "source sides",
		Doc:    "How far a layer's crop may reach past its source's picture: none, x and y from 0, x + width and y + height at most the source's size.",
		Advice: "Crop within the source's size (its size attribute; the show's size when it has none)."},
}

// limit returns the table's entry called name.
func limit(name string) GeometryLimit {
	for _, l := range GeometryLimits {
		if l.Name == name {
			return l
		}
	}
	panic("value: no geometry limit " + name)
}

// CheckSize refuses a canvas or picture size outside picture_side, or
// with an odd side.
func CheckSize(s Size) error {
	l := limit("picture_side")
	if s.W < 2 || s.H < 2 || s.W > MaxSide || s.H > MaxSide {
		return fmt.Errorf("size %s: width and height must be between 2 and %d (the %s limit). %s", s, MaxSide, l.Name, l.Advice)
	}
	if s.W%2 != 0 || s.H%2 != 0 {
		return fmt.Errorf("size %s: width and height must be even (4:2:0 chroma is subsampled by two)", s)
	}
	return nil
}

// CheckRect refuses a layer's rect [x, y, width, height] on a canvas of
// size c that is empty or reaches past rect_reach.
func CheckRect(c Size, r [4]int) error {
	return checkReach("rect", "on the "+c.String()+" canvas", c, r, RectReach, limit("rect_reach"))
}

// CheckCrop refuses a layer's crop [x, y, width, height] of a source
// picture of size s that is empty or reaches past crop_reach.
func CheckCrop(s Size, r [4]int) error {
	return checkReach("crop", "of the source's "+s.String()+" picture", s, r, CropReach, limit("crop_reach"))
}

func checkReach(what, where string, s Size, r [4]int, reach int, l GeometryLimit) error {
	x, y, w, h := r[0], r[1], r[2], r[3]
	if w <= 0 || h <= 0 {
		return fmt.Errorf("%s %s: width and height must be positive; got %dx%d", what, rectString(r), w, h)
	}
	x0, y0 := -reach*s.W, -reach*s.H
	x1, y1 := (reach+1)*s.W, (reach+1)*s.H
	// Each term is compared before any sum is made, so no sum overflows.
	if x < x0 || y < y0 || w > x1-x0 || h > y1-y0 || x > x1-w || y > y1-h {
		return fmt.Errorf("%s %s reaches past the %s limit %s: x and y must be at least %d and %d, x + width and y + height at most %d and %d. %s",
			what, rectString(r), l.Name, where, x0, y0, x1, y1, l.Advice)
	}
	return nil
}

func rectString(r [4]int) string {
	return fmt.Sprintf("[%d, %d, %d, %d]", r[0], r[1], r[2], r[3])
}
