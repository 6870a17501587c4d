package cpu

import (
	"github.com/onairhq/onair/frame"
)

// coefBits is the fixed-point precision of filter coefficients (the
// filters are frame's, shared with the GPU); interBits the fractional bits
// kept between the horizontal and the vertical pass.
const (
	coefBits  = frame.CoefBits
	interBits = 6
)

// sample is a stored sample type: bytes for NV12, words for P010.
type sample interface{ ~uint8 | ~uint16 }

// planeJob scales the window (sx0, sy0, sw×sh, in sample units) of a source
// plane onto the rectangle at (dx0, dy0) of a destination plane, drawing only
// destination columns [vx0, vx1) and rows [vy0, vy1) relative to that
// rectangle, blended with alpha (256 = opaque). ch is 1 for luma and 2 for
// interleaved chroma; shift converts stored samples to their value (6 for
// P010, 0 for NV12). With key set, each sample is keyed instead
// (frame.Key): key holds the layer's alpha for the visible rectangle
// [vx0, vx1) × [vy0, vy1) in luma pixels, keyPitch bytes a row, and black
// is the value of black in this plane.
type planeJob[T sample] struct {
	src                []T
	srcPitch           int // in samples of T
	sx0, sy0           int // in pixels (chroma: pairs)
	dst                []T
	dstPitch           int
	dx0, dy0           int
	vx0, vx1, vy0, vy1 int
	ch                 int
	shift              uint
	alpha              int32
	fx, fy             *frame.Filter
	key                []uint8
	keyPitch           int
	black              int32
	rx, ry             shrink // the exact 2:1 or 4:1 runs of fx and fy
}

// run draws the job: the part inside both filters' exact shrinks
// (shrink) by the fast path, the rest (edges, other ratios, keyed
// layers) by the general one; the two compute the same bytes.
func (j *planeJob[T]) run(tmp []int32) []int32 {
	if j.key != nil || j.rx.r == 0 || j.rx.r != j.ry.r {
		return j.runGeneral(tmp)
	}
	ix0, ix1 := max(j.vx0, j.rx.lo), min(j.vx1, j.rx.hi)
	iy0, iy1 := max(j.vy0, j.ry.lo), min(j.vy1, j.ry.hi)
	if ix1-ix0 < 8 || iy1 <= iy0 {
		return j.runGeneral(tmp)
	}
	part := func(x0, x1, y0, y1 int) {
		if x1 > x0 && y1 > y0 {
			p := *j
			p.vx0, p.vx1, p.vy0, p.vy1 = x0, x1, y0, y1
			tmp = p.runGeneral(tmp)
		}
	}
	part(j.vx0, j.vx1, j.vy0, iy0)
	part(j.vx0, j.vx1, iy1, j.vy1)
	// The rows between in bands of shrinkBand, each band's edge columns
	// right after its inside, while their source rows are in the cache:
	// drawn alone, a column of a 1080p source reads a cache line from
	// memory per source row (a third of a 4×4 grid's time).
	for y := iy0; y < iy1; y += shrinkBand {
		y1 := min(y+shrinkBand, iy1)
		tmp = j.runShrink(tmp, ix0, ix1, y, y1)
		part(j.vx0, ix0, y, y1)
		part(ix1, j.vx1, y, y1)
	}
	return tmp
}

// shrinkBand is how many output rows the fast path draws before the
// edge columns beside them: 4:1 reads 4·32 + 4 source rows for a band,
// 250 KB of a 1080p luma plane, and starts its carried sums anew (4 rows).
const shrinkBand = 32

