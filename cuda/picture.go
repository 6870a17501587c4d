package cuda

/*
#cgo CFLAGS: -I${SRCDIR}
#include <stdlib.h>
#include "driver.h"
#include "compositor.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/onairhq/onair/frame"
)

// Picture is a browser source's picture in device memory, to be converted
// to the canvas format by ConvertPicture (compositor.h's onair_picture: the
// GPU run of nodes/browser's converter, which computes Coeffs).
type Picture struct {
	Src           DevicePtr // the picture's first byte
	Width, Height int       // pixels, even
	Pitch         int       // bytes per row (of both planes of NV12)
	NV12          bool      // an NV12 picture, CbCr plane at Offset1; otherwise four bytes a pixel
	Offset1       int
	R, G, B       int  // byte of red, green and blue in a four-byte pixel (alpha is byte 3)
	Straight      bool // colours not multiplied by alpha: composite over black first
	Alpha         bool // byte 3 is alpha (straight or premultiplied): into a frame with an alpha plane it goes there
	Coeffs        Coeffs
}

// Coeffs are the converter's fixed-point BT.709 coefficients for the
// frame's bit depth, as nodes/browser computes them: luma from R'G'B' with
// 16 fractional bits, chroma from the sum of a 2x2 block with 18; the
// offsets include the rounding.
type Coeffs struct {
	YR, YG, YB, UR, UG, UB, VR, VG, VB int32
	YOff, COff                         int32
}

// args fills the kernel's argument block for converting into dst.
func (p *Picture) args(a *C.onair_picture_args, dst *Frame) error {
	if dst.Width != p.Width || dst.Height != p.Height {
		return fmt.Errorf("cuda: converting a %dx%d picture into a %dx%d frame", p.Width, p.Height, dst.Width, dst.Height)
	}
	if p.Src == 0 || p.Width <= 0 || p.Height <= 0 || p.Width%2 != 0 || p.Height%2 != 0 {
		return fmt.Errorf("cuda: a %dx%d picture at %#x: the size must be positive and even", p.Width, p.Height, p.Src)
	}
	row := 4 * p.Width
	if p.NV12 {
		row = p.Width
	}
	if p.Pitch < row {
		return fmt.Errorf("cuda: a picture row of %d bytes with a pitch of %d", row, p.Pitch)
	}
	*a = C.onair_picture_args{
		src: C.onair_u64(p.Src), y: C.onair_u64(dst.Plane[0]), c: C.onair_u64(dst.Plane[1]),
		src_pitch: C.int(p.Pitch), src_offset1: C.int(p.Offset1), dst_pitch: C.int(dst.Pitch),
		width: C.int(p.Width), height: C.int(p.Height),
		r: C.int(p.R), g: C.int(p.G), b: C.int(p.B),
		straight: cbool(p.Straight), nv12: cbool(p.NV12),
		has_alpha: cbool(p.Alpha || p.Straight), alpha: C.onair_u64(dst.Alpha),
		bps: 1, shift: 0,
		k: C.onair_picture_coeffs{
			yr: C.int(p.Coeffs.YR), yg: C.int(p.Coeffs.YG), yb: C.int(p.Coeffs.YB),
			ur: C.int(p.Coeffs.UR), ug: C.int(p.Coeffs.UG), ub: C.int(p.Coeffs.UB),
			vr: C.int(p.Coeffs.VR), vg: C.int(p.Coeffs.VG), vb: C.int(p.Coeffs.VB),
			yoff: C.int(p.Coeffs.YOff), coff: C.int(p.Coeffs.COff),
		},
	}
	if dst.Format == frame.P010 {
		a.bps, a.shift = 2, 6
	}
	return nil
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// PictureConverter converts pictures into frames on one stream, one kernel
// launch each; its argument block lives in C memory, so a conversion
// allocates nothing.
type PictureConverter struct {
	s    *Stream
	args *C.onair_picture_args
}

// NewPictureConverter makes a converter queueing on s. It loads the
// kernels (the driver's JIT, once per context).
func NewPictureConverter(s *Stream) (*PictureConverter, error) {
	if _, err := s.ctx.kernels(); err != nil {
		return nil, err
	}
	return &PictureConverter{s: s, args: (*C.onair_picture_args)(C.calloc(1, C.sizeof_onair_picture_args))}, nil
}

// Convert queues converting pic into dst (a frame of the picture's size,
// its alpha plane, if it has one, written with the picture's alpha,
// written on the converter's stream: FramePool.Get(stream)) and marks dst
// written. The picture's memory is read until the stream passes this
// point: record an event after Convert and wait for it before the memory
// is reused.
func (c *PictureConverter) Convert(dst *Frame, pic Picture) error {
	if err := pic.args(c.args, dst); err != nil {
		return err
	}
	m, err := c.s.ctx.kernels()
	if err != nil {
		return err
	}
	const bx, by = 32, 8
	gx := (pic.Width/2 + bx - 1) / bx
	gy := (pic.Height/2 + by - 1) / by
	s := c.s
	rc := C.onair_launch(s.ctx.d.t, s.ctx.h, s.h, nil, 0, m.picture, C.uint(gx), C.uint(gy), bx, by, unsafe.Pointer(c.args), dst.written.h)
	return launchErr(s.ctx.d, rc)
}

// Close frees the argument block.
func (c *PictureConverter) Close() {
	if c.args != nil {
		C.free(unsafe.Pointer(c.args))
		c.args = nil
	}
}
