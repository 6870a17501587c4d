package compiler

// What drawing costs on the CPU backend: the compositor's ns of one core
// a tick for each bus, which the cpu plan's "cpu" budget sums against the
// host's cores and lint's cpu-draw-cost compares with the frame period.

import (
	"math"

	"github.com/onairhq/onair/lang"
)

// What the CPU backend's compositor costs, in ns of one core, from
// nodes/cpu/BENCHMARKS.md. It scales a layer with a separable filter: a
// layer shrunk r:1 reads 2r+2 taps a sample across, on r source rows for
// every row drawn, then 2r+2 taps down (4 taps each way when enlarging).
// BenchmarkComposite's scenes give about 1.14 ns a tap: its 1080p scene
// (three layers shrunk 2:1, one shrunk 3:1 and blended) took 38.9 ms, the
// 640x360 one 4.3 ms, the 640x360 one from 1080p sources (6:1 and 9:1)
// 25 ms. An opaque layer at its own size is a row copy: nv12-1080p-copy,
// the canvas painted black and one such layer, took 1.9 to 3 ms, about
// 0.5 ns a pixel to paint and 0.8 to copy.
// An exact 2:1 or 4:1 shrink (a grid's cell, nodes/cpu/shrink.go) goes
// a fast path instead: about 0.65 ns a source pixel read in NV12
// (BenchmarkVersusFFmpeg's grids, 2026-12-02: 4.3–6.2 ms for the 1080p
// 2×2, 22–25 for the 4×4), 1.3–1.9 in P010; the constant is NV12's with
// some margin.
const (
	cpuNsPerTap       = 1.14
	cpuShrinkNsPerSrc = 0.8
	cpuCopyNsPerPixel = 0.8
	cpuFillNsPerPixel = 0.5
	cpuMaxBands       = 4 // the backend draws canvases of 720p and up in up to 4 bands
)

// CPUTick is one bus's estimated cost of drawing a tick on the CPU.
type CPUTick struct {
	Bus      *lang.Bus
	Scene    *lang.Scene // its dearest scene; nil for an AUX bus showing one source
	CPUNs    float64     // ns of one core a tick
	Pixels   int64       // pixels of layers drawn a tick
	Bands    int         // how many cores at most share the drawing
	WallNs   float64     // CPUNs spread over Bands
	PeriodNs float64     // the show's frame period
}

// EstimateCPUTicks estimates what drawing a tick costs each bus on the
// CPU backend, for its dearest scene (a transition draws two scenes and
// briefly costs more).
func EstimateCPUTicks(s *lang.Show) []CPUTick {
	w, h := s.Size.W, s.Size.H
	bands := 1
	if w*h >= 1280*720 {
		bands = cpuMaxBands
	}
	period := 1e9 / fps(s.FrameRate)
	var out []CPUTick
	for _, b := range s.Buses {
		t := CPUTick{Bus: b, Bands: bands, PeriodNs: period}
		var scenes []*lang.Scene
		switch {
		case b.Kind == "program":
			scenes = s.Scenes // it can cut to any scene
		case b.Scene != nil:
			scenes = []*lang.Scene{b.Scene}
		case b.Source != nil:
			t.CPUNs, t.Pixels = cpuSceneCost(s, []*lang.Layer{{Source: b.Source, Rect: lang.Rect{W: w, H: h}, Opacity: 1}})
		}
		for _, sc := range scenes {
			if ns, px := cpuSceneCost(s, sc.Layers); ns > t.CPUNs || t.Scene == nil {
				t.Scene, t.CPUNs, t.Pixels = sc, ns, px
			}
		}
		t.WallNs = t.CPUNs / float64(bands)
		out = append(out, t)
	}
	return out
}

// cpuSceneCost is the ns of one core and the pixels of layers to draw a
// scene: the canvas painted black, then every visible layer.
func cpuSceneCost(s *lang.Show, layers []*lang.Layer) (float64, int64) {
	cw, ch := s.Size.W, s.Size.H
	ns := cpuFillNsPerPixel * float64(cw*ch)
	var pixels int64
	for _, l := range layers {
		if l == nil || l.Opacity <= 0 || l.Source == nil {
			continue
		}
		r := l.Rect
		if r.W <= 0 || r.H <= 0 {
			r = lang.Rect{W: cw, H: ch}
		}
		// The part of the rect on the canvas.
		visW, visH := min(r.X+r.W, cw)-max(r.X, 0), min(r.Y+r.H, ch)-max(r.Y, 0)
		if visW <= 0 || visH <= 0 {
			continue
		}
		visible := float64(visW) * float64(visH) / (float64(r.W) * float64(r.H))
		sw, sh := float64(l.Source.Size.W), float64(l.Source.Size.H)
		if sw <= 0 || sh <= 0 {
			sw, sh = float64(cw), float64(ch)
		}
		if l.Crop != nil && l.Crop.W > 0 && l.Crop.H > 0 {
			sw, sh = float64(l.Crop.W), float64(l.Crop.H)
		}
		// The picture's size on the canvas, and the source it reads.
		dw, dh := float64(r.W), float64(r.H)
		switch l.Fit {
		case "contain":
			k := math.Min(dw/sw, dh/sh)
			ns += cpuFillNsPerPixel * (dw*dh - sw*k*sh*k) * visible // the padding
			dw, dh = sw*k, sh*k
		case "cover":
			k := math.Max(dw/sw, dh/sh)
			sw, sh = dw/k, dh/k
		}
		area := dw * dh * visible
		pixels += int64(area)
		if sw == dw && sh == dh && l.Opacity >= 1 {
			ns += cpuCopyNsPerPixel * area
			continue
		}
		rx, ry := sw/dw, sh/dh
		if rx == ry && (rx == 2 || rx == 4) {
			ns += cpuShrinkNsPerSrc * rx * ry * area
			continue
		}
		taps := ry*(2*math.Max(1, rx)+2) + 2*math.Max(1, ry) + 2
		ns += cpuNsPerTap * taps * area
	}
	return ns, pixels
}
