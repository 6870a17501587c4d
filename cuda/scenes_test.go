package cuda_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/cpu"
	"github.com/onairhq/onair/playout"
)

// The scenes both the host run of the kernel code and the GPU are compared
// with package cpu on: the same sources, layers and canvas, rendered by
// cpu.Compositor and by the CUDA compositor.

// source is a scene's picture: its size, and whether it has an alpha
// plane (a browser graphic, keyed over what is beneath).
type source struct {
	w, h  int
	alpha bool
}

type sceneLayer struct {
	src     int // index into scene.sources
	rect    frame.Rect
	crop    frame.Rect
	fit     frame.Fit
	opacity float64
	z       int
}

type scene struct {
	name    string
	w, h    int
	sources []source
	layers  []sceneLayer
	scaled  bool // some layer is resampled: ≥ 50 dB is the bar, exact the aim
}

func full(src int, w, h int) sceneLayer {
	return sceneLayer{src: src, rect: frame.Rect{W: w, H: h}, opacity: 1}
}

// scenes covers every path of the compositor: copies, crops, opacity, z,
// black padding, layers over the canvas's edges, and resampling up, down
// and by odd ratios.
func scenes() []scene {
	const W, H = 256, 144
	grid := func(n int) scene {
		sc := scene{name: fmt.Sprintf("grid%dx%d", n, n), w: W, h: H, scaled: true}
		for i := 0; i < n*n; i++ {
			sc.sources = append(sc.sources, source{W, H, false})
			sc.layers = append(sc.layers, sceneLayer{src: i, rect: frame.Rect{X: i % n * W / n, Y: i / n * H / n, W: W / n, H: H / n}, opacity: 1})
		}
		return sc
	}
	return []scene{
		{name: "full", w: W, h: H, sources: []source{{W, H, false}}, layers: []sceneLayer{full(0, W, H)}},
		{name: "crop-1to1", w: W, h: H, sources: []source{{W, H, false}}, layers: []sceneLayer{
			{src: 0, rect: frame.Rect{X: 40, Y: 30, W: 100, H: 60}, crop: frame.Rect{X: 10, Y: 20, W: 100, H: 60}, opacity: 1}}},
		{name: "opacity", w: W, h: H, sources: []source{{W, H, false}, {120, 80, false}}, layers: []sceneLayer{
			full(0, W, H),
			{src: 1, rect: frame.Rect{X: 20, Y: 10, W: 120, H: 80}, opacity: 0.5},
			{src: 1, rect: frame.Rect{X: 100, Y: 50, W: 120, H: 80}, opacity: 0.3}}},
		{name: "z-order", w: W, h: H, sources: []source{{100, 100, false}, {100, 100, false}, {100, 100, false}}, layers: []sceneLayer{
			{src: 0, rect: frame.Rect{X: 0, Y: 0, W: 100, H: 100}, opacity: 1, z: 2},
			{src: 1, rect: frame.Rect{X: 40, Y: 20, W: 100, H: 100}, opacity: 1, z: 1},
			{src: 2, rect: frame.Rect{X: 80, Y: 40, W: 100, H: 100}, opacity: 0.7, z: 1}}},
		{name: "contain-exact", w: W, h: H, sources: []source{{64, 72, false}, {128, 36, false}}, layers: []sceneLayer{
			{src: 0, rect: frame.Rect{X: 0, Y: 0, W: 128, H: 72}, fit: frame.Contain, opacity: 1},
			{src: 1, rect: frame.Rect{X: 120, Y: 60, W: 128, H: 72}, fit: frame.Contain, opacity: 0.75}}},
		{name: "edges", w: W, h: H, sources: []source{{100, 60, false}}, layers: []sceneLayer{
			{src: 0, rect: frame.Rect{X: -30, Y: -20, W: 100, H: 60}, opacity: 1},
			{src: 0, rect: frame.Rect{X: 200, Y: 110, W: 100, H: 60}, opacity: 1},
			{src: 0, rect: frame.Rect{X: 300, Y: 10, W: 100, H: 60}, opacity: 1}}},
		{name: "odd-rects", w: W, h: H, sources: []source{{W, H, false}}, layers: []sceneLayer{
			{src: 0, rect: frame.Rect{X: 3, Y: 5, W: 61, H: 33}, crop: frame.Rect{X: 7, Y: 9, W: 61, H: 33}, opacity: 1}}},
		grid(2),
		grid(4),
		{name: "upscale", w: W, h: H, scaled: true, sources: []source{{96, 54, false}}, layers: []sceneLayer{full(0, W, H)}},
		{name: "contain-scaled", w: W, h: H, scaled: true, sources: []source{{160, 160, false}}, layers: []sceneLayer{
			{src: 0, rect: frame.Rect{W: W, H: H}, fit: frame.Contain, opacity: 0.8}}},
		{name: "cover", w: W, h: H, scaled: true, sources: []source{{160, 90, false}}, layers: []sceneLayer{
			{src: 0, rect: frame.Rect{X: 20, Y: 20, W: 100, H: 100}, fit: frame.Cover, opacity: 1}}},
		{name: "odd-ratio", w: W, h: H, scaled: true, sources: []source{{W, H, false}, {200, 120, false}}, layers: []sceneLayer{
			full(0, W, H),
			{src: 1, rect: frame.Rect{X: 30, Y: 14, W: 150, H: 98}, crop: frame.Rect{X: 10, Y: 6, W: 170, H: 100}, opacity: 0.6}}},
		{name: "big-shrink", w: W, h: H, scaled: true, sources: []source{{W, H, false}}, layers: []sceneLayer{
			{src: 0, rect: frame.Rect{X: 10, Y: 10, W: 18, H: 10}, opacity: 1},
			{src: 0, rect: frame.Rect{X: 40, Y: 10, W: 2, H: 2}, opacity: 1}}},
		{name: "overhang-scaled", w: W, h: H, scaled: true, sources: []source{{120, 70, false}}, layers: []sceneLayer{
			{src: 0, rect: frame.Rect{X: -50, Y: -30, W: 400, H: 220}, opacity: 1}}},
		{name: "faint", w: W, h: H, scaled: true, sources: []source{{W, H, false}, {W, H, false}}, layers: []sceneLayer{
			full(0, W, H),
			{src: 1, rect: frame.Rect{W: W, H: H}, opacity: 0.001}}},
		// Keyed layers (pictures with alpha) over a scene: 1:1 and scaled,
		// during fades (opacity < 1), contained (transparent padding),
		// cropped, over the canvas's edges, and keyed over each other.
		{name: "key-full", w: W, h: H, sources: []source{{W, H, false}, {W, H, true}}, layers: []sceneLayer{
			full(0, W, H), full(1, W, H)}},
		{name: "key-fading", w: W, h: H, sources: []source{{W, H, false}, {W, H, true}}, layers: []sceneLayer{
			full(0, W, H), {src: 1, rect: frame.Rect{W: W, H: H}, opacity: 0.37}}},
		{name: "key-crop", w: W, h: H, sources: []source{{W, H, false}, {200, 120, true}}, layers: []sceneLayer{
			full(0, W, H),
			{src: 1, rect: frame.Rect{X: 20, Y: 12, W: 120, H: 80}, crop: frame.Rect{X: 30, Y: 20, W: 120, H: 80}, opacity: 1}}},
		{name: "key-up", w: W, h: H, scaled: true, sources: []source{{W, H, false}, {96, 54, true}}, layers: []sceneLayer{
			full(0, W, H), full(1, W, H)}},
		{name: "key-down-fading", w: W, h: H, scaled: true, sources: []source{{W, H, false}, {W, H, true}}, layers: []sceneLayer{
			full(0, W, H), {src: 1, rect: frame.Rect{X: 10, Y: 20, W: 130, H: 74}, opacity: 0.6}}},
		{name: "key-odd-ratio", w: W, h: H, scaled: true, sources: []source{{W, H, false}, {200, 120, true}}, layers: []sceneLayer{
			full(0, W, H),
			{src: 1, rect: frame.Rect{X: 30, Y: 14, W: 150, H: 98}, crop: frame.Rect{X: 10, Y: 6, W: 170, H: 100}, opacity: 0.85}}},
		{name: "key-contain", w: W, h: H, scaled: true, sources: []source{{W, H, false}, {160, 160, true}}, layers: []sceneLayer{
			full(0, W, H), {src: 1, rect: frame.Rect{W: W, H: H}, fit: frame.Contain, opacity: 0.9}}},
		{name: "key-edges", w: W, h: H, scaled: true, sources: []source{{W, H, false}, {120, 70, true}}, layers: []sceneLayer{
			full(0, W, H),
			{src: 1, rect: frame.Rect{X: -50, Y: -30, W: 400, H: 220}, opacity: 1},
			{src: 1, rect: frame.Rect{X: 200, Y: 110, W: 120, H: 70}, opacity: 1}}},
		{name: "key-stack", w: W, h: H, scaled: true, sources: []source{{W, H, false}, {W, H, true}, {128, 72, true}}, layers: []sceneLayer{
			full(0, W, H), {src: 2, rect: frame.Rect{W: W, H: H}, opacity: 0.5, z: 2}, full(1, W, H)}},
		{name: "key-big-shrink", w: W, h: H, scaled: true, sources: []source{{W, H, true}}, layers: []sceneLayer{
			{src: 0, rect: frame.Rect{X: 10, Y: 10, W: 18, H: 10}, opacity: 1},
			{src: 0, rect: frame.Rect{X: 40, Y: 10, W: 2, H: 2}, opacity: 0.5}}},
		// Layers far larger than the canvas and mostly off it (issue 27):
		// the kernel is given the part on the canvas and its filters hold
		// those positions only.
		{name: "zoom-off-canvas", w: W, h: H, scaled: true, sources: []source{{W, H, false}, {120, 70, false}, {120, 70, true}}, layers: []sceneLayer{
			full(0, W, H),
			{src: 1, rect: frame.Rect{X: -300, Y: -200, W: 900, H: 500}, fit: frame.Contain, opacity: 0.8},
			{src: 1, rect: frame.Rect{X: 100, Y: -50, W: 640, H: 360}, fit: frame.Cover, opacity: 1},
			{src: 2, rect: frame.Rect{X: -200, Y: 60, W: 700, H: 400}, opacity: 0.9}}},
		{name: "copy-off-canvas", w: W, h: H, sources: []source{{W, H, false}, {400, 300, false}, {400, 300, true}}, layers: []sceneLayer{
			full(0, W, H),
			{src: 1, rect: frame.Rect{X: -100, Y: -60, W: 400, H: 300}, opacity: 1},
			{src: 2, rect: frame.Rect{X: 120, Y: 70, W: 400, H: 300}, opacity: 0.7}}},
		{name: "padding-only", w: W, h: H, scaled: true, sources: []source{{W, H, false}, {20, 100, false}}, layers: []sceneLayer{
			full(0, W, H),
			{src: 1, rect: frame.Rect{X: -1000, Y: 20, W: 1100, H: 100}, fit: frame.Contain, opacity: 0.5}}},
		{name: "huge", w: W, h: H, scaled: true, sources: []source{{W, H, false}, {96, 54, false}, {96, 54, true}}, layers: []sceneLayer{
			full(0, W, H),
			{src: 1, rect: frame.Rect{X: -(1 << 29), Y: -(1 << 29), W: 1 << 30, H: 1 << 30}, opacity: 0.5},
			{src: 1, rect: frame.Rect{X: 0, Y: 100, W: 1e14, H: 20}, fit: frame.Cover, opacity: 1},
			{src: 2, rect: frame.Rect{X: -(1 << 30), Y: 0, W: 1<<30 + 60, H: 1 << 20}, opacity: 1}}},
	}
}

