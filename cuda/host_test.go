package cuda_test

import (
	"fmt"
	"github.com/onairhq/onair/playout"
	"testing"

	"github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/cpu"
)

// These tests run the kernels' code (kernels/compositor.h, compiled for the
// host) against package cpu. They need no GPU, so they run everywhere; the
// GPU tests then check that nvcc's build of the same code agrees.

// toHost copies a host frame into a host-memory cuda.Frame with the given
// extra bytes of pitch: a multiple of 4 reads rows a word at a time, 2
// (P010 needs even) sample by sample.
func toHost(f *frame.Frame, extra int) *cuda.Frame {
	row := f.Width * f.Format.BytesPerSample()
	var fr *cuda.Frame
	if f.Alpha != nil {
		fr = cuda.NewHostAlphaFrame(f.Format, f.Width, f.Height, row+extra)
		d := cuda.HostPlane(fr, 2)
		for r := 0; r < f.Height; r++ {
			copy(d[r*fr.Pitch:r*fr.Pitch+f.Width], f.Alpha[r*f.Width:])
		}
	} else {
		fr = cuda.NewHostFrame(f.Format, f.Width, f.Height, row+extra)
	}
	for p := 0; p < 2; p++ {
		d := cuda.HostPlane(fr, p)
		for r := 0; r < f.Height>>p; r++ {
			copy(d[r*fr.Pitch:r*fr.Pitch+row], f.Data[p][r*f.Pitch[p]:])
		}
	}
	fr.MetaFrom(f)
	return fr
}

func fromHost(tb testing.TB, fr *cuda.Frame) *frame.Frame {
	f, err := frame.New(fr.Format, fr.Width, fr.Height)
	if err != nil {
		tb.Fatal(err)
	}
	row := fr.RowBytes()
	for p := 0; p < 2; p++ {
		s := cuda.HostPlane(fr, p)
		for r := 0; r < fr.Height>>p; r++ {
			copy(f.Data[p][r*f.Pitch[p]:r*f.Pitch[p]+row], s[r*fr.Pitch:])
		}
	}
	fr.MetaTo(f)
	return f
}

func TestHostKernelMatchesCPU(t *testing.T) {
	for _, f := range formats {
		for _, sc := range scenes() {
			t.Run(fmt.Sprintf("%v/%s", f, sc.name), func(t *testing.T) {
				var srcs []*frame.Frame
				var frames []*cuda.Frame
				for i, s := range sc.sources {
					h := newSource(t, f, s, int64(i+1))
					srcs = append(srcs, h)
					frames = append(frames, toHost(h, 8*i+2*(i%2)+4))
				}
				want := sc.render(t, f, srcs)
				dst := cuda.NewHostFrame(f, sc.w, sc.h, sc.w*f.BytesPerSample()+64)
				hc := cuda.NewHostCompositor()
				if err := hc.Draw(dst, sc.cudaLayers(frames)); err != nil {
					t.Fatal(err)
				}
				compare(t, sc.name, want, fromHost(t, dst), false) // the host run must be exact
				// The tables hold at most the canvas's positions per
				// layer (4 filters of up to 2r+2 taps for a shrink by r).
				if w := hc.TableWords(); w > 64*1024*len(sc.layers) {
					t.Errorf("the filter tables hold %d words", w)
				}
				cuda.FreeHostFrame(dst)
				for _, fr := range frames {
					cuda.FreeHostFrame(fr)
				}
			})
		}
	}
}

func TestHostTransitionsMatchCPU(t *testing.T) {
	for _, f := range formats {
		from, to := newSource(t, f, source{96, 54, false}, 1), newSource(t, f, source{96, 54, false}, 2)
		hf, ht := toHost(from, 0), toHost(to, 12)
		defer cuda.FreeHostFrame(hf)
		defer cuda.FreeHostFrame(ht)
		for _, c := range transitionCases {
			name := fmt.Sprintf("%v/%v@%v", f, c.t, c.progress)
			want, _ := frame.New(f, 96, 54)
			if err := cpu.Transition(playout.Kind(c.t), want, from, to, c.progress); err != nil {
				t.Fatal(err)
			}
			dst := cuda.NewHostFrame(f, 96, 54, 96*f.BytesPerSample()+32)
			if err := cuda.NewHostCompositor().Transition(dst, hf, ht, c.t, c.progress); err != nil {
				t.Fatal(err)
			}
			got := fromHost(t, dst)
			compare(t, name, want, got, false)
			checkMeta(t, name, want, got)
			cuda.FreeHostFrame(dst)
		}
	}
}

// TestPlanErrors: layers the kernel could not draw safely are refused with
// a reason, before anything runs.
func TestPlanErrors(t *testing.T) {
	src := cuda.NewHostFrame(frame.NV12, 64, 64, 64)
	defer cuda.FreeHostFrame(src)
	other := cuda.NewHostFrame(frame.P010, 64, 64, 128)
	defer cuda.FreeHostFrame(other)
	dst := cuda.NewHostFrame(frame.NV12, 64, 64, 64)
	defer cuda.FreeHostFrame(dst)
	keyed := cuda.NewHostAlphaFrame(frame.NV12, 64, 64, 64)
	defer cuda.FreeHostFrame(keyed)
	keyed.Alpha = keyed.Plane[1] + 1<<40 // an alpha plane the kernel could not reach from the chroma plane
	full := cuda.Rect{W: 64, H: 64}
	for _, c := range []struct {
		name  string
		layer cuda.Layer
		want  string
	}{
		{"format", cuda.Layer{Frame: other, Crop: full, Dst: full, Opacity: 1}, "convert at the source"},
		{"self", cuda.Layer{Frame: dst, Crop: full, Dst: full, Opacity: 1}, "also a layer"},
		{"odd", cuda.Layer{Frame: src, Crop: cuda.Rect{W: 63, H: 64}, Dst: full, Opacity: 1}, "even"},
		{"outside", cuda.Layer{Frame: src, Crop: cuda.Rect{X: 2, W: 64, H: 64}, Dst: full, Opacity: 1}, "outside"},
		{"pad", cuda.Layer{Frame: src, Crop: full, Dst: full, Pad: cuda.Rect{W: 32, H: 64}, Opacity: 1}, "not inside pad"},
		{"alpha", cuda.Layer{Frame: keyed, Crop: full, Dst: full, Opacity: 1}, "alpha plane"},
	} {
		err := cuda.NewHostCompositor().Draw(dst, []cuda.Layer{c.layer})
		if err == nil || !contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to say %q", c.name, err, c.want)
		}
	}
	ls := make([]cuda.Layer, cuda.MaxLayers+1)
	for i := range ls {
		ls[i] = cuda.Layer{Frame: src, Crop: full, Dst: full, Opacity: 1}
	}
	if err := cuda.NewHostCompositor().Draw(dst, ls); err == nil {
		t.Errorf("%d layers drew", len(ls))
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

var _ = frame.Stretch
