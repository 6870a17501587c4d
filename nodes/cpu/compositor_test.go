package cpu

import (
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/mediatest"
	"github.com/onairhq/onair/playout"
	"strconv"
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
)

func pattern(t testing.TB, f frame.Format, p media.Pattern, w, h int, id uint16, n int) *frame.Frame {
	t.Helper()
	fr, err := mediatest.PatternFrame(f, p, w, h, id, n)
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

func luma(f *frame.Frame, x, y int) int {
	if f.Format == frame.P010 {
		return int(f.Plane16(0)[y*f.Pitch[0]/2+x] >> 6)
	}
	return int(f.Data[0][y*f.Pitch[0]+x])
}

func chroma(f *frame.Frame, x, y int) (int, int) {
	if f.Format == frame.P010 {
		p := f.Plane16(1)[(y/2)*f.Pitch[1]/2+(x&^1):]
		return int(p[0] >> 6), int(p[1] >> 6)
	}
	p := f.Data[1][(y/2)*f.Pitch[1]+(x&^1):]
	return int(p[0]), int(p[1])
}

func TestPlace(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sw, sh     int
		crop, rect frame.Rect
		fit        frame.Fit
		want       frame.Placement
	}{
		{"stretch", 1920, 1080, frame.Rect{}, frame.Rect{X: 0, Y: 0, W: 640, H: 480}, frame.Stretch,
			frame.Placement{Crop: frame.Rect{X: 0, Y: 0, W: 1920, H: 1080}, Dst: frame.Rect{X: 0, Y: 0, W: 640, H: 480}, Pad: frame.Rect{X: 0, Y: 0, W: 640, H: 480}}},
		{"contain pillarbox", 640, 480, frame.Rect{}, frame.Rect{X: 0, Y: 0, W: 640, H: 360}, frame.Contain,
			frame.Placement{Crop: frame.Rect{X: 0, Y: 0, W: 640, H: 480}, Dst: frame.Rect{X: 80, Y: 0, W: 480, H: 360}, Pad: frame.Rect{X: 0, Y: 0, W: 640, H: 360}}},
		{"contain letterbox", 1920, 1080, frame.Rect{}, frame.Rect{X: 100, Y: 100, W: 400, H: 400}, frame.Contain,
			frame.Placement{Crop: frame.Rect{X: 0, Y: 0, W: 1920, H: 1080}, Dst: frame.Rect{X: 100, Y: 186, W: 400, H: 226}, Pad: frame.Rect{X: 100, Y: 100, W: 400, H: 400}}},
		{"cover crops top and bottom", 480, 480, frame.Rect{}, frame.Rect{X: 0, Y: 0, W: 640, H: 360}, frame.Cover,
			frame.Placement{Crop: frame.Rect{X: 0, Y: 104, W: 480, H: 270}, Dst: frame.Rect{X: 0, Y: 0, W: 640, H: 360}, Pad: frame.Rect{X: 0, Y: 0, W: 640, H: 360}}},
		{"cover crops sides", 1920, 1080, frame.Rect{}, frame.Rect{X: 0, Y: 0, W: 300, H: 300}, frame.Cover,
			frame.Placement{Crop: frame.Rect{X: 420, Y: 0, W: 1080, H: 1080}, Dst: frame.Rect{X: 0, Y: 0, W: 300, H: 300}, Pad: frame.Rect{X: 0, Y: 0, W: 300, H: 300}}},
		{"crop then stretch, odd rounded", 1920, 1080, frame.Rect{X: 1, Y: 1, W: 99, H: 99}, frame.Rect{X: 0, Y: 0, W: 100, H: 100}, frame.Stretch,
			frame.Placement{Crop: frame.Rect{X: 0, Y: 0, W: 100, H: 100}, Dst: frame.Rect{X: 0, Y: 0, W: 100, H: 100}, Pad: frame.Rect{X: 0, Y: 0, W: 100, H: 100}}},
		{"crop clamped to picture", 640, 360, frame.Rect{X: 600, Y: 300, W: 100, H: 100}, frame.Rect{X: 0, Y: 0, W: 40, H: 60}, frame.Stretch,
			frame.Placement{Crop: frame.Rect{X: 600, Y: 300, W: 40, H: 60}, Dst: frame.Rect{X: 0, Y: 0, W: 40, H: 60}, Pad: frame.Rect{X: 0, Y: 0, W: 40, H: 60}}},
	} {
		if got := frame.Place(tc.sw, tc.sh, tc.crop, tc.rect, tc.fit); got != tc.want {
			t.Errorf("%s: frame.Place = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestRenderBackgroundIsLimitedBlack(t *testing.T) {
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		dst, _ := frame.New(f, 64, 32)
		dst.FillRect(0, 0, 64, 32, 0, 0, 0)
		if err := NewCompositor().Render(dst, nil); err != nil {
			t.Fatal(err)
		}
		wantY, wantC := 16, 128
		if f == frame.P010 {
			wantY, wantC = 64, 512
		}
		cb, cr := chroma(dst, 10, 10)
		if luma(dst, 10, 10) != wantY || cb != wantC || cr != wantC {
			t.Errorf("%v: background %d/%d/%d, want %d/%d/%d", f, luma(dst, 10, 10), cb, cr, wantY, wantC, wantC)
		}
	}
}

// TestRenderLayers checks z-order, opacity, crop and contain padding on flat
// colours, where the expected samples are exact.
func TestRenderLayers(t *testing.T) {
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		sh := uint(0)
		if f == frame.P010 {
			sh = 8 // stored 8-bit values scaled to P010 words (x4 then <<6)
		}
		solid := func(y, c uint16) *frame.Frame {
			fr, _ := frame.New(f, 64, 64)
			fr.FillRect(0, 0, 64, 64, y<<sh, c<<sh, c<<sh)
			return fr
		}
		red, white := solid(200, 60), solid(100, 180)
		half := solid(16, 128)
		half.FillRect(32, 0, 32, 64, 235<<sh, 128<<sh, 128<<sh) // right half white
		dst, _ := frame.New(f, 128, 64)
		c := NewCompositor()
		err := c.Render(dst, []Layer{
			{Frame: white, Rect: frame.Rect{X: 32, Y: 0, W: 64, H: 64}, Opacity: 1, Z: 2},                                             // on top despite order
			{Frame: red, Rect: frame.Rect{X: 0, Y: 0, W: 128, H: 64}, Opacity: 1, Z: 1},                                               // under
			{Frame: red, Rect: frame.Rect{X: 0, Y: 0, W: 16, H: 16}, Opacity: 0, Z: 5},                                                // invisible
			{Frame: half, Rect: frame.Rect{X: 96, Y: 0, W: 32, H: 64}, Crop: frame.Rect{X: 32, Y: 0, W: 32, H: 64}, Opacity: 1, Z: 3}, // only the white half
			{Frame: red, Rect: frame.Rect{X: 0, Y: 0, W: 32, H: 64}, Opacity: 0.5, Z: 4, Fit: frame.Contain},                          // contain 1:1 into 32x64 with padding, blended
		})
		if err != nil {
			t.Fatal(err)
		}
		scale := func(v int) int {
			if f == frame.P010 {
				return v << 2
			}
			return v
		}
		for _, chk := range []struct {
			x, y, want int
			what       string
		}{
			{50, 30, 100, "top layer (Z 2) over the full-canvas layer"},
			{20, 30, 200, "opacity 0 layer not drawn; contain area blended 50 % red over red"},
			{20, 4, 108, "contain padding: black at 50 % over red (200+16)/2"},
			{110, 30, 235, "cropped to the white half"},
		} {
			if got := luma(dst, chk.x, chk.y); got < scale(chk.want)-scale(1) || got > scale(chk.want)+scale(1) {
				t.Errorf("%v: %s: Y(%d,%d) = %d, want %d", f, chk.what, chk.x, chk.y, got, scale(chk.want))
			}
		}
	}
}

func TestRenderFormatMismatch(t *testing.T) {
	dst, _ := frame.New(frame.NV12, 64, 64)
	src, _ := frame.New(frame.P010, 64, 64)
	err := NewCompositor().Render(dst, []Layer{{Frame: src, Rect: frame.Rect{X: 0, Y: 0, W: 64, H: 64}, Opacity: 1}})
	if err == nil || !strings.Contains(err.Error(), "p010") {
		t.Errorf("Render of a P010 layer on an NV12 canvas = %v, want an error naming the formats", err)
	}
}

func TestRenderOffCanvasIsClipped(t *testing.T) {
	src := pattern(t, frame.NV12, media.Bars, 640, 360, 1, 0)
	dst, _ := frame.New(frame.NV12, 320, 180)
	c := NewCompositor()
	for _, r := range []frame.Rect{{X: -100, Y: -50, W: 320, H: 180}, {X: 200, Y: 100, W: 640, H: 360}, {X: 1000, Y: 1000, W: 10, H: 10}, {X: -500, Y: 0, W: 100, H: 100}} {
		if err := c.Render(dst, []Layer{{Frame: src, Rect: r, Opacity: 0.7}}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStampSurvivesCompositing draws four numbered sources into a 2×2 grid
// and an inset at a quarter of their size, and reads every stamp back.
func TestStampSurvivesCompositing(t *testing.T) {
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		var layers []Layer
		for k := 0; k < 4; k++ {
			src := pattern(t, f, media.Pattern(k), 640, 360, uint16(100+k), 40+k)
			layers = append(layers, Layer{Frame: src, Rect: frame.Rect{X: (k % 2) * 320, Y: (k / 2) * 180, W: 320, H: 180}, Opacity: 1})
		}
		inset := pattern(t, f, media.Checker, 640, 360, 7, 123456)
		layers = append(layers, Layer{Frame: inset, Rect: frame.Rect{X: 400, Y: 200, W: 160, H: 90}, Opacity: 1, Z: 1})
		dst, _ := frame.New(f, 640, 360)
		if err := NewCompositor().Render(dst, layers); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 4; k++ {
			r := layers[k].Rect
			if k == 3 {
				break // covered by the inset in part
			}
			id, n, ok := media.ReadStamp(dst, r)
			if !ok || id != uint16(100+k) || n != uint32(40+k) {
				t.Errorf("%v: grid cell %d: stamp %d/%d ok %v, want %d/%d", f, k, id, n, ok, 100+k, 40+k)
			}
		}
		if id, n, ok := media.ReadStamp(dst, frame.Rect{X: 400, Y: 200, W: 160, H: 90}); !ok || id != 7 || n != 123456 {
			t.Errorf("%v: quarter-size inset: stamp %d/%d ok %v, want 7/123456", f, id, n, ok)
		}
		if _, _, ok := media.ReadStamp(dst, frame.Rect{X: 0, Y: 0, W: 640, H: 360}); ok {
			t.Errorf("%v: a stamp read from the whole grid, where there is none", f)
		}
	}
}

func TestPatternsMoveAndAreStamped(t *testing.T) {
	for _, p := range []media.Pattern{media.Bars, media.Ramp, media.Solid, media.Checker} {
		for _, f := range []frame.Format{frame.NV12, frame.P010} {
			a := pattern(t, f, p, 320, 180, 3, 5)
			b := pattern(t, f, p, 320, 180, 3, 6)
			if id, n, ok := media.ReadStamp(a, frame.Rect{X: 0, Y: 0, W: 320, H: 180}); !ok || id != 3 || n != 5 {
				t.Errorf("%v %v: stamp %d/%d ok %v, want 3/5", p, f, id, n, ok)
			}
			if a.PTS != 5 || a.SourceFrame != 5 || a.TimeBase != (frame.Rational{Num: 1, Den: 30}) || a.Colour != frame.BT709 {
				t.Errorf("%v %v: metadata PTS %d frame %d tb %v colour %v", p, f, a.PTS, a.SourceFrame, a.TimeBase, a.Colour)
			}
			// Below the stamp band the picture moves from frame to frame
			// (except a solid colour).
			moved := false
			for x := 0; x < 320 && !moved; x++ {
				moved = luma(a, x, 150) != luma(b, x, 150)
			}
			if moved != (p != media.Solid) {
				t.Errorf("%v %v: moved = %v", p, f, moved)
			}
		}
	}
	if _, err := media.NewTestPattern(media.TestPatternConfig{Width: 31, Height: 32, Rate: frame.Rational{Num: 30, Den: 1}}); err == nil {
		t.Error("odd width accepted")
	}
}

func TestTransitions(t *testing.T) {
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		sh := uint(0)
		if f == frame.P010 {
			sh = 8
		}
		a, _ := frame.New(f, 64, 32)
		a.FillRect(0, 0, 64, 32, 40<<sh, 128<<sh, 128<<sh)
		a.SourceFrame = 1
		b, _ := frame.New(f, 64, 32)
		b.FillRect(0, 0, 64, 32, 200<<sh, 100<<sh, 150<<sh)
		b.SourceFrame = 2
		dst, _ := frame.New(f, 64, 32)
		scale := func(v int) int { return v << (sh / 4) } // 8-bit to the format's depth
		for _, tc := range []struct {
			tr       playout.Kind
			progress float64
			x, y     int
			want     int
			meta     int64
		}{
			{playout.Cut, 0, 10, 10, 200, 2},
			{playout.Fade, 0, 10, 10, 40, 1},
			{playout.Fade, 0.25, 10, 10, 80, 1},
			{playout.Fade, 0.5, 10, 10, 120, 2},
			{playout.Fade, 1, 10, 10, 200, 2},
			{playout.Wipe, 0.25, 14, 10, 200, 1}, // left of the edge at 16: new scene
			{playout.Wipe, 0.25, 16, 10, 40, 1},
			{playout.Wipe, 1, 63, 31, 200, 2},
			{playout.Wipe, -3, 0, 0, 40, 1},
		} {
			if err := Transition(tc.tr, dst, a, b, tc.progress); err != nil {
				t.Fatal(err)
			}
			if got := luma(dst, tc.x, tc.y); got != scale(tc.want) || dst.SourceFrame != tc.meta {
				t.Errorf("%v %v at %.2f: Y(%d,%d) = %d frame %d, want %d frame %d", f, tc.tr, tc.progress, tc.x, tc.y, got, dst.SourceFrame, scale(tc.want), tc.meta)
			}
		}
		if err := Transition(playout.Fade, dst, a, pattern(t, f, media.Bars, 640, 360, 1, 0), 0.5); err == nil {
			t.Error("fade between different sizes accepted")
		}
	}
}

func TestRenderAllocatesNothing(t *testing.T) {
	layers := benchLayers(t, frame.NV12, 640, 360)
	// Keyed layers too (a browser graphic with alpha), 1:1 and scaled.
	g, _ := frame.NewAlpha(frame.NV12, 640, 360)
	for i := range g.Alpha {
		g.Alpha[i] = byte(i)
	}
	layers = append(layers, Layer{Frame: g, Rect: frame.Rect{W: 640, H: 360}, Opacity: 1, Z: 9},
		Layer{Frame: g, Rect: frame.Rect{X: 10, Y: 20, W: 300, H: 170}, Opacity: 0.5, Z: 9})
	dst, _ := frame.New(frame.NV12, 640, 360)
	c := NewCompositor()
	c.Render(dst, layers)
	if a := testing.AllocsPerRun(5, func() { c.Render(dst, layers) }); a != 0 {
		t.Errorf("Render allocates %.1f times per frame, want 0", a)
	}
}

// benchLayers is the benchmark scene: four sources of sw×sh, three in a
// grid at a quarter of the canvas each and one at half opacity in a contain
// inset.
func benchLayers(t testing.TB, f frame.Format, w, h int) []Layer {
	return benchLayersFrom(t, f, w, h, w, h)
}

func benchLayersFrom(t testing.TB, f frame.Format, w, h, sw, sh int) []Layer {
	var ls []Layer
	for k := 0; k < 4; k++ {
		src := pattern(t, f, media.Pattern(k), sw, sh, uint16(k), k)
		r := frame.Rect{X: (k % 2) * w / 2, Y: (k / 2) * h / 2, W: w / 2, H: h / 2}
		l := Layer{Frame: src, Rect: r, Opacity: 1}
		if k == 3 {
			l.Fit, l.Opacity, l.Rect = frame.Contain, 0.5, frame.Rect{X: w / 4, Y: h / 4, W: w / 2, H: h / 3}
		}
		ls = append(ls, l)
	}
	return ls
}

// BenchmarkComposite renders four layers (three opaque in a 2×2 grid, one
// blended at 50 % with contain padding) onto a canvas, from sources the size
// of the canvas and, in the last case, from 1080p sources shrunk to 360p;
// and, as the copy case, one opaque layer at its own size (a row copy).
func BenchmarkComposite(b *testing.B) {
	for _, tc := range []struct {
		name   string
		f      frame.Format
		w, h   int
		sw, sh int
		copy   bool
	}{
		{"nv12-1080p", frame.NV12, 1920, 1080, 1920, 1080, false},
		{"p010-1080p", frame.P010, 1920, 1080, 1920, 1080, false},
		{"nv12-640x360", frame.NV12, 640, 360, 640, 360, false},
		{"nv12-640x360-from-1080p", frame.NV12, 640, 360, 1920, 1080, false},
		{"nv12-1080p-copy", frame.NV12, 1920, 1080, 1920, 1080, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			layers := benchLayersFrom(b, tc.f, tc.w, tc.h, tc.sw, tc.sh)
			if tc.copy {
				layers = []Layer{{Frame: pattern(b, tc.f, media.Bars, tc.sw, tc.sh, 1, 0), Rect: frame.Rect{W: tc.w, H: tc.h}, Opacity: 1}}
			}
			dst, _ := frame.New(tc.f, tc.w, tc.h)
			c := NewCompositor()
			c.Render(dst, layers)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				c.Render(dst, layers)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/frame")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/1e6, "cpu-ms/frame")
			b.ReportMetric(float64(testing.AllocsPerRun(3, func() { c.Render(dst, layers) })), "allocs/frame")
		})
	}
}

// BenchmarkTransition measures a 1080p fade and wipe.
func BenchmarkTransition(b *testing.B) {
	for _, tr := range []playout.Kind{playout.Fade, playout.Wipe} {
		b.Run(tr.String(), func(b *testing.B) {
			x := pattern(b, frame.NV12, media.Bars, 1920, 1080, 1, 0)
			y := pattern(b, frame.NV12, media.Ramp, 1920, 1080, 2, 0)
			dst, _ := frame.New(frame.NV12, 1920, 1080)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				Transition(tr, dst, x, y, 0.37)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/frame")
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/1e6, "cpu-ms/frame")
		})
	}
}

// BenchmarkTestPattern draws one stamped 640x360 and 1080p NV12 frame.
func BenchmarkTestPattern(b *testing.B) {
	for _, sz := range [][2]int{{640, 360}, {1920, 1080}} {
		b.Run(strconv.Itoa(sz[0])+"x"+strconv.Itoa(sz[1]), func(b *testing.B) {
			tp, _ := media.NewTestPattern(media.TestPatternConfig{Pattern: media.Bars, Format: frame.NV12, Width: sz[0], Height: sz[1], Rate: frame.Rational{Num: 30, Den: 1}})
			fr, _ := frame.New(frame.NV12, sz[0], sz[1])
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tp.Next(fr)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/frame")
		})
	}
}