func (j *planeJob[T]) runGeneral(tmp []int32) []int32 {
	vw := j.vx1 - j.vx0
	if vw <= 0 || j.vy1 <= j.vy0 {
		return tmp
	}
	// Source rows the visible destination rows reach.
	rlo := int(j.fy.Start[j.vy0])
	rhi := int(j.fy.Start[j.vy1-1]) + j.fy.Taps
	rows := rhi - rlo
	rowLen := vw * j.ch
	if need := rows*rowLen + rowLen; cap(tmp) < need {
		tmp = make([]int32, need)
	} else {
		tmp = tmp[:need]
	}
	fx, ch, shift := j.fx, j.ch, j.shift
	taps := fx.Taps
	const hround = 1 << (coefBits - interBits - 1)
	const hshift = coefBits - interBits
	for r := 0; r < rows; r++ {
		srow := j.src[(j.sy0+rlo+r)*j.srcPitch+j.sx0*ch:]
		out := tmp[r*rowLen : (r+1)*rowLen]
		if ch == 1 && taps == 4 { // the 2:1 shrink of a grid cell
			for i := range out {
				x := j.vx0 + i
				sp := srow[int(fx.Start[x]):]
				sp = sp[:4]
				cf := fx.Coef[x*4:]
				cf = cf[:4]
				s := cf[0]*(int32(sp[0])>>shift) + cf[1]*(int32(sp[1])>>shift) + cf[2]*(int32(sp[2])>>shift) + cf[3]*(int32(sp[3])>>shift)
				out[i] = (s + hround) >> hshift
			}
			continue
		}
		if ch == 2 && taps == 4 {
			for i := 0; i+1 < len(out); i += 2 {
				x := j.vx0 + i/2
				sp := srow[int(fx.Start[x])*2:]
				sp = sp[:8]
				cf := fx.Coef[x*4:]
				cf = cf[:4]
				out[i] = (cf[0]*(int32(sp[0])>>shift) + cf[1]*(int32(sp[2])>>shift) + cf[2]*(int32(sp[4])>>shift) + cf[3]*(int32(sp[6])>>shift) + hround) >> hshift
				out[i+1] = (cf[0]*(int32(sp[1])>>shift) + cf[1]*(int32(sp[3])>>shift) + cf[2]*(int32(sp[5])>>shift) + cf[3]*(int32(sp[7])>>shift) + hround) >> hshift
			}
			continue
		}
		if ch == 1 {
			for i := range out {
				x := j.vx0 + i
				st := int(fx.Start[x])
				cf := fx.Coef[x*taps : x*taps+taps]
				sp := srow[st:]
				sp = sp[:len(cf)]
				var s int32
				for k, c := range cf {
					s += c * (int32(sp[k]) >> shift)
				}
				out[i] = (s + hround) >> hshift
			}
			continue
		}
		for i := 0; i+1 < len(out); i += 2 {
			x := j.vx0 + i/2
			st := int(fx.Start[x]) * 2
			cf := fx.Coef[x*taps : x*taps+taps]
			sp := srow[st:]
			sp = sp[:2*len(cf)]
			var s0, s1 int32
			for k, c := range cf {
				s0 += c * (int32(sp[2*k]) >> shift)
				s1 += c * (int32(sp[2*k+1]) >> shift)
			}
			out[i] = (s0 + hround) >> hshift
			out[i+1] = (s1 + hround) >> hshift
		}
	}
	// Vertical pass: accumulate whole rows tap by tap (sequential memory).
	acc := tmp[rows*rowLen : rows*rowLen+rowLen]
	fy := j.fy
	const vround = 1 << (coefBits + interBits - 1)
	maxv := int32(255)
	if shift > 0 {
		maxv = 1023
	}
	a, na := j.alpha, 256-j.alpha
	for y := j.vy0; y < j.vy1; y++ {
		var k0, k1 []uint8 // a keyed row's alphas: its own (luma), or the two its chroma covers
		if j.key != nil {
			r := (y - j.vy0) * ch
			k0 = j.key[r*j.keyPitch:]
			k1 = j.key[(r+ch-1)*j.keyPitch:]
		}
		base := (int(fy.Start[y]) - rlo) * rowLen
		cf := fy.Coef[y*fy.Taps : y*fy.Taps+fy.Taps]
		if len(cf) == 4 { // the 2:1 shrink: one fused pass
			r0 := tmp[base:]
			r0 = r0[:len(acc)]
			r1 := tmp[base+rowLen:]
			r1 = r1[:len(acc)]
			r2 := tmp[base+2*rowLen:]
			r2 = r2[:len(acc)]
			r3 := tmp[base+3*rowLen:]
			r3 = r3[:len(acc)]
			c0, c1, c2, c3 := cf[0], cf[1], cf[2], cf[3]
			for i := range acc {
				acc[i] = vround + c0*r0[i] + c1*r1[i] + c2*r2[i] + c3*r3[i]
			}
		} else {
			for i := range acc {
				acc[i] = vround
			}
			for k, c := range cf {
				if c == 0 {
					continue
				}
				src := tmp[base+k*rowLen:]
				src = src[:len(acc)]
				for i := range acc {
					acc[i] += c * src[i]
				}
			}
		}
		drow := j.dst[(j.dy0+y)*j.dstPitch+(j.dx0+j.vx0)*ch:]
		drow = drow[:len(acc)]
		if j.key != nil {
			j.keyRow(drow, acc, k0, k1, maxv)
			continue
		}
		for i, s := range acc {
			v := s >> (coefBits + interBits)
			if v > maxv {
				v = maxv
			} else if v < 0 {
				v = 0
			}
			if a < 256 {
				v = (v*a + (int32(drow[i])>>shift)*na + 128) >> 8
			}
			drow[i] = T(v << shift)
		}
	}
	return tmp
}

