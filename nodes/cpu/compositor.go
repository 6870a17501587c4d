package cpu

import (
	"fmt"
	"math"

	"github.com/onairhq/onair/frame"
)

// Layer is one picture placed on the canvas.
type Layer struct {
	Frame   *frame.Frame // the picture; nil draws nothing
	Rect    frame.Rect   // where on the canvas, in canvas pixels (rounded to even)
	Fit     frame.Fit
	Crop    frame.Rect // the part of Frame to show, in its pixels; zero: all of it
	Opacity float64    // 1 opaque, 0 invisible; in between blends over what is below
	// A Frame with an alpha plane is keyed over what is below (frame.Key):
	// its opacity times each pixel's alpha.
	Z int // higher draws later (on top); equal Z keeps slice order
}

// Compositor renders layers onto a canvas frame. It caches the scaling
// filters of each geometry it has seen and reuses one scratch buffer, so a
// steady show renders without allocating. A Compositor is not safe for
// concurrent use; give each bus its own.
type Compositor struct {
	scalers map[scalerKey]*scaler
	tmp     []int32
	key     []uint8 // a keyed layer's scaled alpha over its visible rectangle
	order   []int
	renders uint64
}

// NewCompositor returns a compositor with empty caches.
func NewCompositor() *Compositor {
	return &Compositor{scalers: map[scalerKey]*scaler{}}
}

// maxScalers bounds the filter cache; the least recently used goes first.
const maxScalers = 64

func (c *Compositor) scalerFor(k scalerKey) *scaler {
	if s, ok := c.scalers[k]; ok {
		s.used = c.renders
		return s
	}
	if len(c.scalers) >= maxScalers {
		var oldK scalerKey
		oldest := uint64(math.MaxUint64)
		for k2, s := range c.scalers {
			if s.used < oldest {
				oldest, oldK = s.used, k2
			}
		}
		delete(c.scalers, oldK)
	}
	s := &scaler{
		lx: frame.NewFilterPart(k.sw, k.dw, k.x0, k.x1), ly: frame.NewFilterPart(k.sh, k.dh, k.y0, k.y1),
		cx: frame.NewFilterPart(k.sw/2, k.dw/2, k.x0/2, k.x1/2), cy: frame.NewFilterPart(k.sh/2, k.dh/2, k.y0/2, k.y1/2),
		used: c.renders,
	}
	s.lxs, s.lys, s.cxs, s.cys = findShrink(s.lx), findShrink(s.ly), findShrink(s.cx), findShrink(s.cy)
	c.scalers[k] = s
	return s
}

// Render paints dst black (limited range) and draws the layers on it in
// z-order. Every layer's frame must have dst's format, and none may be dst
// itself. dst's metadata is left to the caller (a bus stamps its own tick).
func (c *Compositor) Render(dst *frame.Frame, layers []Layer) error {
	if err := checkLayers(dst, layers); err != nil {
		return err
	}
	c.renderBand(dst, layers, 0, dst.Height)
	return nil
}

func checkLayers(dst *frame.Frame, layers []Layer) error {
	for i := range layers {
		if f := layers[i].Frame; f != nil && f.Format != dst.Format {
			return fmt.Errorf("layer %d: frame is %v but the canvas is %v: convert at the source", i, f.Format, dst.Format)
		}
	}
	return nil
}

// renderBand renders the rows [y0, y1) of the canvas (both even): black,
// then every layer clipped to the band. Bands of one canvas never touch
// each other's rows, so several compositors may render one canvas at once.
func (c *Compositor) renderBand(dst *frame.Frame, layers []Layer, y0, y1 int) {
	c.renders++
	y, cc := dst.Format.Black()
	dst.FillRect(0, y0, dst.Width, y1-y0, y, cc, cc)
	// Stable insertion sort of indices by Z, without allocating.
	c.order = c.order[:0]
	for i := range layers {
		c.order = append(c.order, i)
		for j := len(c.order) - 1; j > 0 && layers[c.order[j-1]].Z > layers[c.order[j]].Z; j-- {
			c.order[j-1], c.order[j] = c.order[j], c.order[j-1]
		}
	}
	for _, i := range c.order {
		c.draw(dst, &layers[i], y0, y1)
	}
}

func (c *Compositor) draw(dst *frame.Frame, l *Layer, y0, y1 int) {
	if l.Frame == nil || l.Opacity <= 0 || math.IsNaN(l.Opacity) {
		return
	}
	alpha := int32(math.Round(min(l.Opacity, 1) * 256))
	p := frame.Place(l.Frame.Width, l.Frame.Height, l.Crop, l.Rect, l.Fit)
	if p.Crop.Empty() || p.Dst.Empty() {
		return
	}
	if p.Dst != p.Pad && l.Frame.Alpha == nil {
		// Black padding around the picture: the strips of Pad outside Dst.
		// A picture with alpha (keyed) leaves its padding transparent.
		y, cc := dst.Format.Black()
		d, a := p.Dst, p.Pad
		blendFill(dst, band(frame.Rect{X: a.X, Y: a.Y, W: a.W, H: d.Y - a.Y}, y0, y1), y, cc, alpha)
		blendFill(dst, band(frame.Rect{X: a.X, Y: d.Y + d.H, W: a.W, H: a.Y + a.H - d.Y - d.H}, y0, y1), y, cc, alpha)
		blendFill(dst, band(frame.Rect{X: a.X, Y: d.Y, W: d.X - a.X, H: d.H}, y0, y1), y, cc, alpha)
		blendFill(dst, band(frame.Rect{X: d.X + d.W, Y: d.Y, W: a.X + a.W - d.X - d.W, H: d.H}, y0, y1), y, cc, alpha)
	}
	c.scaleInto(dst, l.Frame, p.Crop, p.Dst, alpha, y0, y1)
}

// band clips r to the rows [y0, y1).
func band(r frame.Rect, y0, y1 int) frame.Rect {
	top, bottom := max(r.Y, y0), min(r.Y+r.H, y1)
	if r.W <= 0 || bottom <= top {
		return frame.Rect{}
	}
	return frame.Rect{X: r.X, Y: top, W: r.W, H: bottom - top}
}

// blendFill blends a flat colour (stored samples) over rect with alpha.
func blendFill(dst *frame.Frame, r frame.Rect, y, cc uint16, alpha int32) {
	if r.Empty() {
		return
	}
	if alpha >= 256 {
		dst.FillRect(r.X, r.Y, r.W, r.H, y, cc, cc)
		return
	}
	r = r.Even().Clamp(dst.Width, dst.Height)
	if r.Empty() {
		return
	}
	na := 256 - alpha
	if dst.Format == frame.P010 {
		for p := 0; p < 2; p++ {
			pl, pitch, v := dst.Plane16(p), dst.Pitch[p]/2, int32(y>>6)
			if p == 1 {
				v = int32(cc >> 6)
			}
			for row := r.Y >> p; row < (r.Y+r.H)>>p; row++ {
				s := pl[row*pitch+r.X : row*pitch+r.X+r.W]
				for i := range s {
					s[i] = uint16((v*alpha+int32(s[i]>>6)*na+128)>>8) << 6
				}
			}
		}
		return
	}
	for p := 0; p < 2; p++ {
		pl, pitch, v := dst.Data[p], dst.Pitch[p], int32(y)
		if p == 1 {
			v = int32(cc)
		}
		for row := r.Y >> p; row < (r.Y+r.H)>>p; row++ {
			s := pl[row*pitch+r.X : row*pitch+r.X+r.W]
			for i := range s {
				s[i] = uint8((v*alpha + int32(s[i])*na + 128) >> 8)
			}
		}
	}
}
