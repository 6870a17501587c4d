package frame

import (
	"fmt"
	"math"
)

// The geometry of a layer on a canvas, shared by every backend's compositor:
// where a picture lands once its fit is applied, in even pixels for 4:2:0
// chroma. The CPU and CUDA compositors draw from the same Placement, so they
// agree on every pixel's source.

// Fit says how a layer's picture fills its rectangle.
type Fit uint8

const (
	// Stretch scales the picture to the rectangle, aspect ratio ignored.
	Stretch Fit = iota
	// Contain scales the picture to fit inside the rectangle, aspect kept,
	// and pads the rest of the rectangle black.
	Contain
	// Cover scales the picture to cover the rectangle, aspect kept, and
	// crops what overflows, equally on both sides.
	Cover
)

// ParseFit maps "stretch", "contain" and "cover" to a Fit.
func ParseFit(s string) (Fit, error) {
	switch s {
	case "stretch", "":
		return Stretch, nil
	case "contain":
		return Contain, nil
	case "cover":
		return Cover, nil
	}
	return 0, fmt.Errorf("unknown fit %q: use stretch, contain or cover", s)
}

func (f Fit) String() string {
	return [...]string{"stretch", "contain", "cover"}[f]
}

// Placement is where a layer's picture lands once its fit is applied: the
// source window that is read (Crop) and the canvas rectangle it is scaled to
// (Dst); Pad is the layer's whole rectangle, painted black first when Dst is
// smaller (contain).
type Placement struct {
	Crop, Dst, Pad Rect
}

// Place computes the geometry of a layer's fit for a srcW×srcH picture. All
// rectangles are rounded to even pixels for 4:2:0 chroma.
func Place(srcW, srcH int, crop, rect Rect, fit Fit) Placement {
	if crop.Empty() {
		crop = Rect{0, 0, srcW, srcH}
	}
	crop = crop.Even().Clamp(srcW, srcH)
	rect = rect.Even()
	p := Placement{Crop: crop, Dst: rect, Pad: rect}
	if crop.Empty() || rect.Empty() {
		return p
	}
	switch fit {
	case Contain:
		// Scale by the smaller ratio; compare cross products to stay exact.
		if crop.W*rect.H >= crop.H*rect.W { // wider than the rect: full width
			h := evenRound(float64(rect.W) * float64(crop.H) / float64(crop.W))
			p.Dst = Rect{rect.X, rect.Y + (rect.H-h)/2&^1, rect.W, h}
		} else {
			w := evenRound(float64(rect.H) * float64(crop.W) / float64(crop.H))
			p.Dst = Rect{rect.X + (rect.W-w)/2&^1, rect.Y, w, rect.H}
		}
	case Cover:
		if crop.W*rect.H >= crop.H*rect.W { // wider: crop the sides
			w := evenRound(float64(crop.H) * float64(rect.W) / float64(rect.H))
			p.Crop = Rect{crop.X + (crop.W-w)/2&^1, crop.Y, w, crop.H}
		} else {
			h := evenRound(float64(crop.W) * float64(rect.H) / float64(rect.W))
			p.Crop = Rect{crop.X, crop.Y + (crop.H-h)/2&^1, crop.W, h}
		}
	}
	return p
}

func evenRound(v float64) int {
	n := int(math.Round(v/2)) * 2
	if n < 2 {
		n = 2
	}
	return n
}

// Clamp cuts r to a w×h picture.
func (r Rect) Clamp(w, h int) Rect {
	x0, y0 := max(r.X, 0), max(r.Y, 0)
	x1, y1 := min(r.X+r.W, w), min(r.Y+r.H, h)
	return Rect{x0, y0, max(0, x1-x0), max(0, y1-y0)}
}

// Rect is a rectangle in pixels: X, Y of its top-left corner, W×H.
type Rect struct{ X, Y, W, H int }

// Empty reports whether r has no area.
func (r Rect) Empty() bool { return r.W <= 0 || r.H <= 0 }

// Even rounds a rectangle to even coordinates and sizes (4:2:0 chroma).
func (r Rect) Even() Rect {
	x0, y0 := r.X&^1, r.Y&^1
	x1, y1 := (r.X+r.W+1)&^1, (r.Y+r.H+1)&^1
	return Rect{x0, y0, x1 - x0, y1 - y0}
}
