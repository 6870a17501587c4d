package browser

import (
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// fill paints every pixel of a four-byte picture with one colour, given
// as red, green, blue, alpha whatever the byte order.
func fill(pic ipc.Picture, r, g, b, a byte) []byte {
	buf := make([]byte, pic.Size)
	for y := 0; y < pic.Height; y++ {
		for x := 0; x < pic.Width; x++ {
			p := buf[y*pic.Pitch+4*x:]
			if pic.Format == ipc.BGRA {
				p[0], p[1], p[2], p[3] = b, g, r, a
			} else {
				p[0], p[1], p[2], p[3] = r, g, b, a
			}
		}
	}
	return buf
}

func yuvAt(f *frame.Frame, x, y int) (int, int, int) {
	if f.Format == frame.P010 {
		p0, p1 := f.Plane16(0), f.Plane16(1)
		c := (y/2)*f.Pitch[1]/2 + x&^1
		return int(p0[y*f.Pitch[0]/2+x] >> 6), int(p1[c] >> 6), int(p1[c+1] >> 6)
	}
	c := (y/2)*f.Pitch[1] + x&^1
	return int(f.Data[0][y*f.Pitch[0]+x]), int(f.Data[1][c]), int(f.Data[1][c+1])
}

// TestColoursLandWhereBT709LimitedPutsThem checks the conversion against
// values worked out by hand from BT.709 (Kr 0.2126, Kb 0.0722) in limited
// range: white 235/128/128, black 16/128/128, red 63/102/240, and alpha
// composited over black whether it came straight or premultiplied.
func TestColoursLandWhereBT709LimitedPutsThem(t *testing.T) {
	type yuv struct{ y, u, v int }
	cases := []struct {
		name       string
		f          ipc.PixelFormat
		alpha      ipc.Alpha
		r, g, b, a byte
		nv12, p010 yuv
	}{
		{"white", ipc.BGRA, ipc.AlphaOpaque, 255, 255, 255, 0, yuv{235, 128, 128}, yuv{940, 512, 512}},
		{"black", ipc.RGBA, ipc.AlphaOpaque, 0, 0, 0, 255, yuv{16, 128, 128}, yuv{64, 512, 512}},
		{"red", ipc.BGRA, ipc.AlphaOpaque, 255, 0, 0, 255, yuv{63, 102, 240}, yuv{250, 409, 960}},
		{"red rgba", ipc.RGBA, ipc.AlphaOpaque, 255, 0, 0, 255, yuv{63, 102, 240}, yuv{250, 409, 960}},
		{"green", ipc.BGRA, ipc.AlphaOpaque, 0, 255, 0, 255, yuv{173, 42, 26}, yuv{691, 167, 105}},
		{"blue", ipc.RGBA, ipc.AlphaOpaque, 0, 0, 255, 255, yuv{32, 240, 118}, yuv{127, 960, 471}},
		{"grey", ipc.BGRA, ipc.AlphaOpaque, 128, 128, 128, 7, yuv{126, 128, 128}, yuv{504, 512, 512}},
		{"half red straight", ipc.BGRA, ipc.AlphaStraight, 255, 0, 0, 128, yuv{39, 115, 184}, yuv{157, 460, 737}},
		{"half red premultiplied", ipc.RGBA, ipc.AlphaPremultiplied, 128, 0, 0, 128, yuv{39, 115, 184}, yuv{157, 460, 737}},
		{"transparent straight", ipc.BGRA, ipc.AlphaStraight, 255, 255, 255, 0, yuv{16, 128, 128}, yuv{64, 512, 512}},
	}
	for _, c := range cases {
		pic := ipc.NewPicture(c.f, c.alpha, 6, 4)
		pic.Pitch += 8 // padded rows
		pic.Size = pic.Pitch * pic.Height
		src := fill(pic, c.r, c.g, c.b, c.a)
		for _, ff := range []frame.Format{frame.NV12, frame.P010} {
			dst, _ := frame.New(ff, 6, 4)
			if err := ToCanvas(dst, src, pic); err != nil {
				t.Fatal(err)
			}
			want := c.nv12
			if ff == frame.P010 {
				want = c.p010
			}
			for _, at := range [][2]int{{0, 0}, {5, 3}, {2, 1}} {
				y, u, v := yuvAt(dst, at[0], at[1])
				if abs(y-want.y) > 1 || abs(u-want.u) > 1 || abs(v-want.v) > 1 {
					t.Errorf("%s as %v at %v: %d/%d/%d, want %d/%d/%d (±1)", c.name, ff, at, y, u, v, want.y, want.u, want.v)
				}
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestChromaIsTheBlockAverage: a 2x2 block of two colours gets the
// average chroma; luma stays per pixel.
func TestChromaIsTheBlockAverage(t *testing.T) {
	pic := ipc.NewPicture(ipc.RGBA, ipc.AlphaOpaque, 2, 2)
	src := fill(pic, 255, 0, 0, 255)
	copy(src[4:8], []byte{0, 0, 255, 255}) // top right blue
	dst, _ := frame.New(frame.NV12, 2, 2)
	ToCanvas(dst, src, pic)
	y0, u, v := yuvAt(dst, 0, 0)
	y1, _, _ := yuvAt(dst, 1, 0)
	// three red, one blue
	if y0 != 63 || y1 != 32 || abs(u-(3*102+240)/4) > 1 || abs(v-(3*240+118)/4) > 1 {
		t.Errorf("got y %d %d, chroma %d %d", y0, y1, u, v)
	}
}

func TestNV12IsCopiedOrWidened(t *testing.T) {
	pic := ipc.Picture{Format: ipc.NV12, Width: 4, Height: 2, Pitch: 8, Offset1: 32, Size: 40}
	src := make([]byte, pic.Size)
	for i := range src {
		src[i] = byte(16 + i)
	}
	dst, _ := frame.New(frame.NV12, 4, 2)
	if err := ToCanvas(dst, src, pic); err != nil {
		t.Fatal(err)
	}
	if y, u, v := yuvAt(dst, 1, 1); y != 16+8+1 || u != 16+32 || v != 16+33 {
		t.Errorf("nv12 copy: %d %d %d", y, u, v)
	}
	deep, _ := frame.New(frame.P010, 4, 2)
	ToCanvas(deep, src, pic)
	if y, _, _ := yuvAt(deep, 1, 1); y != (16+8+1)*4 {
		t.Errorf("p010 widening: %d, want %d", y, (16+8+1)*4)
	}
}

func TestConvertRefusesMismatches(t *testing.T) {
	pic := ipc.NewPicture(ipc.BGRA, ipc.AlphaOpaque, 4, 4)
	dst, _ := frame.New(frame.NV12, 8, 4)
	if err := ToCanvas(dst, make([]byte, pic.Size), pic); err == nil {
		t.Error("a picture of another size was converted")
	}
	dst, _ = frame.New(frame.NV12, 4, 4)
	if err := ToCanvas(dst, make([]byte, pic.Size-1), pic); err == nil {
		t.Error("a short buffer was converted")
	}
}

func BenchmarkConvert1080p(b *testing.B) {
	pic := ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, 1920, 1080)
	src := fill(pic, 200, 100, 50, 255)
	dst, _ := frame.New(frame.NV12, 1920, 1080)
	b.SetBytes(int64(pic.Size))
	for b.Loop() {
		ToCanvas(dst, src, pic)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/frame")
}

// TestBandsConvertLikeOnePass: a picture converted in parallel bands is
// the picture converted in one pass, byte for byte.
func TestBandsConvertLikeOnePass(t *testing.T) {
	pic := ipc.NewPicture(ipc.BGRA, ipc.AlphaStraight, 322, 1082)
	src := make([]byte, pic.Size)
	for i := range src {
		src[i] = byte(i*7 + i/5)
	}
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		banded, _ := frame.New(f, pic.Width, pic.Height)
		whole, _ := frame.New(f, pic.Width, pic.Height)
		if err := ToCanvas(banded, src, pic); err != nil {
			t.Fatal(err)
		}
		rgbToCanvas(whole, src, pic, 2, 1, 0, 0, pic.Height)
		if string(banded.Bytes()) != string(whole.Bytes()) {
			t.Errorf("%v: the banded conversion differs from one pass", f)
		}
	}
}
