package browser

import (
	"bytes"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// TestPatternRepaintsOnlyWhatChanged: a buffer holding frame old, with the
// rectangles dirty() names repainted for frame seq, is byte for byte a
// buffer painted whole for seq; and the number reads back after conversion.
func TestPatternRepaintsOnlyWhatChanged(t *testing.T) {
	for _, sz := range [][2]int{{320, 180}, {1920, 1080}, {64, 36}} {
		pic := ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, sz[0], sz[1])
		paint := func(buf []byte, rs []frame.Rect, seq uint64) {
			for _, r := range rs {
				PaintPattern(buf[r.Y*pic.Pitch+r.X*4:], pic.Pitch, pic.Width, pic.Height, r, seq)
			}
		}
		for _, c := range [][2]uint64{{1, 2}, {5, 9}, {200, 1000}, {0xfffffffe, 0x100000003}} {
			inc, whole := make([]byte, pic.Size), make([]byte, pic.Size)
			paint(inc, dirty(pic, 0, c[0]), c[0])
			paint(inc, dirty(pic, c[0], c[1]), c[1])
			paint(whole, dirty(pic, 0, c[1]), c[1])
			if !bytes.Equal(inc, whole) {
				t.Fatalf("%dx%d: frame %d repainted as %d differs from %d painted whole", pic.Width, pic.Height, c[0], c[1], c[1])
			}
			f, _ := frame.New(frame.NV12, pic.Width, pic.Height)
			if err := ToCanvas(f, whole, pic); err != nil {
				t.Fatal(err)
			}
			if n, want := PatternNumber(f), uint32(c[1]&(1<<PatternBits(pic.Width)-1)); n != want {
				t.Errorf("%dx%d: frame %d reads back as %d", pic.Width, pic.Height, c[1], n)
			}
		}
	}
}
