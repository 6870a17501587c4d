package cuda

/*
#cgo CFLAGS: -I${SRCDIR}
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Sched says how a CPU thread waits for the GPU in the context's blocking
// calls (Stream.Synchronize, and Event.Synchronize on events made without
// EventBlockingSync): the CU_CTX_SCHED_* flags.
type Sched uint32

const (
	// SchedAuto lets the driver choose (it spins when there are fewer
	// active contexts than CPU cores).
	SchedAuto Sched = 0x00
	// SchedSpin spins: the lowest latency, a whole core burnt per waiter.
	SchedSpin Sched = 0x01
	// SchedYield spins but yields the core between checks.
	SchedYield Sched = 0x02
	// SchedBlockingSync asks blocking calls to sleep on a driver interrupt.
	// (On driver 580 event waits still spun; EventBlockingSync events
	// sleep: see cuda/BENCHMARKS.md.)
	SchedBlockingSync Sched = 0x04
)

func (s Sched) String() string {
	switch s {
	case SchedAuto:
		return "auto"
	case SchedSpin:
		return "spin"
	case SchedYield:
		return "yield"
	case SchedBlockingSync:
		return "blocking-sync"
	}
	return fmt.Sprintf("Sched(%#x)", uint32(s))
}

// Context is the primary CUDA context of a device, retained by onair. The
// primary context is the one the CUDA runtime and NVDEC share, so frames,
// streams and events made in it work with every library in the process.
//
// Every method may be called from any goroutine: each driver call makes
// the context current on the OS thread it runs on (inside the cgo call, so
// a goroutine moving threads cannot lose it), which costs one cheap
// cuCtxSetCurrent and no runtime.LockOSThread.
type Context struct {
	d      *driver
	h      C.onair_h
	device int
	own    bool // made by NewOwnContext: destroyed, not released

	closeOnce sync.Once
	modOnce   sync.Once
	mod       *module
	modErr    error
}

// NewContext retains the primary context of device 0 with the given
// scheduling flags. Close releases it. The flags are the process's: they
// are fixed when the primary context starts (the first NewContext, or
// another library in the process), and asking a running context for other
// flags is an error. Whatever the context's flags, an event made with
// EventBlockingSync waits without spinning.
func NewContext(sched Sched) (*Context, error) { return NewContextOn(0, sched) }

// loadDevice loads the driver and finds device (0-based).
func loadDevice(device int) (*driver, C.int, error) {
	d, err := load()
	if err != nil {
		return nil, 0, err
	}
	var dev C.int
	if rc := C.onair_dev_get(d.t, &dev, C.int(device)); rc != 0 {
		return nil, 0, fmt.Errorf("GPU %d: %w", device, d.err("cuDeviceGet", rc))
	}
	return d, dev, nil
}

// NewContextOn retains the primary context of device (0-based).
func NewContextOn(device int, sched Sched) (*Context, error) {
	d, dev, err := loadDevice(device)
	if err != nil {
		return nil, err
	}
	if err := d.setSched(int(dev), sched); err != nil {
		return nil, fmt.Errorf("GPU %d: %w", device, err)
	}
	// Handles come back through C-typed locals: cgo forbids passing a
	// pointer into Go memory that holds Go pointers (as these structs do).
	var h C.onair_h
	if rc := C.onair_primary_retain(d.t, &h, dev); rc != 0 {
		return nil, fmt.Errorf("GPU %d: %w", device, d.err("cuDevicePrimaryCtxRetain", rc))
	}
	return &Context{d: d, h: h, device: int(dev)}, nil
}

// setSched sets the primary context's scheduling flags. They take effect
// when the primary context starts and a running one keeps its own, so
// asking a running context for other flags is an error rather than a
// silent no-op. (Measured on driver 580, cuda/BENCHMARKS.md: even set at
// the start, the flag did not stop cuEventSynchronize spinning; an event
// made with EventBlockingSync did.)
func (d *driver) setSched(dev int, sched Sched) error {
	var flags C.uint
	var active C.int
	if rc := C.onair_primary_state(d.t, C.int(dev), &flags, &active); rc != 0 {
		return d.err("cuDevicePrimaryCtxGetState", rc)
	}
	if active != 0 {
		if got := Sched(flags) & 7; got != sched {
			return fmt.Errorf("cuda: the GPU's primary context already runs with sched %v and keeps it: ask every NewContext of a process for the same sched (%v asked)", got, sched)
		}
		return nil
	}
	if rc := C.onair_primary_set_flags(d.t, C.int(dev), C.uint(sched)); rc != 0 {
		return fmt.Errorf("setting the GPU's context to %v waits: %w", sched, d.err("cuDevicePrimaryCtxSetFlags", rc))
	}
	return nil
}

// primaryActive reports whether the device's primary context is running
// (retained by someone in this process).
func (d *driver) primaryActive(dev int) (bool, error) {
	var flags C.uint
	var active C.int
	if rc := C.onair_primary_state(d.t, C.int(dev), &flags, &active); rc != 0 {
		return false, d.err("cuDevicePrimaryCtxGetState", rc)
	}
	return active != 0, nil
}

// Sched returns the scheduling flags in force.
func (c *Context) Sched() (Sched, error) {
	var flags C.uint
	var active C.int
	if rc := C.onair_primary_state(c.d.t, C.int(c.device), &flags, &active); rc != 0 {
		return 0, c.d.err("cuDevicePrimaryCtxGetState", rc)
	}
	return Sched(flags) & 7, nil
}

// Device is the context's device index.
func (c *Context) Device() int { return c.device }

// DriverVersion is the CUDA driver API version, e.g. 13000.
func (c *Context) DriverVersion() int { return c.d.version }

// Close releases the primary context (once; later calls do nothing). Free
// everything made in it first.
func (c *Context) Close() error {
	var err error
	c.closeOnce.Do(func() {
		if c.mod != nil {
			err = c.mod.unload()
		}
		if c.own {
			if rc := C.onair_ctx_destroy(c.d.t, c.h); rc != 0 && err == nil {
				err = c.d.err("cuCtxDestroy", rc)
			}
		} else if rc := C.onair_primary_release(c.d.t, C.int(c.device)); rc != 0 && err == nil {
			err = c.d.err("cuDevicePrimaryCtxRelease", rc)
		}
	})
	return err
}

// Synchronize waits until all work in the context is done.
func (c *Context) Synchronize() error {
	return c.d.err("cuCtxSynchronize", C.onair_ctx_sync(c.d.t, c.h))
}

// PushPop pushes the context onto the calling thread's stack and pops it:
// a check that the push/pop pair works on this driver (callbacks that run
// on driver threads, such as NVDEC's, use it).
func (c *Context) PushPop() error {
	return c.d.err("cuCtxPushCurrent/cuCtxPopCurrent", C.onair_ctx_push_pop(c.d.t, c.h))
}

// MemInfo returns the device memory free and in total, in bytes.
func (c *Context) MemInfo() (free, total uint64, err error) {
	var f, t C.size_t
	if rc := C.onair_mem_info(c.d.t, c.h, &f, &t); rc != 0 {
		return 0, 0, c.d.err("cuMemGetInfo", rc)
	}
	return uint64(f), uint64(t), nil
}

// DevicePtr is an address in device memory (a CUdeviceptr).
type DevicePtr uint64

// DeviceMemory is one allocation of device memory.
type DeviceMemory struct {
	ctx   *Context
	Ptr   DevicePtr
	Size  int // bytes
	Pitch int // bytes per row of a pitched allocation (AllocPitch); 0 otherwise
}

// Alloc allocates size bytes of device memory.
func (c *Context) Alloc(size int) (*DeviceMemory, error) {
	if size <= 0 {
		return nil, fmt.Errorf("cuda: Alloc of %d bytes: the size must be positive", size)
	}
	var p C.onair_dptr
	if rc := C.onair_mem_alloc(c.d.t, c.h, &p, C.size_t(size)); rc != 0 {
		return nil, fmt.Errorf("allocating %d bytes of GPU memory: %w", size, c.d.err("cuMemAlloc", rc))
	}
	return &DeviceMemory{ctx: c, Ptr: DevicePtr(p), Size: size}, nil
}

// AllocPitch allocates height rows of at least widthBytes bytes each, the
// row pitch chosen by the driver so that every row starts aligned for
// coalesced access (Pitch says what it chose).
func (c *Context) AllocPitch(widthBytes, height int) (*DeviceMemory, error) {
	if widthBytes <= 0 || height <= 0 {
		return nil, fmt.Errorf("cuda: AllocPitch of %d×%d bytes: both must be positive", widthBytes, height)
	}
	var p C.onair_dptr
	var pitch C.size_t
	if rc := C.onair_mem_alloc_pitch(c.d.t, c.h, &p, &pitch, C.size_t(widthBytes), C.size_t(height), 16); rc != 0 {
		return nil, fmt.Errorf("allocating %d rows of %d bytes of GPU memory: %w", height, widthBytes, c.d.err("cuMemAllocPitch", rc))
	}
	return &DeviceMemory{ctx: c, Ptr: DevicePtr(p), Size: int(pitch) * height, Pitch: int(pitch)}, nil
}

// Free frees the memory. Work still queued that uses it must be done.
func (m *DeviceMemory) Free() error {
	if m.Ptr == 0 {
		return nil
	}
	err := m.ctx.d.err("cuMemFree", C.onair_mem_free(m.ctx.d.t, m.ctx.h, C.onair_dptr(m.Ptr)))
	m.Ptr = 0
	return err
}

// HostFlags are cuMemHostAlloc's flags for page-locked host memory.
type HostFlags uint32

const (
	// HostPortable makes the memory page-locked for every context, not just
	// the one that allocated it.
	HostPortable HostFlags = 0x01
	// HostDeviceMap maps the memory into the device's address space.
	HostDeviceMap HostFlags = 0x02
	// HostWriteCombined allocates write-combined memory: faster for the
	// CPU to write and the GPU to read over PCIe, very slow for the CPU to
	// read. For upload blocks a source only writes (a file read into it).
	HostWriteCombined HostFlags = 0x04
)

// HostMemory is page-locked host memory: the GPU's copy engines read and
// write it directly, so a copy from it runs at the bus's full speed and
// asynchronously. It must stay allocated until the copies queued on it are
// done.
type HostMemory struct {
	ctx   *Context
	p     unsafe.Pointer
	n     int
	Flags HostFlags
}

// pageLocked is the host memory this process holds page-locked through
// the driver. The kernel does not show it: cuMemHostAlloc's memory is in
// neither VmLck nor VmPin of /proc/PID/status. Every call that page-locks
// host memory (cuMemHostAlloc, and cuMemHostRegister where it is used)
// adds its bytes here, and the call that releases them subtracts them.
var pageLocked atomic.Int64

// PageLockedBytes is the host memory the process holds page-locked through
// CUDA now, in bytes: what the bench and /status report as page-locked
// host memory beside /proc's VmLck and VmPin.
func PageLockedBytes() int64 { return pageLocked.Load() }

// HostAlloc allocates size bytes of page-locked host memory.
func (c *Context) HostAlloc(size int, flags HostFlags) (*HostMemory, error) {
	if size <= 0 {
		return nil, fmt.Errorf("cuda: HostAlloc of %d bytes: the size must be positive", size)
	}
	var p unsafe.Pointer
	if rc := C.onair_host_alloc(c.d.t, c.h, &p, C.size_t(size), C.uint(flags)); rc != 0 {
		return nil, fmt.Errorf("page-locking %d bytes of host memory: %w (the limit is RLIMIT_MEMLOCK and the machine's RAM)", size, c.d.err("cuMemHostAlloc", rc))
	}
	pageLocked.Add(int64(size))
	return &HostMemory{ctx: c, p: p, n: size, Flags: flags}, nil
}

// Bytes is the memory as a byte slice (valid until Free).
func (h *HostMemory) Bytes() []byte {
	if h.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.n)
}

// Len is the size in bytes.
func (h *HostMemory) Len() int { return h.n }

// Free frees the memory (once).
func (h *HostMemory) Free() error {
	if h.p == nil {
		return nil
	}
	err := h.ctx.d.err("cuMemFreeHost", C.onair_host_free(h.ctx.d.t, h.ctx.h, h.p))
	h.p = nil
	pageLocked.Add(-int64(h.n)) // given back to the driver either way: onair holds it no longer
	return err
}

// Stream is a queue of GPU work that runs in order. Streams are
// non-blocking: they never wait on the legacy default stream.
type Stream struct {
	ctx *Context
	h   C.onair_h
}

const streamNonBlocking = 0x01 // CU_STREAM_NON_BLOCKING

// NewStream creates a stream.
func (c *Context) NewStream() (*Stream, error) {
	var h C.onair_h
	if rc := C.onair_stream_create(c.d.t, c.h, &h, streamNonBlocking); rc != 0 {
		return nil, c.d.err("cuStreamCreate", rc)
	}
	return &Stream{ctx: c, h: h}, nil
}

// Context is the stream's context.
func (s *Stream) Context() *Context { return s.ctx }

// Close destroys the stream (its queued work still completes).
func (s *Stream) Close() error {
	if s.h == nil {
		return nil
	}
	err := s.ctx.d.err("cuStreamDestroy", C.onair_stream_destroy(s.ctx.d.t, s.ctx.h, s.h))
	s.h = nil
	return err
}

// Synchronize blocks until the work queued so far is done; how the thread
// waits follows the context's Sched.
func (s *Stream) Synchronize() error {
	return s.ctx.d.err("cuStreamSynchronize", C.onair_stream_sync(s.ctx.d.t, s.ctx.h, s.h))
}

// Query reports whether the work queued so far is done, without waiting.
func (s *Stream) Query() (bool, error) {
	rc := C.onair_stream_query(s.ctx.d.t, s.ctx.h, s.h)
	if rc == errNotReady {
		return false, nil
	}
	return rc == 0, s.ctx.d.err("cuStreamQuery", rc)
}

// Wait makes the work queued on s from now on wait until e has happened
// (the GPU waits; the CPU does not). An event never recorded is no wait.
func (s *Stream) Wait(e *Event) error {
	return s.ctx.d.err("cuStreamWaitEvent", C.onair_stream_wait(s.ctx.d.t, s.ctx.h, s.h, e.h))
}

// Region is one side of a copy: Host bytes when Host is not nil (page-locked
// or ordinary Go memory), else device memory at Dev; Pitch is the bytes from
// one row to the next.
type Region struct {
	Host  []byte
	Dev   DevicePtr
	Pitch int
}

// HostRegion and DeviceRegion name the two kinds of Region.
func HostRegion(b []byte, pitch int) Region      { return Region{Host: b, Pitch: pitch} }
func DeviceRegion(p DevicePtr, pitch int) Region { return Region{Dev: p, Pitch: pitch} }

func (r Region) check(widthBytes, height int) error {
	if r.Pitch < widthBytes {
		return fmt.Errorf("cuda: copy of rows of %d bytes with a pitch of %d", widthBytes, r.Pitch)
	}
	if r.Host != nil && len(r.Host) < (height-1)*r.Pitch+widthBytes {
		return fmt.Errorf("cuda: copy of %d rows of %d bytes (pitch %d) from/to %d host bytes", height, widthBytes, r.Pitch, len(r.Host))
	}
	if r.Host == nil && r.Dev == 0 {
		return errors.New("cuda: copy to or from a nil device pointer")
	}
	return nil
}

// Copy2D queues a copy of height rows of widthBytes bytes from src to dst,
// each at its own pitch: host to device, device to host or device to
// device. From page-locked memory it is asynchronous (keep the memory until
// the stream has done it); from ordinary Go memory the driver stages the
// bytes before it returns, so the slice may be reused at once; into
// ordinary Go memory it returns when the bytes are there.
func (s *Stream) Copy2D(dst, src Region, widthBytes, height int) error {
	if widthBytes <= 0 || height <= 0 {
		return nil
	}
	if err := dst.check(widthBytes, height); err != nil {
		return err
	}
	if err := src.check(widthBytes, height); err != nil {
		return err
	}
	var dh, sh unsafe.Pointer
	if dst.Host != nil {
		dh = unsafe.Pointer(&dst.Host[0])
	}
	if src.Host != nil {
		sh = unsafe.Pointer(&src.Host[0])
	}
	rc := C.onair_copy2d_async(s.ctx.d.t, s.ctx.h, dh, C.onair_dptr(dst.Dev), C.size_t(dst.Pitch),
		sh, C.onair_dptr(src.Dev), C.size_t(src.Pitch), C.size_t(widthBytes), C.size_t(height), s.h)
	return s.ctx.d.err("cuMemcpy2DAsync", rc)
}

// CopyHtoD queues a copy of src into device memory at dst (see Copy2D for
// when src may be reused).
func (s *Stream) CopyHtoD(dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	rc := C.onair_htod(s.ctx.d.t, s.ctx.h, C.onair_dptr(dst), unsafe.Pointer(&src[0]), C.size_t(len(src)), s.h)
	return s.ctx.d.err("cuMemcpyHtoDAsync", rc)
}

// CopyDtoH queues a copy of len(dst) bytes of device memory at src into dst.
func (s *Stream) CopyDtoH(dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	rc := C.onair_dtoh(s.ctx.d.t, s.ctx.h, unsafe.Pointer(&dst[0]), C.onair_dptr(src), C.size_t(len(dst)), s.h)
	return s.ctx.d.err("cuMemcpyDtoHAsync", rc)
}

// Memset8 queues filling n bytes at dst with v.
func (s *Stream) Memset8(dst DevicePtr, v byte, n int) error {
	return s.ctx.d.err("cuMemsetD8Async", C.onair_memset8(s.ctx.d.t, s.ctx.h, C.onair_dptr(dst), C.uchar(v), C.size_t(n), s.h))
}

// Memset2D8 queues filling height rows of width bytes (pitch apart) with v.
func (s *Stream) Memset2D8(dst DevicePtr, pitch int, v byte, width, height int) error {
	return s.ctx.d.err("cuMemsetD2D8Async", C.onair_memset2d8(s.ctx.d.t, s.ctx.h, C.onair_dptr(dst), C.size_t(pitch),
		C.uchar(v), C.size_t(width), C.size_t(height), s.h))
}

// Memset2D16 queues filling height rows of width 16-bit words (pitch bytes
// apart) with v.
func (s *Stream) Memset2D16(dst DevicePtr, pitch int, v uint16, width, height int) error {
	return s.ctx.d.err("cuMemsetD2D16Async", C.onair_memset2d16(s.ctx.d.t, s.ctx.h, C.onair_dptr(dst), C.size_t(pitch),
		C.ushort(v), C.size_t(width), C.size_t(height), s.h))
}

// EventFlags are cuEventCreate's flags.
type EventFlags uint32

const (
	// EventBlockingSync makes Event.Synchronize sleep instead of spinning,
	// whatever the context's Sched: about 20 µs of CPU instead of 505 µs
	// for a 500 µs wait, and 90–115 µs more latency (H200, driver 580).
	EventBlockingSync EventFlags = 0x01
	// EventDisableTiming makes an event that records no time: cheaper, for
	// ordering only (Since fails on it).
	EventDisableTiming EventFlags = 0x02
)

// Event marks a point in a stream's work: Record puts it there; other
// streams Wait for it, the CPU Synchronizes on it or Queries it.
type Event struct {
	ctx *Context
	h   C.onair_h
}

// NewEvent creates an event.
func (c *Context) NewEvent(flags EventFlags) (*Event, error) {
	var h C.onair_h
	if rc := C.onair_event_create(c.d.t, c.h, &h, C.uint(flags)); rc != 0 {
		return nil, c.d.err("cuEventCreate", rc)
	}
	return &Event{ctx: c, h: h}, nil
}

// Record places the event after the work queued on s so far.
func (e *Event) Record(s *Stream) error {
	return e.ctx.d.err("cuEventRecord", C.onair_event_record(e.ctx.d.t, e.ctx.h, e.h, s.h))
}

// Synchronize blocks the calling thread until the event has happened.
func (e *Event) Synchronize() error {
	return e.ctx.d.err("cuEventSynchronize", C.onair_event_sync(e.ctx.d.t, e.ctx.h, e.h))
}

// Query reports whether the event has happened, without waiting: what an
// event loop polls.
func (e *Event) Query() (bool, error) {
	rc := C.onair_event_query(e.ctx.d.t, e.ctx.h, e.h)
	if rc == errNotReady {
		return false, nil
	}
	return rc == 0, e.ctx.d.err("cuEventQuery", rc)
}

// Since is the GPU time from start to e; both must have been recorded and
// have happened, and neither made with EventDisableTiming. The driver's
// resolution is about half a microsecond.
func (e *Event) Since(start *Event) (time.Duration, error) {
	var ms C.float
	if rc := C.onair_event_elapsed(e.ctx.d.t, e.ctx.h, &ms, start.h, e.h); rc != 0 {
		return 0, e.ctx.d.err("cuEventElapsedTime", rc)
	}
	return time.Duration(float64(ms) * 1e6), nil
}

// Close destroys the event.
func (e *Event) Close() error {
	if e.h == nil {
		return nil
	}
	err := e.ctx.d.err("cuEventDestroy", C.onair_event_destroy(e.ctx.d.t, e.ctx.h, e.h))
	e.h = nil
	return err
}

// threadCPU is the CPU time the calling OS thread has used (for benchmarks:
// lock the goroutine to its thread around the measurement).
func threadCPU() time.Duration { return time.Duration(C.onair_thread_cpu_ns()) }
