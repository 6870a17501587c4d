package cuda

/*
#cgo CFLAGS: -I${SRCDIR}
#include "driver.h"
#include "compositor.h"

// The kernels' per-pixel code, run on the CPU over the whole canvas.
static void onair_host_draw(const onair_draw48_args *a) {
	int keyed = 0; // as the GPU picks its kernel (Compositor.Draw)
	for (int l = 0; l < a->canvas.layers; l++) keyed |= a->layer[l].key != 0;
	for (int py = 0; py < a->canvas.height / 2; py++)
		for (int px = 0; px < a->canvas.width / 2; px++)
			onair_draw_quad(&a->canvas, a->layer, px, py, a->canvas.bps, a->canvas.shift, keyed);
}
static void onair_host_transition(const onair_transition_args *a) {
	for (int py = 0; py < a->height / 2; py++)
		for (int px = 0; px < a->width / 2; px++) onair_transition_quad(a, px, py, a->bps, a->shift);
}
static void onair_host_picture(const onair_picture_args *a) {
	for (int py = 0; py < a->height / 2; py++)
		for (int px = 0; px < a->width / 2; px++) onair_picture_quad(a, px, py, a->bps, a->shift);
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/playout"
)

// This file runs the compositor's kernel code (kernels/compositor.h, the
// same source nvcc compiles) on the CPU, over frames in host memory whose
// "device pointers" are host addresses. It is how the tests check the
// kernels against package cpu on machines without a GPU; nothing else uses
// it.

// hostCompositor draws and transitions frames made by newHostFrame.
type hostCompositor struct {
	plan  planner
	targs *C.onair_transition_args
}

// newHostCompositor's argument blocks are never freed: it is for tests.
func newHostCompositor() *hostCompositor {
	h := &hostCompositor{targs: (*C.onair_transition_args)(C.calloc(1, C.sizeof_onair_transition_args))}
	h.plan.args = (*C.onair_draw48_args)(C.calloc(1, C.sizeof_onair_draw48_args))
	h.plan.store = hostTables{}
	return h
}

func (h *hostCompositor) draw(dst *Frame, layers []Layer) error {
	if _, err := h.plan.plan(dst, layers); err != nil {
		return err
	}
	C.onair_host_draw(h.plan.args)
	return nil
}

func (h *hostCompositor) transition(dst, from, to *Frame, t playout.Kind, progress float64) error {
	act, err := planTransition(h.targs, dst, from, to, t, progress)
	if err != nil {
		return err
	}
	switch act {
	case copyFrom, copyTo:
		src := from
		if act == copyTo {
			src = to
		}
		for p := 0; p < 2; p++ {
			d, s := hostPlane(dst, p), hostPlane(src, p)
			for r := 0; r < dst.Height>>p; r++ {
				copy(d[r*dst.Pitch:r*dst.Pitch+dst.RowBytes()], s[r*src.Pitch:])
			}
		}
	default:
		C.onair_host_transition(h.targs)
	}
	transitionMeta(dst, from, to, act, progress)
	return nil
}

// hostTables keeps filter tables in C memory.
type hostTables struct{}

func (hostTables) alloc(words int) (DevicePtr, error) {
	p := C.calloc(C.size_t(words), 4)
	if p == nil {
		return 0, fmt.Errorf("cuda: out of host memory for a %d-word table", words)
	}
	return DevicePtr(uintptr(p)), nil
}

func (hostTables) write(p DevicePtr, words []int32) error {
	copy(unsafe.Slice((*int32)(C.onair_ptr(C.ulonglong(p))), len(words)), words)
	return nil
}

func (hostTables) free(p DevicePtr) error {
	C.free(C.onair_ptr(C.ulonglong(p)))
	return nil
}

// newHostFrame is a frame in C memory, pitch bytes per row, filled with
// the pattern of seed so that stale bytes show; with alpha, it has an alpha
// plane after the chroma rows, as a device frame does.
func newHostFrame(f frame.Format, w, h, pitch int, alpha bool) *Frame {
	rows := h + h/2
	if alpha {
		rows += h
	}
	size := pitch * rows
	p := C.malloc(C.size_t(size))
	b := unsafe.Slice((*byte)(p), size)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	base := DevicePtr(uintptr(p))
	fr := &Frame{Format: f, Width: w, Height: h, Pitch: pitch,
		Plane: [2]DevicePtr{base, base + DevicePtr(pitch*h)}, Meta: frame.Meta{TimeBase: frame.Rational{Num: 1, Den: 1}}}
	if alpha {
		fr.Alpha = base + DevicePtr(pitch*(h+h/2))
	}
	fr.refs.Store(1)
	return fr
}

// hostPlane is plane p of a host frame as bytes (pitch × rows); plane 2
// is the alpha plane.
func hostPlane(fr *Frame, p int) []byte {
	if p == 2 {
		return unsafe.Slice((*byte)(C.onair_ptr(C.ulonglong(fr.Alpha))), fr.Pitch*fr.Height)
	}
	return unsafe.Slice((*byte)(C.onair_ptr(C.ulonglong(fr.Plane[p]))), fr.Pitch*(fr.Height>>p))
}

func freeHostFrame(fr *Frame) { C.free(C.onair_ptr(C.ulonglong(fr.Plane[0]))) }

// hostPicture runs the picture conversion's kernel code on the CPU: pic.Src
// and dst's planes are host addresses.
func hostPicture(dst *Frame, pic Picture) error {
	a := (*C.onair_picture_args)(C.calloc(1, C.sizeof_onair_picture_args))
	defer C.free(unsafe.Pointer(a))
	if err := pic.args(a, dst); err != nil {
		return err
	}
	C.onair_host_picture(a)
	return nil
}

// hostBytes is n bytes of C memory (the host run's "device memory");
// freeHostBytes frees it.
func hostBytes(n int) []byte { return unsafe.Slice((*byte)(C.malloc(C.size_t(n))), n) }

func freeHostBytes(b []byte) { C.free(unsafe.Pointer(&b[0])) }

// hostPtr is the address of b's first byte as a "device pointer".
func hostPtr(b []byte) DevicePtr { return DevicePtr(uintptr(unsafe.Pointer(&b[0]))) }

// HostCopyRegions runs the copy kernel's code on the CPU over the grid its
// launches would have, the regions' "device pointers" host addresses: how
// the tests of the packages that build copy tables (nodes/cuda's test
// patterns) check them on a machine without a GPU. Nothing else calls it.
func HostCopyRegions(rs []CopyRegion) error { return hostCopyRegions(rs) }
