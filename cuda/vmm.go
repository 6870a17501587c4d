package cuda

/*
#cgo CFLAGS: -I${SRCDIR}
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// SharedMemory is device memory that crosses processes: made with
// cuMemCreate so that it can be exported as a POSIX file descriptor
// (ExportFD), or imported from such a descriptor (ImportShared), and mapped
// into this process's device address space at Ptr either way. A browser
// source's producer makes its buffers so; onair imports them.
type SharedMemory struct {
	ctx    *Context
	handle C.onair_vmm
	Ptr    DevicePtr
	Size   int // bytes mapped: a multiple of the granularity
}

// Granularity is the size every shareable allocation is a multiple of
// (cuMemGetAllocationGranularity, minimum; 2 MiB on current GPUs).
func (c *Context) Granularity() (int, error) {
	var g C.size_t
	if rc := C.onair_vmm_granularity(c.d.t, c.h, C.int(c.device), &g); rc != 0 {
		return 0, c.d.err("cuMemGetAllocationGranularity", rc)
	}
	return int(g), nil
}

// ShareableSize is size rounded up to the granularity: what a producer
// allocates and what an importer maps for a buffer of size bytes.
func (c *Context) ShareableSize(size int) (int, error) {
	g, err := c.Granularity()
	if err != nil {
		return 0, err
	}
	return (size + g - 1) / g * g, nil
}

var vmmSteps = [...]string{"cuMemMap", "cuMemAddressReserve", "cuMemMap", "cuMemSetAccess", "cuMemCreate", "cuMemImportFromShareableHandle"}

func (c *Context) vmmErr(rc C.onair_res) error {
	if rc < 0 {
		return c.d.err("cuMemMap", rc)
	}
	step := int(rc / C.ONAIR_STEP)
	if step >= len(vmmSteps) {
		step = 0
	}
	return c.d.err(vmmSteps[step], rc%C.ONAIR_STEP)
}

// AllocShared makes size bytes (rounded up to the granularity) of device
// memory that ExportFD can hand to another process, mapped here.
func (c *Context) AllocShared(size int) (*SharedMemory, error) {
	n, err := c.ShareableSize(size)
	if err != nil {
		return nil, err
	}
	var h C.onair_vmm
	var p C.onair_dptr
	if rc := C.onair_vmm_create(c.d.t, c.h, C.int(c.device), C.size_t(n), &h, &p); rc != 0 {
		return nil, fmt.Errorf("making %d bytes of shareable GPU memory: %w", n, c.vmmErr(rc))
	}
	return &SharedMemory{ctx: c, handle: h, Ptr: DevicePtr(p), Size: n}, nil
}

// ExportFD returns a new POSIX file descriptor for the memory
// (cuMemExportToShareableHandle); the caller owns it and closes it once it
// has been sent.
func (m *SharedMemory) ExportFD() (int, error) {
	var fd C.int
	if rc := C.onair_vmm_export(m.ctx.d.t, m.ctx.h, m.handle, &fd); rc != 0 {
		return -1, fmt.Errorf("exporting %d bytes of GPU memory as a file descriptor: %w", m.Size, m.ctx.d.err("cuMemExportToShareableHandle", rc))
	}
	return int(fd), nil
}

// ImportShared maps the device memory another process exported as fd
// (cuMemImportFromShareableHandle, then reserve, map and access): size
// bytes, rounded up to the granularity. fd stays the caller's. Free undoes
// it; that is the call that waits on the driver's locks, so call it rarely.
func (c *Context) ImportShared(fd, size int) (*SharedMemory, error) {
	n, err := c.ShareableSize(size)
	if err != nil {
		return nil, err
	}
	var h C.onair_vmm
	var p C.onair_dptr
	if rc := C.onair_vmm_import(c.d.t, c.h, C.int(c.device), C.int(fd), C.size_t(n), &h, &p); rc != 0 {
		return nil, fmt.Errorf("importing %d bytes of GPU memory from descriptor %d: %w (the producer must export memory made with cuMemCreate, handle type POSIX file descriptor, at least %d bytes, on this GPU)",
			n, fd, c.vmmErr(rc), n)
	}
	return &SharedMemory{ctx: c, handle: h, Ptr: DevicePtr(p), Size: n}, nil
}

var vmmFreeSteps = [...]string{"cuMemUnmap", "cuMemUnmap", "cuMemRelease", "cuMemAddressFree"}

// Free unmaps the memory, releases its handle and frees its address range
// (once). Work still queued that reads it must be done.
func (m *SharedMemory) Free() error {
	if m.Ptr == 0 {
		return nil
	}
	rc := C.onair_vmm_free(m.ctx.d.t, m.ctx.h, m.handle, C.onair_dptr(m.Ptr), C.size_t(m.Size))
	m.Ptr = 0
	if rc == 0 {
		return nil
	}
	if rc < 0 {
		return m.ctx.d.err("cuMemUnmap", rc)
	}
	return m.ctx.d.err(vmmFreeSteps[min(int(rc/C.ONAIR_STEP), len(vmmFreeSteps)-1)], rc%C.ONAIR_STEP)
}

// Registered is host memory onair did not allocate (a producer's mapped
// memfd), page-locked with cuMemHostRegister so the copy engines read it
// at the bus's full speed.
type Registered struct {
	ctx *Context
	p   unsafe.Pointer
	n   int
}

// Register page-locks b (read-only: the mapping may lack write access).
// Unregister undoes it; b must stay mapped until then.
func (c *Context) Register(b []byte) (*Registered, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("cuda: Register of no bytes")
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if rc := C.onair_host_register(c.d.t, c.h, p, C.size_t(len(b)), 1); rc != 0 {
		return nil, fmt.Errorf("page-locking %d bytes of mapped host memory: %w", len(b), c.d.err("cuMemHostRegister", rc))
	}
	pageLocked.Add(int64(len(b)))
	return &Registered{ctx: c, p: p, n: len(b)}, nil
}

// Unregister undoes Register (once).
func (r *Registered) Unregister() error {
	if r == nil || r.p == nil {
		return nil
	}
	err := r.ctx.d.err("cuMemHostUnregister", C.onair_host_unregister(r.ctx.d.t, r.ctx.h, r.p))
	r.p = nil
	pageLocked.Add(-int64(r.n))
	return err
}
