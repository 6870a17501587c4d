package cuda

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
)

// hostDeviceFrame is a gpu.Frame whose "device pointers" are h's host
// addresses, for the copy kernel's code run on the CPU.
func hostDeviceFrame(h *frame.Frame) *gpu.Frame {
	at := func(b []byte) gpu.DevicePtr { return gpu.DevicePtr(uintptr(unsafe.Pointer(&b[0]))) }
	return &gpu.Frame{Format: h.Format, Width: h.Width, Height: h.Height, Pitch: h.Pitch[0], Plane: [2]gpu.DevicePtr{at(h.Data[0]), at(h.Data[1])}}
}

// TestPatternCopyTablesCutNextsPictures runs, off the GPU, what
// test_pattern_cuda queues on it: each frame's pieces turned into the copy
// kernel's table (deviceArt.regions) over the art and the frame at their
// pitches, the kernel's own code run on the CPU over the grid of its
// launches (gpu.HostCopyRegions), into a frame of garbage; the picture is
// byte for byte Next's, for every pattern, NV12 and P010, through flashes
// and the slide's wrap.
func TestPatternCopyTablesCutNextsPictures(t *testing.T) {
	rate := frame.Rational{Num: 30, Den: 1}
	tone := lineUpTone(t, rate)
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		for _, p := range []media.Pattern{media.Bars, media.Ramp, media.Solid, media.Checker} {
			for _, sz := range [][2]int{{640, 360}, {66, 34}} {
				t.Run(fmt.Sprintf("%v/%v/%dx%d", f, p, sz[0], sz[1]), func(t *testing.T) {
					cfg := media.TestPatternConfig{ID: "source.tp", StampID: 77, Pattern: p, Format: f, Width: sz[0], Height: sz[1], Rate: rate, Tone: tone}
					tp, err := media.NewTestPattern(cfg)
					noErr(t, err)
					ref, _ := media.NewTestPattern(cfg)
					host, err := tp.NewArt()
					noErr(t, err)
					src := &testPattern{tp: tp, art: &deviceArt{base: hostDeviceFrame(host.Base), ink: hostDeviceFrame(host.Ink)}}
					got, _ := frame.New(f, sz[0], sz[1])
					want, _ := frame.New(f, sz[0], sz[1])
					d := hostDeviceFrame(got)
					for _, n := range append([]int64{0, 1, 2, 29, 30, 31, 59, 60, 61, 90}, int64(sz[0]/4-1), int64(sz[0]/4), int64(sz[0]/4+1)) {
						for i := range got.Bytes() {
							got.Bytes()[i] = 0xa7
						}
						noErr(t, src.lay(d, n, gpu.HostCopyRegions))
						ref.SetNext(n)
						noErr(t, ref.Next(want))
						if !bytes.Equal(got.Bytes(), want.Bytes()) {
							t.Fatalf("frame %d: the copies' picture differs from Next's at byte %d of %d", n, firstDiffAt(got.Bytes(), want.Bytes()), len(want.Bytes()))
						}
					}
					runtime.KeepAlive(host)
					runtime.KeepAlive(got)
				})
			}
		}
	}
}

// BenchmarkPatternCutTables is the Go side of a 1080p frame of
// test_pattern_cuda, off the GPU: the frame's metadata and sound
// (NextMeta), its pieces and their copy table, without the driver calls
// (the launch, the pool's wait, the written event) that BenchmarkTestPatternCPU
// counts on a GPU. draw is what the old chain did on the CPU first: Next's
// drawing of the whole picture (before its copy into the staging block).
func BenchmarkPatternCutTables(b *testing.B) {
	rate := frame.Rational{Num: 30, Den: 1}
	cfg := media.TestPatternConfig{ID: "source.tp", StampID: 1, Pattern: media.Bars, Format: frame.NV12, Width: 1920, Height: 1080, Rate: rate, Tone: lineUpTone(b, rate)}
	b.Run("cut", func(b *testing.B) {
		tp, err := media.NewTestPattern(cfg)
		noErr(b, err)
		host, err := tp.NewArt()
		noErr(b, err)
		src := &testPattern{tp: tp, art: &deviceArt{base: hostDeviceFrame(host.Base), ink: hostDeviceFrame(host.Ink)}}
		out, _ := frame.New(cfg.Format, cfg.Width, cfg.Height)
		d := hostDeviceFrame(out)
		none := func([]gpu.CopyRegion) error { return nil }
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			var m frame.Meta
			noErr(b, src.lay(d, tp.NextMeta(&m), none))
		}
	})
	b.Run("draw", func(b *testing.B) {
		tp, err := media.NewTestPattern(cfg)
		noErr(b, err)
		out, _ := frame.New(cfg.Format, cfg.Width, cfg.Height)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			noErr(b, tp.Next(out))
		}
	})
}