// fillAlpha fills a frame's alpha plane with what a graphic has: columns
// of transparent, of opaque and of partial alpha, and seeded noise, so
// that every weight of the key is tried, edges included.
func fillAlpha(f *frame.Frame, seed int64) {
	r := rand.New(rand.NewSource(seed + 100))
	for y := 0; y < f.Height; y++ {
		for x := 0; x < f.Width; x++ {
			var a byte
			switch (x / 8) % 5 {
			case 0:
				a = 0
			case 1:
				a = 255
			case 2:
				a = byte(x*5 + y*3)
			default:
				a = byte(r.Intn(256))
			}
			f.Alpha[y*f.Width+x] = a
		}
	}
}

// fillNoise fills a host frame with seeded noise: every bit of every
// stored sample varies (P010's low six bits too, which a copy keeps and a
// blend drops), so any difference in the arithmetic shows.
func fillNoise(f *frame.Frame, seed int64) {
	r := rand.New(rand.NewSource(seed))
	for p := 0; p < 2; p++ {
		d := f.Data[p]
		for i := range d {
			d[i] = byte(r.Intn(256))
		}
	}
	// A smooth ramp over part of the picture, so scaling is also tried on
	// content a real picture has.
	bps := f.Format.BytesPerSample()
	for y := 0; y < f.Height/2; y++ {
		for x := 0; x < f.Width*bps; x++ {
			f.Data[0][y*f.Pitch[0]+x] = byte((x + 2*y) & 0xff)
		}
	}
}

