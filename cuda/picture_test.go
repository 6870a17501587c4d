package cuda_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// pictureCases are the browser pictures the GPU converter takes: every
// pixel format and alpha, with row padding so that pitches are exercised.
var pictureCases = []struct {
	f ipc.PixelFormat
	a ipc.Alpha
}{
	{ipc.BGRA, ipc.AlphaOpaque}, {ipc.BGRA, ipc.AlphaStraight}, {ipc.BGRA, ipc.AlphaPremultiplied},
	{ipc.RGBA, ipc.AlphaStraight}, {ipc.NV12, ipc.AlphaOpaque},
}

// randomPicture is a picture of random bytes (padding included), its rows
// pad bytes wider than the pixels.
func randomPicture(f ipc.PixelFormat, a ipc.Alpha, w, h, pad int, seed uint64) (ipc.Picture, []byte) {
	pic := ipc.NewPicture(f, a, w, h)
	pic.Pitch += pad
	pic.Size = pic.Pitch * h
	if f == ipc.NV12 {
		pic.Offset1 = pic.Size + 64
		pic.Size = pic.Offset1 + pic.Pitch*h/2
	}
	b := make([]byte, pic.Size)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return pic, b
}

// devicePicture describes pic, at address src, as the converter takes it.
func devicePicture(pic ipc.Picture, src uintptr, f frame.Format) cuda.Picture {
	r, g, b := browser.Channels(pic.Format)
	return cuda.Picture{
		Src: cuda.DevicePtr(src), Width: pic.Width, Height: pic.Height, Pitch: pic.Pitch,
		NV12: pic.Format == ipc.NV12, Offset1: pic.Offset1, R: r, G: g, B: b,
		Straight: pic.Alpha == ipc.AlphaStraight, Alpha: browser.HasAlpha(pic), Coeffs: cuda.Coeffs(browser.CoeffsFor(f)),
	}
}

// samePlanes compares a device-layout frame's planes (as bytes) with a
// host frame's, row by row.
func samePlanes(t *testing.T, what string, got func(p int) []byte, pitch int, want *frame.Frame) {
	t.Helper()
	row := want.Width * want.Format.BytesPerSample()
	for p := 0; p < 2; p++ {
		g := got(p)
		for y := 0; y < want.Height>>p; y++ {
			gr, wr := g[y*pitch:y*pitch+row], want.Data[p][y*want.Pitch[p]:y*want.Pitch[p]+row]
			if !bytes.Equal(gr, wr) {
				for i := range gr {
					if gr[i] != wr[i] {
						t.Fatalf("%s: plane %d row %d byte %d: %d, the CPU converter wrote %d", what, p, y, i, gr[i], wr[i])
					}
				}
			}
		}
	}
}

// TestPictureKernelIsTheCPUConverter runs the conversion kernel's code on
// the CPU (compositor.h, as nvcc compiles it) over random pictures and
// checks it writes, byte for byte, what nodes/browser's converter writes.
func TestPictureKernelIsTheCPUConverter(t *testing.T) {
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		for i, c := range pictureCases {
			t.Run(fmt.Sprintf("%v/%v-%v", f, c.f, c.a), func(t *testing.T) {
				const w, h = 66, 38
				pic, src := randomPicture(c.f, c.a, w, h, 12, uint64(i))
				// Into a frame without alpha (key = "none"), and into one
				// with an alpha plane (keyed; opaque pictures' is 255).
				for _, keyed := range []bool{false, true} {
					newFrame, newHost := frame.New, cuda.NewHostFrame
					if keyed {
						newFrame, newHost = frame.NewAlpha, cuda.NewHostAlphaFrame
					}
					want, err := newFrame(f, w, h)
					must(t, err)
					must(t, browser.ToCanvas(want, src, pic))
					got := newHost(f, w, h, w*f.BytesPerSample()+32)
					defer cuda.FreeHostFrame(got)
					must(t, cuda.HostPicture(got, devicePicture(pic, uintptr(unsafe.Pointer(&src[0])), f)))
					runtime.KeepAlive(src)
					samePlanes(t, "the kernel's code", func(p int) []byte { return cuda.HostPlane(got, p) }, got.Pitch, want)
					if !keyed {
						continue
					}
					ga := cuda.HostPlane(got, 2)
					for y := 0; y < h; y++ {
						for x := 0; x < w; x++ {
							wa := want.Alpha[y*w+x]
							if ga[y*got.Pitch+x] != wa {
								t.Fatalf("alpha of pixel (%d,%d): the kernel's code wrote %d, the CPU converter %d", x, y, ga[y*got.Pitch+x], wa)
							}
							if !browser.HasAlpha(pic) && wa != frame.Opaque {
								t.Fatalf("alpha of pixel (%d,%d) of a picture without alpha is %d, not opaque", x, y, wa)
							}
						}
					}
				}
			})
		}
	}
}
