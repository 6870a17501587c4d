package cpu

import (
	"fmt"
	"github.com/onairhq/onair/playout"
	"math"

	"github.com/onairhq/onair/frame"
)

// Transition writes into dst the transition of kind t (playout's cut, fade
// or wipe) from `from` to `to` at progress (clamped to [0,1]). All three frames must share format and size; dst may
// not alias either input. Metadata is taken from `to` once progress passes
// one half (a cut: always), else from `from`.
func Transition(t playout.Kind, dst, from, to *frame.Frame, progress float64) error {
	for _, f := range [2]*frame.Frame{from, to} {
		if f.Format != dst.Format || f.Width != dst.Width || f.Height != dst.Height {
			return fmt.Errorf("%v: input is %v %dx%d but the bus is %v %dx%d", t, f.Format, f.Width, f.Height, dst.Format, dst.Width, dst.Height)
		}
	}
	if math.IsNaN(progress) {
		progress = 0
	}
	progress = min(max(progress, 0), 1)
	switch t {
	case playout.Cut:
		return dst.CopyFrom(to)
	case playout.Fade:
		a := int32(math.Round(progress * 256))
		switch a {
		case 0:
			return dst.CopyFrom(from)
		case 256:
			return dst.CopyFrom(to)
		}
		mix(dst, from, to, a)
	case playout.Wipe:
		edge := int(math.Round(progress*float64(dst.Width))) &^ 1
		wipe(dst, from, to, edge)
	}
	if progress >= 0.5 {
		dst.CopyMeta(to)
	} else {
		dst.CopyMeta(from)
	}
	return nil
}

func mix(dst, a, b *frame.Frame, alpha int32) {
	na := 256 - alpha
	if dst.Format == frame.P010 {
		for p := 0; p < 2; p++ {
			d, x, y := dst.Plane16(p), a.Plane16(p), b.Plane16(p)
			dp, xp, yp := dst.Pitch[p]/2, a.Pitch[p]/2, b.Pitch[p]/2
			for r := 0; r < dst.Height>>p; r++ {
				dr, xr, yr := d[r*dp:r*dp+dst.Width], x[r*xp:r*xp+dst.Width], y[r*yp:r*yp+dst.Width]
				for i := range dr {
					dr[i] = uint16((int32(xr[i]>>6)*na+int32(yr[i]>>6)*alpha+128)>>8) << 6
				}
			}
		}
		return
	}
	for p := 0; p < 2; p++ {
		for r := 0; r < dst.Height>>p; r++ {
			dr := dst.Data[p][r*dst.Pitch[p] : r*dst.Pitch[p]+dst.Width]
			xr := a.Data[p][r*a.Pitch[p] : r*a.Pitch[p]+dst.Width]
			yr := b.Data[p][r*b.Pitch[p] : r*b.Pitch[p]+dst.Width]
			for i := range dr {
				dr[i] = uint8((int32(xr[i])*na + int32(yr[i])*alpha + 128) >> 8)
			}
		}
	}
}

func wipe(dst, from, to *frame.Frame, edge int) {
	bps := dst.Format.BytesPerSample()
	rowBytes := dst.Width * bps
	e := edge * bps // same byte offset in luma and in interleaved chroma rows
	for p := 0; p < 2; p++ {
		for r := 0; r < dst.Height>>p; r++ {
			d := dst.Data[p][r*dst.Pitch[p]:]
			copy(d[:e], to.Data[p][r*to.Pitch[p]:r*to.Pitch[p]+e])
			copy(d[e:rowBytes], from.Data[p][r*from.Pitch[p]+e:r*from.Pitch[p]+rowBytes])
		}
	}
}
