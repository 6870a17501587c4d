package browser

// Pictures from a producer to the canvas format: BGRA and RGBA (opaque,
// straight or premultiplied alpha) and NV12 into NV12 or P010, BT.709
// limited range. The colour is always the picture composited over black
// (premultiplied colour is colour over black; straight colour is
// multiplied by its alpha first). Into a frame with an alpha plane (the
// pools of sources whose producer sends alpha, keyed over the scene by the
// compositors) each pixel's alpha goes there too, so the frame holds
// premultiplied colour and alpha, as frame/keying.go declares; a frame
// without one (key = "none") is the picture over black, as it always was.

import (
	"fmt"
	"math"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// Coeffs are BT.709 R'G'B' (full range, 0..255) to limited-range Y'CbCr
// at one bit depth, in 16-bit fixed point; the chroma rows take the sum of
// a 2x2 block (two more fractional bits). The GPU's converter
// (cuda.Picture) is handed the same values: its fields match.
type Coeffs struct {
	YR, YG, YB int32
	UR, UG, UB int32
	VR, VG, VB int32
	YOff, COff int32 // offsets with rounding, in the fixed point of each
}

// CoeffsFor returns the coefficients of the canvas format f (P010: 10 bits,
// anything else 8).
func CoeffsFor(f frame.Format) Coeffs {
	if f == frame.P010 {
		return coeffs10
	}
	return coeffs8
}

// Channels returns the byte of red, green and blue in a four-byte pixel of
// format f (alpha is byte 3).
func Channels(f ipc.PixelFormat) (r, g, b int) {
	if f == ipc.BGRA {
		return 2, 1, 0
	}
	return 0, 1, 2
}

var (
	coeffs8  = makeCoeffs(8)
	coeffs10 = makeCoeffs(10)
)

func makeCoeffs(bits int) Coeffs {
	const kr, kb = 0.2126, 0.0722
	kg := 1 - kr - kb
	sy := float64(int(219)<<(bits-8)) / 255 * 65536
	sc := float64(int(224)<<(bits-8)) / 255 * 65536
	r := func(v float64) int32 { return int32(math.Round(v)) }
	c := Coeffs{
		YR: r(kr * sy), YG: r(kg * sy), YB: r(kb * sy),
		UR: r(-kr / (2 - 2*kb) * sc), UG: r(-kg / (2 - 2*kb) * sc), UB: r(0.5 * sc),
		VR: r(0.5 * sc), VG: r(-kg / (2 - 2*kr) * sc), VB: r(-kb / (2 - 2*kr) * sc),
	}
	// Each chroma row sums to zero, so every grey is exactly neutral.
	c.UG = -c.UR - c.UB
	c.VG = -c.VR - c.VB
	c.YOff = int32(16<<(bits-8))<<16 + 1<<15
	c.COff = int32(128<<(bits-8))<<18 + 1<<17
	return c
}

// HasAlpha reports whether a producer's pictures carry alpha (four-byte
// pixels, straight or premultiplied): a keying import gives their frames
// an alpha plane, and every other picture's frames have none.
func HasAlpha(p ipc.Picture) bool {
	return (p.Format == ipc.BGRA || p.Format == ipc.RGBA) && p.Alpha != ipc.AlphaOpaque
}

// ToCanvas converts the picture in src, laid out as pic says, into dst: an
// NV12 or P010 frame of the picture's size.
func ToCanvas(dst *frame.Frame, src []byte, pic ipc.Picture) error {
	if dst.Width != pic.Width || dst.Height != pic.Height {
		return fmt.Errorf("convert: a %dx%d picture into a %dx%d frame", pic.Width, pic.Height, dst.Width, dst.Height)
	}
	if len(src) < pic.Size {
		return fmt.Errorf("convert: the buffer holds %d bytes, the picture needs %d", len(src), pic.Size)
	}
	switch pic.Format {
	case ipc.BGRA, ipc.RGBA:
		r, g, b := Channels(pic.Format)
		inBands(pic.Height, func(y0, y1 int) { rgbToCanvas(dst, src, pic, r, g, b, y0, y1) })
	case ipc.NV12:
		nv12ToCanvas(dst, src, pic)
		for i := range dst.Alpha {
			dst.Alpha[i] = frame.Opaque
		}
	default:
		return fmt.Errorf("convert: pixel format %v", pic.Format)
	}
	return nil
}

// straight[a<<8|c] is colour c of straight alpha a over black: c*a/255.
var straight = func() *[256 * 256]uint8 {
	var t [256 * 256]uint8
	for a := 0; a < 256; a++ {
		for c := 0; c < 256; c++ {
			t[a<<8|c] = uint8((c*a + 127) / 255)
		}
	}
	return &t
}()

// bandRows is the fewest rows a band of a conversion gets: pictures from
// 720p up are converted on up to four goroutines (1080p BGRA took 10 ms on
// one core of the H200 host: BENCHMARKS.md).
const bandRows = 360

// inBands runs convert over rows [0, h) in bands of even rows, in
// parallel when the picture is large enough to be worth it.
func inBands(h int, convert func(y0, y1 int)) {
	n := min(goruntime.NumCPU(), 4, h/bandRows)
	if n <= 1 {
		convert(0, h)
		return
	}
	var wg sync.WaitGroup
	var failed atomic.Pointer[panics.Error]
	step := (h/n + 1) &^ 1
	for y := 0; y < h; y += step {
		wg.Add(1)
		go func(y0, y1 int) {
			defer wg.Done()
			defer panics.Catch("a band of a browser picture's conversion", nil, func(err error) {
				failed.CompareAndSwap(nil, err.(*panics.Error))
			})
			convert(y0, y1)
		}(y, min(y+step, h))
	}
	wg.Wait()
	if e := failed.Load(); e != nil {
		panics.Rethrow(e) // on the import's own thread or handler: it fails the node
	}
}

// scratch holds a row pair's lumas and chromas, so a conversion allocates
// nothing once warm.
var scratch = sync.Pool{New: func() any { return new([]int32) }}

// rgbToCanvas converts four-byte pixels whose red, green and blue are at
// byte ri, gi, bi (alpha at 3), two rows at a time: four lumas and one
// chroma pair per 2x2 block.
func rgbToCanvas(dst *frame.Frame, src []byte, pic ipc.Picture, ri, gi, bi, y0, y1 int) {
	c := CoeffsFor(dst.Format)
	deep := dst.Format == frame.P010
	w := pic.Width
	premul := pic.Alpha == ipc.AlphaStraight
	rows := scratch.Get().(*[]int32)
	defer scratch.Put(rows)
	if cap(*rows) < 3*w {
		*rows = make([]int32, 3*w)
	}
	l0, l1, cbr := (*rows)[:w], (*rows)[w:2*w], (*rows)[2*w:3*w]
	for y := y0; y < y1; y += 2 {
		top := src[y*pic.Pitch : y*pic.Pitch+4*w]
		bot := src[(y+1)*pic.Pitch : (y+1)*pic.Pitch+4*w]
		for x, i := 0, 0; x+1 < w; x, i = x+2, i+8 {
			p := top[i : i+8 : i+8]
			q := bot[i : i+8 : i+8]
			ra, ga, ba := p[ri], p[gi], p[bi]
			rb, gb, bb := p[4+ri], p[4+gi], p[4+bi]
			rc, gc, bc := q[ri], q[gi], q[bi]
			rd, gd, bd := q[4+ri], q[4+gi], q[4+bi]
			if premul {
				s := straight
				a, b, e, d := int(p[3])<<8, int(p[7])<<8, int(q[3])<<8, int(q[7])<<8
				ra, ga, ba = s[a|int(ra)], s[a|int(ga)], s[a|int(ba)]
				rb, gb, bb = s[b|int(rb)], s[b|int(gb)], s[b|int(bb)]
				rc, gc, bc = s[e|int(rc)], s[e|int(gc)], s[e|int(bc)]
				rd, gd, bd = s[d|int(rd)], s[d|int(gd)], s[d|int(bd)]
			}
			l0[x] = (c.YR*int32(ra) + c.YG*int32(ga) + c.YB*int32(ba) + c.YOff) >> 16
			l0[x+1] = (c.YR*int32(rb) + c.YG*int32(gb) + c.YB*int32(bb) + c.YOff) >> 16
			l1[x] = (c.YR*int32(rc) + c.YG*int32(gc) + c.YB*int32(bc) + c.YOff) >> 16
			l1[x+1] = (c.YR*int32(rd) + c.YG*int32(gd) + c.YB*int32(bd) + c.YOff) >> 16
			sr := int32(ra) + int32(rb) + int32(rc) + int32(rd)
			sg := int32(ga) + int32(gb) + int32(gc) + int32(gd)
			sb := int32(ba) + int32(bb) + int32(bc) + int32(bd)
			cbr[x] = (c.UR*sr + c.UG*sg + c.UB*sb + c.COff) >> 18
			cbr[x+1] = (c.VR*sr + c.VG*sg + c.VB*sb + c.COff) >> 18
		}
		if deep {
			p0, p1 := dst.Plane16(0), dst.Plane16(1)
			store16(p0[y*dst.Pitch[0]/2:][:w], l0)
			store16(p0[(y+1)*dst.Pitch[0]/2:][:w], l1)
			store16(p1[(y/2)*dst.Pitch[1]/2:][:w], cbr)
			continue
		}
		store8(dst.Data[0][y*dst.Pitch[0]:][:w], l0)
		store8(dst.Data[0][(y+1)*dst.Pitch[0]:][:w], l1)
		store8(dst.Data[1][(y/2)*dst.Pitch[1]:][:w], cbr)
	}
	if dst.Alpha != nil {
		storeAlpha(dst, src, pic, y0, y1)
	}
}

// storeAlpha writes the alpha of rows [y0, y1) of a four-byte picture into
// dst's alpha plane: byte 3 of each pixel, or opaque where the picture has
// no alpha.
func storeAlpha(dst *frame.Frame, src []byte, pic ipc.Picture, y0, y1 int) {
	w := pic.Width
	for y := y0; y < y1; y++ {
		out := dst.Alpha[y*w : y*w+w]
		if pic.Alpha == ipc.AlphaOpaque {
			for i := range out {
				out[i] = frame.Opaque
			}
			continue
		}
		in := src[y*pic.Pitch : y*pic.Pitch+4*w]
		for i := range out {
			out[i] = in[4*i+3]
		}
	}
}

func store8(dst []byte, v []int32) {
	v = v[:len(dst)]
	for i := range dst {
		dst[i] = byte(v[i])
	}
}

func store16(dst []uint16, v []int32) {
	v = v[:len(dst)]
	for i := range dst {
		dst[i] = uint16(v[i]) << 6
	}
}

// nv12ToCanvas copies an NV12 picture (already BT.709 limited range), or
// widens it to P010 (an 8-bit sample v is the 10-bit 4v, stored in the
// high bits).
func nv12ToCanvas(dst *frame.Frame, src []byte, pic ipc.Picture) {
	w := pic.Width
	for p := 0; p < 2; p++ {
		base, rows := 0, pic.Height
		if p == 1 {
			base, rows = pic.Offset1, pic.Height/2
		}
		for y := 0; y < rows; y++ {
			in := src[base+y*pic.Pitch : base+y*pic.Pitch+w]
			if dst.Format == frame.P010 {
				out := dst.Plane16(p)[y*dst.Pitch[p]/2 : y*dst.Pitch[p]/2+w]
				for i, v := range in {
					out[i] = uint16(v) << 8
				}
				continue
			}
			copy(dst.Data[p][y*dst.Pitch[p]:y*dst.Pitch[p]+w], in)
		}
	}
}