func newSource(tb testing.TB, f frame.Format, s source, seed int64) *frame.Frame {
	newFrame := frame.New
	if s.alpha {
		newFrame = frame.NewAlpha
	}
	fr, err := newFrame(f, s.w, s.h)
	if err != nil {
		tb.Fatal(err)
	}
	fillNoise(fr, seed)
	if s.alpha {
		fillAlpha(fr, seed)
	}
	fr.PTS, fr.Source, fr.SourceFrame = seed, fmt.Sprintf("src%d", seed), seed*10
	return fr
}

// render draws the scene with package cpu.
func (sc scene) render(tb testing.TB, f frame.Format, srcs []*frame.Frame) *frame.Frame {
	dst, err := frame.New(f, sc.w, sc.h)
	if err != nil {
		tb.Fatal(err)
	}
	var ls []cpu.Layer
	for _, l := range sc.layers {
		ls = append(ls, cpu.Layer{Frame: srcs[l.src], Rect: l.rect, Crop: l.crop, Fit: l.fit, Opacity: l.opacity, Z: l.z})
	}
	if err := cpu.NewCompositor().Render(dst, ls); err != nil {
		tb.Fatal(err)
	}
	return dst
}

// cudaLayers places the scene's layers with frame.Place, as the backend
// does, over the given device frames.
func (sc scene) cudaLayers(frames []*cuda.Frame) []cuda.Layer {
	var ls []cuda.Layer
	for _, l := range sc.layers {
		f := frames[l.src]
		p := frame.Place(f.Width, f.Height, l.crop, l.rect, l.fit)
		ls = append(ls, cuda.Layer{Frame: f, Crop: cuda.Rect(p.Crop), Dst: cuda.Rect(p.Dst), Pad: cuda.Rect(p.Pad), Opacity: l.opacity, Z: l.z})
	}
	return ls
}

