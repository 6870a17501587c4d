package show

import (
	"bytes"
	"image/jpeg"
	"testing"

	"github.com/onairhq/onair/frame"
)

// fill paints a frame flat: luma y, chroma cb, cr, on the 8-bit scale (a
// P010 frame gets the 10-bit values, four times as large).
func fill(t *testing.T, f frame.Format, w, h int, y, cb, cr int) *frame.Frame {
	t.Helper()
	fr, err := frame.New(f, w, h)
	if err != nil {
		t.Fatal(err)
	}
	put := func(plane, off, v int) {
		if f == frame.P010 {
			v = (v * 4) << 6
			fr.Data[plane][off], fr.Data[plane][off+1] = byte(v), byte(v>>8)
			return
		}
		fr.Data[plane][off] = byte(v)
	}
	bps := 1
	if f == frame.P010 {
		bps = 2
	}
	for row := 0; row < h; row++ {
		for x := 0; x < w; x++ {
			put(0, row*fr.Pitch[0]+x*bps, y)
		}
	}
	for row := 0; row < h/2; row++ {
		for x := 0; x < w/2; x++ {
			put(1, row*fr.Pitch[1]+2*x*bps, cb)
			put(1, row*fr.Pitch[1]+(2*x+1)*bps, cr)
		}
	}
	return fr
}

// TestJPEGLevels: limited-range BT.709 black and white (Y 16 and 235) come
// back from the JPEG as 0 and 255 within 1, in 8 and 10 bits, scaled or
// not; full-range frames keep their levels; a BT.709 red becomes JFIF's
// red.
func TestJPEGLevels(t *testing.T) {
	decode := func(f *frame.Frame, maxW int) (r, g, b uint32) {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, ToJFIF(f, maxW, nil), &jpeg.Options{Quality: 90}); err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		c := img.At(img.Bounds().Dx()/2, img.Bounds().Dy()/2)
		r, g, b, _ = c.RGBA()
		return r >> 8, g >> 8, b >> 8
	}
	near := func(got, want uint32) bool { return got+1 >= want && got <= want+1 }
	limited := frame.BT709
	full := frame.Colour{Primaries: "bt709", Transfer: "bt709", Matrix: "bt709", Range: "full"}
	for _, c := range []struct {
		name      string
		f         frame.Format
		colour    frame.Colour
		y, cb, cr int
		maxW      int
		r, g, b   uint32
	}{
		{"nv12 limited black", frame.NV12, limited, 16, 128, 128, 0, 0, 0, 0},
		{"nv12 limited white", frame.NV12, limited, 235, 128, 128, 0, 255, 255, 255},
		{"nv12 limited black, scaled", frame.NV12, limited, 16, 128, 128, 320, 0, 0, 0},
		{"nv12 limited white, scaled", frame.NV12, limited, 235, 128, 128, 320, 255, 255, 255},
		{"untagged white", frame.NV12, frame.Colour{}, 235, 128, 128, 0, 255, 255, 255},
		{"p010 limited black", frame.P010, limited, 16, 128, 128, 0, 0, 0, 0},
		{"p010 limited white", frame.P010, limited, 235, 128, 128, 320, 255, 255, 255},
		{"nv12 full black", frame.NV12, full, 0, 128, 128, 0, 0, 0, 0},
		{"nv12 full white", frame.NV12, full, 255, 128, 128, 0, 255, 255, 255},
		{"nv12 full grey", frame.NV12, full, 128, 128, 128, 0, 128, 128, 128},
		// BT.709 limited red: Y 63, Cb 102, Cr 240.
		{"nv12 limited red", frame.NV12, limited, 63, 102, 240, 0, 255, 0, 0},
	} {
		f := fill(t, c.f, 640, 360, c.y, c.cb, c.cr)
		f.Colour = c.colour
		r, g, b := decode(f, c.maxW)
		// JPEG's chroma quantisation moves saturated colours a little more.
		tol := func(got, want uint32) bool { return near(got, want) }
		if c.name == "nv12 limited red" {
			tol = func(got, want uint32) bool { return got+4 >= want && got <= want+4 }
		}
		if !tol(r, c.r) || !tol(g, c.g) || !tol(b, c.b) {
			t.Errorf("%s: the JPEG reads (%d, %d, %d), want (%d, %d, %d) within 1", c.name, r, g, b, c.r, c.g, c.b)
		}
	}
}

// TestJFIFScalesDown: a snapshot is at most SnapshotWidth wide, keeps the
// aspect ratio, and leaves small frames alone.
func TestJFIFScalesDown(t *testing.T) {
	for _, c := range []struct{ w, h, maxW, ww, wh int }{
		{1920, 1080, 320, 320, 180}, {640, 360, 320, 320, 180}, {320, 180, 320, 320, 180}, {160, 90, 320, 160, 90}, {1920, 1080, 0, 1920, 1080},
	} {
		img := ToJFIF(fill(t, frame.NV12, c.w, c.h, 16, 128, 128), c.maxW, nil)
		if img.Rect.Dx() != c.ww || img.Rect.Dy() != c.wh {
			t.Errorf("%dx%d to at most %d wide: %v, want %dx%d", c.w, c.h, c.maxW, img.Rect, c.ww, c.wh)
		}
	}
}

// BenchmarkSnapshot: a tile's picture from a 1080p NV12 frame, scaled to
// 640 wide and converted to JFIF levels into a kept image (ToJFIF), then
// encoded as a JPEG into a kept buffer, as a watched tile's snapshot is.
// allocs/convert is the conversion's own; allocs/jpeg is image/jpeg's
// encoder (not per frame: a snapshot is taken only while someone watches,
// at the rate they ask).
func BenchmarkSnapshot(b *testing.B) {
	f, _ := frame.New(frame.NV12, 1920, 1080)
	img := ToJFIF(f, 640, nil)
	var buf bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		img = ToJFIF(f, 640, img)
		buf.Reset()
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(testing.AllocsPerRun(10, func() { img = ToJFIF(f, 640, img) }), "allocs/convert")
	b.ReportMetric(testing.AllocsPerRun(10, func() { buf.Reset(); jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}) }), "allocs/jpeg")
}
