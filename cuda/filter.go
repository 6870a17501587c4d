package cuda

import "github.com/onairhq/onair/frame"

// The scaler's filters are frame's (frame.NewFilter), the CPU compositor's
// own, handed to the kernel as tables: the GPU's output matches the CPU's
// byte for byte.

// filterKey is one scaling geometry: source window and destination sizes.
type filterKey struct{ sw, sh, dw, dh int }

// block lays out the four filters of a geometry (luma x, luma y, chroma x,
// chroma y) as the kernel reads them: 4 tap counts, 4 start offsets, 4
// coefficient offsets, then the arrays (compositor.h).
func (k filterKey) block() []int32 {
	fs := [4]*frame.Filter{frame.NewFilter(k.sw, k.dw), frame.NewFilter(k.sh, k.dh), frame.NewFilter(k.sw/2, k.dw/2), frame.NewFilter(k.sh/2, k.dh/2)}
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
