package cuda

/*
#include <dlfcn.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>

static void* up_dlopen(const char* name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static const char* up_dlerror(void) { return dlerror(); }
static void* up_dlsym(void* h, const char* name) { return dlsym(h, name); }

typedef int (*retain_t)(void**, int);
typedef int (*release_t)(int);
typedef int (*setcur_t)(void*);
typedef int (*memalloc_t)(uint64_t*, size_t);
typedef int (*memfree_t)(uint64_t);
typedef int (*hostalloc_t)(void**, size_t);
typedef int (*hostfree_t)(void*);
typedef int (*htod_t)(uint64_t, const void*, size_t);
typedef int (*sync_t)(void);

static int call_retain(void* f, void** ctx, int dev) { return ((retain_t)f)(ctx, dev); }
static int call_release(void* f, int dev) { return ((release_t)f)(dev); }
static int call_setcur(void* f, void* ctx) { return ((setcur_t)f)(ctx); }
static int call_memalloc(void* f, uint64_t* p, size_t n) { return ((memalloc_t)f)(p, n); }
static int call_memfree(void* f, uint64_t p) { return ((memfree_t)f)(p); }
static int call_hostalloc(void* f, void** p, size_t n) { return ((hostalloc_t)f)(p, n); }
static int call_hostfree(void* f, void* p) { return ((hostfree_t)f)(p); }
static int call_sync(void* f) { return ((sync_t)f)(); }

// copies copies n times from host to device and returns the elapsed
// monotonic nanoseconds, or -1 with *rc set on the first failure.
static int64_t copies(void* htod, void* sync, uint64_t dst, const void* src, size_t size, int n, int* rc) {
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++) {
		*rc = ((htod_t)htod)(dst, src, size);
		if (*rc != 0) return -1;
	}
	*rc = ((sync_t)sync)();
	if (*rc != 0) return -1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (int64_t)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
}
*/
import "C"

import (
	"fmt"
	goruntime "runtime"
	"unsafe"
)

// Upload is one measurement of host-to-device copies.
type Upload struct {
	Bytes       int     // bytes per copy
	Copies      int     // copies timed
	Pinned      bool    // from page-locked host memory (cuMemAllocHost), else pageable
	BytesPerSec float64 // what the copies moved per second
}

// MeasureUpload copies size bytes from host memory to device 0 n times and
// reports the rate: from a page-locked block when pinned (what the raw
// sources' direct and resident modes use), else from ordinary pageable
// memory (hwupload). It needs a usable GPU (Probe).
func MeasureUpload(size, n int, pinned bool) (Upload, error) {
	if _, err := Probe(); err != nil {
		return Upload{}, err
	}
	goruntime.LockOSThread() // a CUDA context is current per OS thread
	defer goruntime.UnlockOSThread()
	lib := C.CString("libcuda.so.1")
	defer C.free(unsafe.Pointer(lib))
	h := C.up_dlopen(lib)
	if h == nil {
		return Upload{}, fmt.Errorf("cannot load libcuda.so.1: %s", C.GoString(C.up_dlerror()))
	}
	fn := map[string]unsafe.Pointer{}
	for _, name := range []string{"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemAllocHost_v2", "cuMemFreeHost", "cuMemcpyHtoD_v2", "cuCtxSynchronize"} {
		cs := C.CString(name)
		p := C.up_dlsym(h, cs)
		C.free(unsafe.Pointer(cs))
		if p == nil {
			return Upload{}, fmt.Errorf("libcuda.so.1 has no %s: the driver is too old for onair", name)
		}
		fn[name] = p
	}
	check := func(what string, rc C.int) error {
		if rc != 0 {
			return fmt.Errorf("%s failed with CUDA error %d", what, int(rc))
		}
		return nil
	}
	var ctx unsafe.Pointer
	if err := check("cuDevicePrimaryCtxRetain", C.call_retain(fn["cuDevicePrimaryCtxRetain"], &ctx, 0)); err != nil {
		return Upload{}, err
	}
	defer C.call_release(fn["cuDevicePrimaryCtxRelease_v2"], 0)
	if err := check("cuCtxSetCurrent", C.call_setcur(fn["cuCtxSetCurrent"], ctx)); err != nil {
		return Upload{}, err
	}
	var dptr C.uint64_t
	if err := check("cuMemAlloc", C.call_memalloc(fn["cuMemAlloc_v2"], &dptr, C.size_t(size))); err != nil {
		return Upload{}, err
	}
	defer C.call_memfree(fn["cuMemFree_v2"], dptr)
	var host unsafe.Pointer
	if pinned {
		if err := check("cuMemAllocHost", C.call_hostalloc(fn["cuMemAllocHost_v2"], &host, C.size_t(size))); err != nil {
			return Upload{}, err
		}
		defer C.call_hostfree(fn["cuMemFreeHost"], host)
	} else {
		host = C.malloc(C.size_t(size))
		defer C.free(host)
	}
	// Touch every page first, so the copies do not pay for first faults.
	buf := unsafe.Slice((*byte)(host), size)
	for i := range buf {
		buf[i] = byte(i)
	}
	var rc C.int
	C.copies(fn["cuMemcpyHtoD_v2"], fn["cuCtxSynchronize"], dptr, host, C.size_t(size), 2, &rc) // warm up
	ns := C.copies(fn["cuMemcpyHtoD_v2"], fn["cuCtxSynchronize"], dptr, host, C.size_t(size), C.int(n), &rc)
	if ns < 0 {
		return Upload{}, check("cuMemcpyHtoD", rc)
	}
	return Upload{Bytes: size, Copies: n, Pinned: pinned, BytesPerSec: float64(size) * float64(n) / (float64(ns) / 1e9)}, nil
}
