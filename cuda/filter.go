package cuda

import "github.com/onairhq/onair/frame"

// The scaler's filters are frame's (frame.NewFilter), the CPU compositor's
// own, handed to the kernel as tables: the GPU's output matches the CPU's
// byte for byte.

// filterKey is one scaling geometry: a sw×sh source window scaled to
// dw×dh, of which the columns [x0, x1) and rows [y0, y1) are on the canvas
// (the block holds those positions only).
type filterKey struct{ sw, sh, dw, dh, x0, x1, y0, y1 int }

// block lays out the four filters of a geometry (luma x, luma y, chroma x,
// chroma y) as the kernel reads them: 4 tap counts, 4 start offsets, 4
// coefficient offsets, then the arrays (compositor.h).
func (k filterKey) block() []int32 {
	fs := [4]*frame.Filter{
		frame.NewFilterPart(k.sw, k.dw, k.x0, k.x1), frame.NewFilterPart(k.sh, k.dh, k.y0, k.y1),
		frame.NewFilterPart(k.sw/2, k.dw/2, k.x0/2, k.x1/2), frame.NewFilterPart(k.sh/2, k.dh/2, k.y0/2, k.y1/2),
	}
	n := 12
	for _, f := range fs {
		n += len(f.Start) + len(f.Coef)
	}
	b := make([]int32, 12, n)
	for i, f := range fs {
		b[i] = int32(f.Taps)
		b[4+i] = int32(len(b))
		b = append(b, f.Start...)
		b[8+i] = int32(len(b))
		b = append(b, f.Coef...)
	}
	return b
}
