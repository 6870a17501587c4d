package cpu

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
)

// offCanvas are layers partly off a 64x48 canvas, larger than it, or both:
// zooms and pictures sliding in, the shapes whose filters the compositor
// builds for the visible part only. Each is drawn over a layer beneath it,
// so that blending and padding show too.
func offCanvas() []frame.Rect {
	return []frame.Rect{
		{X: -100, Y: -50, W: 320, H: 180},
		{X: 20, Y: 10, W: 640, H: 360},
		{X: -300, Y: -200, W: 640, H: 360},
		{X: -30, Y: 30, W: 60, H: 40},
		{X: 50, Y: -20, W: 30, H: 100},
	}
}

// TestOffCanvasDrawsWhatAWholeLayerDraws: a layer larger than the canvas
// or partly off it draws, on the canvas, byte for byte what the same
// layer draws there when all of it is on a larger canvas, in every fit,
// opaque, blended and keyed, in both formats: clipping the filters to the
// visible part changes no pixel.
func TestOffCanvasDrawsWhatAWholeLayerDraws(t *testing.T) {
	const cw, ch = 64, 48
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		src := pattern(t, f, media.Ramp, 160, 90, 1, 3)
		keyed, _ := frame.NewAlpha(f, 160, 90)
		for p := 0; p < 2; p++ {
			copy(keyed.Data[p], src.Data[p])
		}
		for i := range keyed.Alpha {
			keyed.Alpha[i] = byte(i * 7)
		}
		under := pattern(t, f, media.Bars, 64, 48, 2, 0)
		for _, r := range offCanvas() {
			for _, fit := range []frame.Fit{frame.Stretch, frame.Contain, frame.Cover} {
				for _, op := range []float64{1, 0.6} {
					for _, pic := range []*frame.Frame{src, keyed} {
						name := fmt.Sprintf("%v/%v/%v/%v/keyed=%v", f, r, fit, op, pic.Alpha != nil)
						// The small canvas, and a large one on which the
						// whole layer lies, the small canvas at (ox, oy).
						ox, oy := 2*((-r.X+1)/2+1), 2*((-r.Y+1)/2+1)
						ox, oy = max(ox, 0), max(oy, 0)
						bw, bh := (ox+r.X+r.W+cw+3)&^1, (oy+r.Y+r.H+ch+3)&^1
						small, _ := frame.New(f, cw, ch)
						big, _ := frame.New(f, bw, bh)
						lay := func(dx, dy int) []Layer {
							return []Layer{
								{Frame: under, Rect: frame.Rect{X: dx, Y: dy, W: cw, H: ch}, Opacity: 1},
								{Frame: pic, Rect: frame.Rect{X: r.X + dx, Y: r.Y + dy, W: r.W, H: r.H}, Fit: fit, Opacity: op, Crop: frame.Rect{X: 8, Y: 4, W: 140, H: 80}},
							}
						}
						if err := NewCompositor().Render(small, lay(0, 0)); err != nil {
							t.Fatal(err)
						}
						if err := NewCompositor().Render(big, lay(ox, oy)); err != nil {
							t.Fatal(err)
						}
						bps := f.BytesPerSample()
						for p := 0; p < 2; p++ {
							for y := 0; y < ch>>p; y++ {
								a := small.Data[p][y*small.Pitch[p]:][:cw*bps]
								b := big.Data[p][(oy>>p+y)*big.Pitch[p]+ox*bps:][:cw*bps]
								if !bytes.Equal(a, b) {
									t.Fatalf("%s: plane %d row %d differs from the whole layer's", name, p, y)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestHugeLayerCostsWhatIsVisible is issue 27's layer 2^30 pixels on each
// side (it grew RSS past 2 GB, and a 1e14-wide one panicked a band
// worker): on a 640x360 canvas the compositor's filter tables hold the
// canvas's positions only, and drawing it allocates about what a layer
// the size of the canvas does.
func TestHugeLayerCostsWhatIsVisible(t *testing.T) {
	src := pattern(t, frame.NV12, media.Bars, 640, 360, 1, 0)
	dst, _ := frame.New(frame.NV12, 640, 360)
	for _, r := range []frame.Rect{
		{X: 0, Y: 0, W: 1 << 30, H: 1 << 30},
		{X: -(1 << 29), Y: -(1 << 29), W: 1 << 30, H: 1 << 30},
		{X: 0, Y: 0, W: 1e14, H: 120},
	} {
		for _, fit := range []frame.Fit{frame.Stretch, frame.Contain, frame.Cover} {
			c := NewCompositor()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			if err := c.Render(dst, []Layer{{Frame: src, Rect: r, Fit: fit, Opacity: 0.5}}); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&m1)
			for k, s := range c.scalers {
				for i, f := range []*frame.Filter{s.lx, s.ly, s.cx, s.cy} {
					side := 640 >> (i / 2)
					if i%2 == 1 {
						side = 360 >> (i / 2)
					}
					if len(f.Start) > side || len(f.Coef) > side*f.Taps {
						t.Errorf("%v %v: filter %d of %+v holds %d positions (%d coefficients), more than the canvas's %d", r, fit, i, k, len(f.Start), len(f.Coef), side)
					}
				}
			}
			// A canvas-sized layer's tables and scratch are about 100 KB.
			if a := m1.TotalAlloc - m0.TotalAlloc; a > 4<<20 {
				t.Errorf("%v %v: drawing it allocated %d bytes", r, fit, a)
			}
		}
	}
}

// BenchmarkHugeLayer draws issue 27's layers on a 640x360 canvas with a
// fresh compositor each time (the filters built every draw, as a layer
// moving each tick has them): the cost is a canvas-sized layer's.
func BenchmarkHugeLayer(b *testing.B) {
	src := pattern(b, frame.NV12, media.Bars, 640, 360, 1, 0)
	dst, _ := frame.New(frame.NV12, 640, 360)
	for _, tc := range []struct {
		name string
		r    frame.Rect
	}{
		{"canvas", frame.Rect{W: 640, H: 360}},
		{"2e7-wide", frame.Rect{W: 2e7, H: 360}},
		{"2^30-square", frame.Rect{X: -(1 << 29), Y: -(1 << 29), W: 1 << 30, H: 1 << 30}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := NewCompositor().Render(dst, []Layer{{Frame: src, Rect: tc.r, Opacity: 0.5}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/frame")
		})
	}
}