// keyRow keys one row of filtered sums acc into drow (frame.Key): luma
// with each pixel's alpha in k0, a chroma pair with the quad alpha of the
// two pixels above it in k0 and the two below in k1.
func (j *planeJob[T]) keyRow(drow []T, acc []int32, k0, k1 []uint8, maxv int32) {
	o, black, shift := j.alpha, j.black, j.shift
	if j.ch == 1 {
		k0 = k0[:len(acc)]
		for i, s := range acc {
			v := min(max(s>>(coefBits+interBits), 0), maxv)
			e := frame.KeyAlpha(o, int32(k0[i]))
			drow[i] = T(frame.Key(v, int32(drow[i])>>shift, black, o, e, maxv) << shift)
		}
		return
	}
	k0, k1 = k0[:len(acc)], k1[:len(acc)]
	for i := 0; i+1 < len(acc); i += 2 {
		e := frame.KeyAlpha(o, frame.QuadAlpha(int32(k0[i]), int32(k0[i+1]), int32(k1[i]), int32(k1[i+1])))
		vb := min(max(acc[i]>>(coefBits+interBits), 0), maxv)
		vr := min(max(acc[i+1]>>(coefBits+interBits), 0), maxv)
		drow[i] = T(frame.Key(vb, int32(drow[i])>>shift, black, o, e, maxv) << shift)
		drow[i+1] = T(frame.Key(vr, int32(drow[i+1])>>shift, black, o, e, maxv) << shift)
	}
}

// scalerKey identifies the filters of one scaling geometry: a sw×sh
// window scaled to dw×dh, of which the columns [x0, x1) and rows [y0, y1)
// are on the canvas (the filters hold those positions only).
type scalerKey struct{ sw, sh, dw, dh, x0, x1, y0, y1 int }

type scaler struct {
	lx, ly, cx, cy *frame.Filter
	lxs, lys       shrink // their exact-shrink runs (findShrink), found once
	cxs, cys       shrink
	used           uint64 // the compositor's render count when last used
}