// compare checks got against want plane by plane: identical, or (when
// scaled) at least 50 dB PSNR. It logs how close the two are.
func compare(tb testing.TB, name string, want, got *frame.Frame, scaled bool) {
	tb.Helper()
	for p := 0; p < 2; p++ {
		diff, maxd, psnr := planeDiff(want, got, p)
		if diff == 0 {
			continue
		}
		msg := fmt.Sprintf("%s plane %d: %d samples differ (max %d), PSNR %.1f dB", name, p, diff, maxd, psnr)
		if !scaled || psnr < 50 {
			tb.Error(msg)
		} else {
			tb.Log(msg + " (≥ 50 dB: accepted)")
		}
	}
}

// planeDiff counts differing samples of plane p, the largest difference
// and the PSNR (in the format's bit depth).
func planeDiff(a, b *frame.Frame, p int) (n int, maxd int, psnr float64) {
	bps := a.Format.BytesPerSample()
	rows := a.Height >> p
	var se float64
	count := 0
	for r := 0; r < rows; r++ {
		for x := 0; x < a.Width; x++ {
			var va, vb int
			if bps == 2 {
				va = int(a.Plane16(p)[r*a.Pitch[p]/2+x])
				vb = int(b.Plane16(p)[r*b.Pitch[p]/2+x])
			} else {
				va = int(a.Data[p][r*a.Pitch[p]+x])
				vb = int(b.Data[p][r*b.Pitch[p]+x])
			}
			count++
			if va != vb {
				n++
				d := va - vb
				if d < 0 {
					d = -d
				}
				maxd = max(maxd, d)
				se += float64(d) * float64(d)
			}
		}
	}
	if n == 0 {
		return 0, 0, math.Inf(1)
	}
	peak := 255.0
	if bps == 2 {
		peak = 65535
	}
	return n, maxd, 10 * math.Log10(peak*peak/(se/float64(count)))
}

var formats = []frame.Format{frame.NV12, frame.P010}

// transitionCases are the fades, wipes and cuts compared with package cpu.
var transitionCases = []struct {
	t        playout.Kind
	progress float64
}{
	{playout.Cut, 0.3}, {playout.Fade, 0}, {playout.Fade, 0.001}, {playout.Fade, 0.25}, {playout.Fade, 0.5},
	{playout.Fade, 0.77}, {playout.Fade, 0.999}, {playout.Fade, 1}, {playout.Fade, math.NaN()},
	{playout.Wipe, 0}, {playout.Wipe, 0.3}, {playout.Wipe, 0.5}, {playout.Wipe, 0.83}, {playout.Wipe, 1},
}

func checkMeta(tb testing.TB, name string, want, got *frame.Frame) {
	tb.Helper()
	if want.PTS != got.PTS || want.Source != got.Source || want.SourceFrame != got.SourceFrame || want.TimeBase != got.TimeBase || want.Colour != got.Colour {
		tb.Errorf("%s: metadata %v/%q/%d, want %v/%q/%d", name, got.PTS, got.Source, got.SourceFrame, want.PTS, want.Source, want.SourceFrame)
	}
}

func rectOf(x, y, w, h int) frame.Rect { return frame.Rect{X: x, Y: y, W: w, H: h} }
