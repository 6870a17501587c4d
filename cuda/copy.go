package cuda

/*
#cgo CFLAGS: -I${SRCDIR}
#include <stdlib.h>
#include "driver.h"
#include "compositor.h"

// onair_host_copy runs the copy kernel's code on the CPU for every thread
// of the grid a launch of the table would have (the tests' host run).
static void onair_host_copy(const onair_copy128_args *a) {
	unsigned int gx = onair_copy_blocks(a->e, a->entries);
	for (int y = 0; y < a->entries; y++)
		for (unsigned int x = 0; x < gx; x++)
			for (int ty = 0; ty < ONAIR_COPY_BY; ty++)
				for (int tx = 0; tx < ONAIR_COPY_BX; tx++) onair_copy_thread(&a->e[y], x, tx, ty);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// The decode loops' plane copies (compositor.h's onair_copy_thread) are
// launched by the NVDEC loops themselves (nvdec.h: nvd_copy_launch). What
// is here launches the same kernels on a Stream and runs their code on the
// CPU: how the tests check the kernel against plain copies, on the GPU and
// off it, at every alignment.

// CopyRegion is one entry of the copy kernel's table: Rows rows of Width
// bytes, from Src (SrcPitch bytes a row) to Dst (DstPitch bytes a row),
// both in device memory.
type CopyRegion struct {
	Src, Dst           DevicePtr
	SrcPitch, DstPitch int
	Width, Rows        int
}

// maxCopies is the most entries one launch of the copy kernel takes.
const maxCopies = C.ONAIR_MAX_COPIES

// The largest table must fit the kernel parameters PTX ISA 7.0 allows.
var _ [maxKernelParams - C.sizeof_onair_copy128_args]struct{}

// fillCopies writes rs (at most maxCopies) into the kernel argument a.
func fillCopies(a *C.onair_copy128_args, rs []CopyRegion) error {
	if len(rs) > maxCopies {
		return fmt.Errorf("cuda: %d copies in one launch, at most %d", len(rs), maxCopies)
	}
	a.entries = C.int(len(rs))
	for i, r := range rs {
		if r.Width < 0 || r.Rows < 0 || r.SrcPitch < r.Width && r.Rows > 1 || r.DstPitch < r.Width && r.Rows > 1 {
			return fmt.Errorf("cuda: a copy of %d rows of %d bytes between pitches %d and %d", r.Rows, r.Width, r.SrcPitch, r.DstPitch)
		}
		a.e[i] = C.onair_copy_entry{src: C.onair_u64(r.Src), dst: C.onair_u64(r.Dst),
			src_pitch: C.uint(r.SrcPitch), dst_pitch: C.uint(r.DstPitch), width: C.uint(r.Width), rows: C.uint(r.Rows)}
	}
	return nil
}

// CopyRegions queues the device-to-device copies rs on s in one launch of
// the copy kernel (one more for each MaxCopies beyond the first): many
// small 2D copies for the CPU cost of one, where a cuMemcpy2DAsync each
// would cost a driver call each. The copies of one launch run in any
// order and at once: regions that overlap must go in separate calls.
func (s *Stream) CopyRegions(rs []CopyRegion) error { return s.copyRegions(rs) }

// MaxCopies is the most regions one launch of the copy kernel copies.
const MaxCopies = maxCopies

// copyRegions queues the copies rs on s: launches of the copy kernel,
// maxCopies entries each (onair_copy8 for a table of 8 or fewer).
func (s *Stream) copyRegions(rs []CopyRegion) error {
	m, err := s.ctx.kernels()
	if err != nil {
		return err
	}
	if m.copy8 == nil {
		return errors.New("cuda: the compositor PTX has no copy kernels: rebuild it with `make ptx`")
	}
	return copyTables(rs, func(a *C.onair_copy128_args, n int) error {
		fn := m.copy128
		if n <= 8 {
			fn = m.copy8
		}
		gx := C.onair_copy_blocks(&a.e[0], C.int(n))
		return launchErr(s.ctx.d, C.onair_launch(s.ctx.d.t, s.ctx.h, s.h, nil, 0, fn, gx, C.uint(n), C.ONAIR_COPY_BX, C.ONAIR_COPY_BY, unsafe.Pointer(a), nil))
	})
}

// copyTables fills the copy kernel's table with rs, maxCopies entries at a
// time, and runs each table.
func copyTables(rs []CopyRegion, run func(a *C.onair_copy128_args, n int) error) error {
	a := (*C.onair_copy128_args)(C.calloc(1, C.sizeof_onair_copy128_args))
	defer C.free(unsafe.Pointer(a))
	for len(rs) > 0 {
		n := min(len(rs), maxCopies)
		if err := fillCopies(a, rs[:n]); err != nil {
			return err
		}
		if err := run(a, n); err != nil {
			return err
		}
		rs = rs[n:]
	}
	return nil
}

// hostCopyRegions runs the copy kernel's code on the CPU (host addresses
// as device pointers), maxCopies entries a table as the launches take them.
func hostCopyRegions(rs []CopyRegion) error {
	return copyTables(rs, func(a *C.onair_copy128_args, _ int) error {
		C.onair_host_copy(a)
		return nil
	})
}