// scaleInto draws the crop window of src stretched onto rect of dst (both
// even), clipped to dst, blended with alpha (256 = opaque).
func (c *Compositor) scaleInto(dst, src *frame.Frame, crop, rect frame.Rect, alpha int32, y0, y1 int) {
	// Visible part of rect, within the band of rows [y0, y1).
	vx0, vy0 := max(0, -rect.X), max(0, -rect.Y, y0-rect.Y)
	vx1, vy1 := min(rect.W, dst.Width-rect.X), min(rect.H, dst.Height-rect.Y, y1-rect.Y)
	if vx1 <= vx0 || vy1 <= vy0 {
		return
	}
	keyed := src.Alpha != nil
	if crop.W == rect.W && crop.H == rect.H && alpha >= 256 && !keyed {
		copyRect(dst, src, crop, rect, vx0, vy0, vx1, vy1)
		return
	}
	// The filters hold the positions of the part of rect on the canvas
	// (even: rect and canvas are), so that their size and the time to
	// build them follow what is drawn however large the layer. From here
	// on the window is the rect: its columns and rows are counted from
	// the window's corner (wx0, wy0).
	wx0, wy0 := max(0, -rect.X), max(0, -rect.Y)
	wx1, wy1 := min(rect.W, dst.Width-rect.X), min(rect.H, dst.Height-rect.Y)
	sc := c.scalerFor(scalerKey{crop.W, crop.H, rect.W, rect.H, wx0, wx1, wy0, wy1})
	rect.X, rect.Y = rect.X+wx0, rect.Y+wy0
	vx0, vx1, vy0, vy1 = vx0-wx0, vx1-wx0, vy0-wy0, vy1-wy0
	// A keyed layer's alpha over the visible rectangle: the plane itself
	// at 1:1, else scaled with the luma filters into c.key.
	var key []uint8
	keyPitch := 0
	if keyed {
		vw, vh := vx1-vx0, vy1-vy0
		if crop.W == rect.W && crop.H == rect.H {
			key, keyPitch = src.Alpha[(crop.Y+wy0+vy0)*src.Width+crop.X+wx0+vx0:], src.Width
		} else {
			if cap(c.key) < vw*vh {
				c.key = make([]uint8, vw*vh)
			}
			key, keyPitch = c.key[:vw*vh], vw
			c.tmp = (&planeJob[uint8]{
				src: src.Alpha, srcPitch: src.Width, sx0: crop.X, sy0: crop.Y,
				dst: key, dstPitch: vw, dx0: -vx0, dy0: -vy0,
				vx0: vx0, vx1: vx1, vy0: vy0, vy1: vy1, ch: 1, alpha: 256, fx: sc.lx, fy: sc.ly, rx: sc.lxs, ry: sc.lys,
			}).run(c.tmp)
		}
	}
	by, bc := dst.Format.Black()
	if dst.Format == frame.P010 {
		c.tmp = (&planeJob[uint16]{
			src: src.Plane16(0), srcPitch: src.Pitch[0] / 2, sx0: crop.X, sy0: crop.Y,
			dst: dst.Plane16(0), dstPitch: dst.Pitch[0] / 2, dx0: rect.X, dy0: rect.Y,
			vx0: vx0, vx1: vx1, vy0: vy0, vy1: vy1, ch: 1, shift: 6, alpha: alpha, fx: sc.lx, fy: sc.ly, rx: sc.lxs, ry: sc.lys,
			key: key, keyPitch: keyPitch, black: int32(by >> 6),
		}).run(c.tmp)
		c.tmp = (&planeJob[uint16]{
			src: src.Plane16(1), srcPitch: src.Pitch[1] / 2, sx0: crop.X / 2, sy0: crop.Y / 2,
			dst: dst.Plane16(1), dstPitch: dst.Pitch[1] / 2, dx0: rect.X / 2, dy0: rect.Y / 2,
			vx0: vx0 / 2, vx1: vx1 / 2, vy0: vy0 / 2, vy1: vy1 / 2, ch: 2, shift: 6, alpha: alpha, fx: sc.cx, fy: sc.cy, rx: sc.cxs, ry: sc.cys,
			key: key, keyPitch: keyPitch, black: int32(bc >> 6),
		}).run(c.tmp)
		return
	}
	c.tmp = (&planeJob[uint8]{
		src: src.Data[0], srcPitch: src.Pitch[0], sx0: crop.X, sy0: crop.Y,
		dst: dst.Data[0], dstPitch: dst.Pitch[0], dx0: rect.X, dy0: rect.Y,
		vx0: vx0, vx1: vx1, vy0: vy0, vy1: vy1, ch: 1, alpha: alpha, fx: sc.lx, fy: sc.ly, rx: sc.lxs, ry: sc.lys,
		key: key, keyPitch: keyPitch, black: int32(by),
	}).run(c.tmp)
	c.tmp = (&planeJob[uint8]{
		src: src.Data[1], srcPitch: src.Pitch[1], sx0: crop.X / 2, sy0: crop.Y / 2,
		dst: dst.Data[1], dstPitch: dst.Pitch[1], dx0: rect.X / 2, dy0: rect.Y / 2,
		vx0: vx0 / 2, vx1: vx1 / 2, vy0: vy0 / 2, vy1: vy1 / 2, ch: 2, alpha: alpha, fx: sc.cx, fy: sc.cy, rx: sc.cxs, ry: sc.cys,
		key: key, keyPitch: keyPitch, black: int32(bc),
	}).run(c.tmp)
}

// copyRect is the 1:1 opaque case: a row copy per visible row.
func copyRect(dst, src *frame.Frame, crop, rect frame.Rect, vx0, vy0, vx1, vy1 int) {
	bps := dst.Format.BytesPerSample()
	for p := 0; p < 2; p++ {
		sh := p // chroma rows are half as many; columns stay in bytes (pairs)
		n := (vx1 - vx0) * bps
		for y := vy0 >> sh; y < vy1>>sh; y++ {
			so := (crop.Y>>sh+y)*src.Pitch[p] + (crop.X+vx0)*bps
			do := (rect.Y>>sh+y)*dst.Pitch[p] + (rect.X+vx0)*bps
			copy(dst.Data[p][do:do+n], src.Data[p][so:so+n])
		}
	}
}
