// driver.h: onair's own declarations of the CUDA driver API functions it
// calls, the table the loader fills with dlsym, and the trampolines Go calls.
//
// Nothing here includes cuda.h: the types are written out from the driver
// API's documented signatures (handles are opaque pointers, CUdevice an int,
// CUdeviceptr a 64-bit integer, CUresult an int), so onair builds where no
// CUDA toolkit is installed. Only cgo files of package cuda include it.
//
// Every trampoline that needs a context takes it as its second argument and
// makes it current on the calling thread first (cuCtxSetCurrent is per OS
// thread, and a goroutine may run on another thread at its next call). A
// cgo call runs start to end on one thread, so setting the context inside
// the trampoline is always right, costs one cheap driver call and needs no
// runtime.LockOSThread. A failure to set the context is returned negated, so
// the Go side can blame cuCtxSetCurrent rather than the call it preceded.
#ifndef ONAIR_DRIVER_H
#define ONAIR_DRIVER_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int onair_res;                  // CUresult: 0 is success
typedef void *onair_h;                  // CUcontext, CUstream, CUevent, CUmodule, CUfunction
typedef unsigned long long onair_dptr;  // CUdeviceptr

// The 2D copy descriptor of cuMemcpy2DAsync_v2 (CUDA_MEMCPY2D): source and
// destination each as offset, memory type, host pointer, device pointer,
// array and pitch, then the width in bytes and the height in rows.
typedef struct {
	size_t src_x_bytes, src_y;
	int src_type;  // 1 host, 2 device
	const void *src_host;
	onair_dptr src_dev;
	void *src_array;
	size_t src_pitch;
	size_t dst_x_bytes, dst_y;
	int dst_type;
	void *dst_host;
	onair_dptr dst_dev;
	void *dst_array;
	size_t dst_pitch;
	size_t width_bytes, height;
} onair_copy2d;

_Static_assert(offsetof(onair_copy2d, src_type) == 16, "CUDA_MEMCPY2D");
_Static_assert(offsetof(onair_copy2d, src_host) == 24, "CUDA_MEMCPY2D");
_Static_assert(offsetof(onair_copy2d, src_pitch) == 48, "CUDA_MEMCPY2D");
_Static_assert(offsetof(onair_copy2d, dst_type) == 72, "CUDA_MEMCPY2D");
_Static_assert(offsetof(onair_copy2d, dst_pitch) == 104, "CUDA_MEMCPY2D");
_Static_assert(sizeof(onair_copy2d) == 128, "CUDA_MEMCPY2D");

enum { onair_mem_host = 1, onair_mem_device = 2 };

// The virtual memory management API (cuMemCreate and its family): memory
// that one process exports as a POSIX file descriptor and another imports
// and maps into its own address space.
typedef unsigned long long onair_vmm;  // CUmemGenericAllocationHandle

// CUmemLocation: where memory lives (type 1: a device, id its ordinal).
typedef struct {
	int type;
	int id;
} onair_mem_location;

// CUmemAllocationProp: what cuMemCreate makes and which shareable handle it
// may be exported as (32 bytes: the flags block is reserved, all zero).
typedef struct {
	int type;                  // CUmemAllocationType: 1 pinned (device memory that is not migrated)
	int requested_handles;     // CUmemAllocationHandleType bits: 1 POSIX file descriptor
	onair_mem_location location;
	void *win32_metadata;      // NULL off Windows
	unsigned char compression, rdma;
	unsigned short usage;
	unsigned char reserved[4];
} onair_mem_prop;

// CUmemAccessDesc: who may touch a mapped range, and how.
typedef struct {
	onair_mem_location location;
	int flags;  // CUmemAccess_flags: 1 read, 3 read and write
} onair_mem_access;

enum {
	onair_alloc_pinned = 1,       // CU_MEM_ALLOCATION_TYPE_PINNED
	onair_handle_posix_fd = 1,    // CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
	onair_location_device = 1,    // CU_MEM_LOCATION_TYPE_DEVICE
	onair_access_rw = 3,          // CU_MEM_ACCESS_FLAGS_PROT_READWRITE
	onair_granularity_min = 0,    // CU_MEM_ALLOC_GRANULARITY_MINIMUM
	onair_host_register_ro = 0x08 // CU_MEMHOSTREGISTER_READ_ONLY
};

typedef struct {
	void *lib;
	onair_res (*Init)(unsigned);
	onair_res (*DriverGetVersion)(int *);
	onair_res (*DeviceGetCount)(int *);
	onair_res (*DeviceGet)(int *, int);
	onair_res (*DeviceGetName)(char *, int, int);
	onair_res (*DeviceTotalMem)(size_t *, int);
	onair_res (*DeviceGetAttribute)(int *, int, int);
	onair_res (*GetErrorName)(onair_res, const char **);
	onair_res (*GetErrorString)(onair_res, const char **);
	onair_res (*PrimaryCtxRetain)(onair_h *, int);
	onair_res (*PrimaryCtxRelease)(int);
	onair_res (*PrimaryCtxSetFlags)(int, unsigned);
	onair_res (*PrimaryCtxGetState)(int, unsigned *, int *);
	onair_res (*CtxSetCurrent)(onair_h);
	onair_res (*CtxPushCurrent)(onair_h);
	onair_res (*CtxPopCurrent)(onair_h *);
	onair_res (*CtxSynchronize)(void);
	onair_res (*MemGetInfo)(size_t *, size_t *);
	onair_res (*MemAlloc)(onair_dptr *, size_t);
	onair_res (*MemAllocPitch)(onair_dptr *, size_t *, size_t, size_t, unsigned);
	onair_res (*MemFree)(onair_dptr);
	onair_res (*MemHostAlloc)(void **, size_t, unsigned);
	onair_res (*MemFreeHost)(void *);
	onair_res (*MemcpyHtoDAsync)(onair_dptr, const void *, size_t, onair_h);
	onair_res (*MemcpyDtoHAsync)(void *, onair_dptr, size_t, onair_h);
	onair_res (*Memcpy2DAsync)(const onair_copy2d *, onair_h);
	onair_res (*MemsetD8Async)(onair_dptr, unsigned char, size_t, onair_h);
	onair_res (*MemsetD2D8Async)(onair_dptr, size_t, unsigned char, size_t, size_t, onair_h);
	onair_res (*MemsetD2D16Async)(onair_dptr, size_t, unsigned short, size_t, size_t, onair_h);
	onair_res (*StreamCreate)(onair_h *, unsigned);
	onair_res (*StreamDestroy)(onair_h);
	onair_res (*StreamSynchronize)(onair_h);
	onair_res (*StreamQuery)(onair_h);
	onair_res (*StreamWaitEvent)(onair_h, onair_h, unsigned);
	onair_res (*EventCreate)(onair_h *, unsigned);
	onair_res (*EventRecord)(onair_h, onair_h);
	onair_res (*EventSynchronize)(onair_h);
	onair_res (*EventQuery)(onair_h);
	onair_res (*EventElapsedTime)(float *, onair_h, onair_h);
	onair_res (*EventDestroy)(onair_h);
	onair_res (*ModuleLoadDataEx)(onair_h *, const void *, unsigned, int *, void **);
	onair_res (*ModuleUnload)(onair_h);
	onair_res (*ModuleGetFunction)(onair_h *, onair_h, const char *);
	onair_res (*LaunchKernel)(onair_h, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                          unsigned, onair_h, void **, void **);
	onair_res (*MemHostRegister)(void *, size_t, unsigned);
	onair_res (*MemHostUnregister)(void *);
	onair_res (*MemGetAllocationGranularity)(size_t *, const onair_mem_prop *, int);
	onair_res (*MemCreate)(onair_vmm *, size_t, const onair_mem_prop *, unsigned long long);
	onair_res (*MemExportToShareableHandle)(void *, onair_vmm, int, unsigned long long);
	onair_res (*MemImportFromShareableHandle)(onair_vmm *, void *, int);
	onair_res (*MemAddressReserve)(onair_dptr *, size_t, size_t, onair_dptr, unsigned long long);
	onair_res (*MemAddressFree)(onair_dptr, size_t);
	onair_res (*MemMap)(onair_dptr, size_t, size_t, onair_vmm, unsigned long long);
	onair_res (*MemUnmap)(onair_dptr, size_t);
	onair_res (*MemSetAccess)(onair_dptr, size_t, const onair_mem_access *, size_t);
	onair_res (*MemRelease)(onair_vmm);
} onair_cu;

// The exported symbol behind each table entry: the _v2 entry points where
// the driver API has them (the unsuffixed names are the old ABI).
static const struct {
	const char *name;
	size_t off;
} onair_syms[] = {
	{"cuInit", offsetof(onair_cu, Init)},
	{"cuDriverGetVersion", offsetof(onair_cu, DriverGetVersion)},
	{"cuDeviceGetCount", offsetof(onair_cu, DeviceGetCount)},
	{"cuDeviceGet", offsetof(onair_cu, DeviceGet)},
	{"cuDeviceGetName", offsetof(onair_cu, DeviceGetName)},
	{"cuDeviceTotalMem_v2", offsetof(onair_cu, DeviceTotalMem)},
	{"cuDeviceGetAttribute", offsetof(onair_cu, DeviceGetAttribute)},
	{"cuGetErrorName", offsetof(onair_cu, GetErrorName)},
	{"cuGetErrorString", offsetof(onair_cu, GetErrorString)},
	{"cuDevicePrimaryCtxRetain", offsetof(onair_cu, PrimaryCtxRetain)},
	{"cuDevicePrimaryCtxRelease_v2", offsetof(onair_cu, PrimaryCtxRelease)},
	{"cuDevicePrimaryCtxSetFlags_v2", offsetof(onair_cu, PrimaryCtxSetFlags)},
	{"cuDevicePrimaryCtxGetState", offsetof(onair_cu, PrimaryCtxGetState)},
	{"cuCtxSetCurrent", offsetof(onair_cu, CtxSetCurrent)},
	{"cuCtxPushCurrent_v2", offsetof(onair_cu, CtxPushCurrent)},
	{"cuCtxPopCurrent_v2", offsetof(onair_cu, CtxPopCurrent)},
	{"cuCtxSynchronize", offsetof(onair_cu, CtxSynchronize)},
	{"cuMemGetInfo_v2", offsetof(onair_cu, MemGetInfo)},
	{"cuMemAlloc_v2", offsetof(onair_cu, MemAlloc)},
	{"cuMemAllocPitch_v2", offsetof(onair_cu, MemAllocPitch)},
	{"cuMemFree_v2", offsetof(onair_cu, MemFree)},
	{"cuMemHostAlloc", offsetof(onair_cu, MemHostAlloc)},
	{"cuMemFreeHost", offsetof(onair_cu, MemFreeHost)},
	{"cuMemcpyHtoDAsync_v2", offsetof(onair_cu, MemcpyHtoDAsync)},
	{"cuMemcpyDtoHAsync_v2", offsetof(onair_cu, MemcpyDtoHAsync)},
	{"cuMemcpy2DAsync_v2", offsetof(onair_cu, Memcpy2DAsync)},
	{"cuMemsetD8Async", offsetof(onair_cu, MemsetD8Async)},
	{"cuMemsetD2D8Async", offsetof(onair_cu, MemsetD2D8Async)},
	{"cuMemsetD2D16Async", offsetof(onair_cu, MemsetD2D16Async)},
	{"cuStreamCreate", offsetof(onair_cu, StreamCreate)},
	{"cuStreamDestroy_v2", offsetof(onair_cu, StreamDestroy)},
	{"cuStreamSynchronize", offsetof(onair_cu, StreamSynchronize)},
	{"cuStreamQuery", offsetof(onair_cu, StreamQuery)},
	{"cuStreamWaitEvent", offsetof(onair_cu, StreamWaitEvent)},
	{"cuEventCreate", offsetof(onair_cu, EventCreate)},
	{"cuEventRecord", offsetof(onair_cu, EventRecord)},
	{"cuEventSynchronize", offsetof(onair_cu, EventSynchronize)},
	{"cuEventQuery", offsetof(onair_cu, EventQuery)},
	{"cuEventElapsedTime", offsetof(onair_cu, EventElapsedTime)},
	{"cuEventDestroy_v2", offsetof(onair_cu, EventDestroy)},
	{"cuModuleLoadDataEx", offsetof(onair_cu, ModuleLoadDataEx)},
	{"cuModuleUnload", offsetof(onair_cu, ModuleUnload)},
	{"cuModuleGetFunction", offsetof(onair_cu, ModuleGetFunction)},
	{"cuLaunchKernel", offsetof(onair_cu, LaunchKernel)},
	{"cuMemHostRegister_v2", offsetof(onair_cu, MemHostRegister)},
	{"cuMemHostUnregister", offsetof(onair_cu, MemHostUnregister)},
	{"cuMemGetAllocationGranularity", offsetof(onair_cu, MemGetAllocationGranularity)},
	{"cuMemCreate", offsetof(onair_cu, MemCreate)},
	{"cuMemExportToShareableHandle", offsetof(onair_cu, MemExportToShareableHandle)},
	{"cuMemImportFromShareableHandle", offsetof(onair_cu, MemImportFromShareableHandle)},
	{"cuMemAddressReserve", offsetof(onair_cu, MemAddressReserve)},
	{"cuMemAddressFree", offsetof(onair_cu, MemAddressFree)},
	{"cuMemMap", offsetof(onair_cu, MemMap)},
	{"cuMemUnmap", offsetof(onair_cu, MemUnmap)},
	{"cuMemSetAccess", offsetof(onair_cu, MemSetAccess)},
	{"cuMemRelease", offsetof(onair_cu, MemRelease)},
};

static int onair_nsyms(void) { return (int)(sizeof onair_syms / sizeof onair_syms[0]); }
static const char *onair_sym_name(int i) { return onair_syms[i].name; }

// onair_load opens lib and fills a new table. It returns the table, or NULL
// with *missing set to -1 (dlopen failed: *dlerr says why) or to the index of
// the first symbol the library lacks.
static onair_cu *onair_load(const char *lib, int *missing, const char **dlerr) {
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		*missing = -1;
		*dlerr = dlerror();
		return NULL;
	}
	onair_cu *t = (onair_cu *)calloc(1, sizeof *t);
	t->lib = h;
	for (int i = 0; i < onair_nsyms(); i++) {
		void *p = dlsym(h, onair_syms[i].name);
		if (p == NULL) {
			free(t);
			dlclose(h);
			*missing = i;
			return NULL;
		}
		memcpy((char *)t + onair_syms[i].off, &p, sizeof p);
	}
	return t;
}

#define ONAIR_CUR(t, ctx)                            \
	do {                                             \
		if ((ctx) != NULL) {                         \
			onair_res r_ = (t)->CtxSetCurrent(ctx);  \
			if (r_ != 0) return -r_;                 \
		}                                            \
	} while (0)

static const char *onair_err_name(const onair_cu *t, onair_res rc) {
	const char *s = NULL;
	if (t->GetErrorName(rc, &s) != 0) return NULL;
	return s;
}
static const char *onair_err_string(const onair_cu *t, onair_res rc) {
	const char *s = NULL;
	if (t->GetErrorString(rc, &s) != 0) return NULL;
	return s;
}

// Driver and devices (no context needed).
static onair_res onair_init(const onair_cu *t) { return t->Init(0); }
static onair_res onair_version(const onair_cu *t, int *v) { return t->DriverGetVersion(v); }
static onair_res onair_dev_count(const onair_cu *t, int *n) { return t->DeviceGetCount(n); }
static onair_res onair_dev_get(const onair_cu *t, int *d, int i) { return t->DeviceGet(d, i); }
static onair_res onair_dev_name(const onair_cu *t, char *s, int n, int d) { return t->DeviceGetName(s, n, d); }
static onair_res onair_dev_mem(const onair_cu *t, size_t *b, int d) { return t->DeviceTotalMem(b, d); }
static onair_res onair_dev_attr(const onair_cu *t, int *v, int a, int d) { return t->DeviceGetAttribute(v, a, d); }

// Contexts.
static onair_res onair_primary_retain(const onair_cu *t, onair_h *ctx, int dev) { return t->PrimaryCtxRetain(ctx, dev); }
static onair_res onair_primary_release(const onair_cu *t, int dev) { return t->PrimaryCtxRelease(dev); }
static onair_res onair_primary_set_flags(const onair_cu *t, int dev, unsigned f) { return t->PrimaryCtxSetFlags(dev, f); }
static onair_res onair_primary_state(const onair_cu *t, int dev, unsigned *f, int *active) {
	return t->PrimaryCtxGetState(dev, f, active);
}
static onair_res onair_ctx_sync(const onair_cu *t, onair_h ctx) {
	ONAIR_CUR(t, ctx);
	return t->CtxSynchronize();
}
// onair_ctx_push_pop makes ctx current by push, then pops it: a check that
// the push/pop pair works (the backend's decoder callbacks use it).
static onair_res onair_ctx_push_pop(const onair_cu *t, onair_h ctx) {
	onair_res r = t->CtxPushCurrent(ctx);
	if (r != 0) return r;
	onair_h old = NULL;
	return t->CtxPopCurrent(&old);
}
static onair_res onair_mem_info(const onair_cu *t, onair_h ctx, size_t *free_b, size_t *total) {
	ONAIR_CUR(t, ctx);
	return t->MemGetInfo(free_b, total);
}

// Memory.
static onair_res onair_mem_alloc(const onair_cu *t, onair_h ctx, onair_dptr *p, size_t n) {
	ONAIR_CUR(t, ctx);
	return t->MemAlloc(p, n);
}
static onair_res onair_mem_alloc_pitch(const onair_cu *t, onair_h ctx, onair_dptr *p, size_t *pitch, size_t w,
                                       size_t h, unsigned elem) {
	ONAIR_CUR(t, ctx);
	return t->MemAllocPitch(p, pitch, w, h, elem);
}
static onair_res onair_mem_free(const onair_cu *t, onair_h ctx, onair_dptr p) {
	ONAIR_CUR(t, ctx);
	return t->MemFree(p);
}
static onair_res onair_host_alloc(const onair_cu *t, onair_h ctx, void **p, size_t n, unsigned flags) {
	ONAIR_CUR(t, ctx);
	return t->MemHostAlloc(p, n, flags);
}
static onair_res onair_host_free(const onair_cu *t, onair_h ctx, void *p) {
	ONAIR_CUR(t, ctx);
	return t->MemFreeHost(p);
}
static onair_res onair_htod(const onair_cu *t, onair_h ctx, onair_dptr dst, const void *src, size_t n, onair_h s) {
	ONAIR_CUR(t, ctx);
	return t->MemcpyHtoDAsync(dst, src, n, s);
}
static onair_res onair_dtoh(const onair_cu *t, onair_h ctx, void *dst, onair_dptr src, size_t n, onair_h s) {
	ONAIR_CUR(t, ctx);
	return t->MemcpyDtoHAsync(dst, src, n, s);
}
// onair_copy2d_async copies a width_bytes × height region between two
// pitched places; each side is host memory when its host pointer is
// non-NULL, else device memory at its device pointer.
static onair_res onair_copy2d_async(const onair_cu *t, onair_h ctx, void *dst_host, onair_dptr dst_dev,
                                    size_t dst_pitch, const void *src_host, onair_dptr src_dev, size_t src_pitch,
                                    size_t width_bytes, size_t height, onair_h s) {
	ONAIR_CUR(t, ctx);
	onair_copy2d c;
	memset(&c, 0, sizeof c);
	if (src_host != NULL) {
		c.src_type = onair_mem_host;
		c.src_host = src_host;
	} else {
		c.src_type = onair_mem_device;
		c.src_dev = src_dev;
	}
	c.src_pitch = src_pitch;
	if (dst_host != NULL) {
		c.dst_type = onair_mem_host;
		c.dst_host = dst_host;
	} else {
		c.dst_type = onair_mem_device;
		c.dst_dev = dst_dev;
	}
	c.dst_pitch = dst_pitch;
	c.width_bytes = width_bytes;
	c.height = height;
	return t->Memcpy2DAsync(&c, s);
}
static onair_res onair_memset8(const onair_cu *t, onair_h ctx, onair_dptr p, unsigned char v, size_t n, onair_h s) {
	ONAIR_CUR(t, ctx);
	return t->MemsetD8Async(p, v, n, s);
}
static onair_res onair_memset2d8(const onair_cu *t, onair_h ctx, onair_dptr p, size_t pitch, unsigned char v,
                                 size_t w, size_t h, onair_h s) {
	ONAIR_CUR(t, ctx);
	return t->MemsetD2D8Async(p, pitch, v, w, h, s);
}
static onair_res onair_memset2d16(const onair_cu *t, onair_h ctx, onair_dptr p, size_t pitch, unsigned short v,
                                  size_t w, size_t h, onair_h s) {
	ONAIR_CUR(t, ctx);
	return t->MemsetD2D16Async(p, pitch, v, w, h, s);
}

// Page-locking memory onair did not allocate (a producer's mapped memfd):
// read_only for a mapping without write access.
static onair_res onair_host_register(const onair_cu *t, onair_h ctx, void *p, size_t n, int read_only) {
	ONAIR_CUR(t, ctx);
	return t->MemHostRegister(p, n, read_only ? onair_host_register_ro : 0);
}
static onair_res onair_host_unregister(const onair_cu *t, onair_h ctx, void *p) {
	ONAIR_CUR(t, ctx);
	return t->MemHostUnregister(p);
}

// Shareable device memory. A failure returns the CUresult plus ONAIR_STEP
// times the step that failed, so the Go side names the call.
static void onair_vmm_prop(onair_mem_prop *p, int dev) {
	memset(p, 0, sizeof *p);
	p->type = onair_alloc_pinned;
	p->requested_handles = onair_handle_posix_fd;
	p->location.type = onair_location_device;
	p->location.id = dev;
}
static onair_res onair_vmm_granularity(const onair_cu *t, onair_h ctx, int dev, size_t *g) {
	ONAIR_CUR(t, ctx);
	onair_mem_prop p;
	onair_vmm_prop(&p, dev);
	return t->MemGetAllocationGranularity(g, &p, onair_granularity_min);
}
// onair_vmm_map reserves size bytes of address space, maps h there and
// gives the device read and write access (steps 1 reserve, 2 map, 3
// access); on failure it undoes what it did.
#define ONAIR_STEP 1000000
static onair_res onair_vmm_map(const onair_cu *t, int dev, onair_vmm h, size_t size, onair_dptr *p) {
	onair_res r = t->MemAddressReserve(p, size, 0, 0, 0);
	if (r != 0) return r + 1 * ONAIR_STEP;
	r = t->MemMap(*p, size, 0, h, 0);
	if (r != 0) {
		t->MemAddressFree(*p, size);
		return r + 2 * ONAIR_STEP;
	}
	onair_mem_access a;
	memset(&a, 0, sizeof a);
	a.location.type = onair_location_device;
	a.location.id = dev;
	a.flags = onair_access_rw;
	r = t->MemSetAccess(*p, size, &a, 1);
	if (r != 0) {
		t->MemUnmap(*p, size);
		t->MemAddressFree(*p, size);
		return r + 3 * ONAIR_STEP;
	}
	return 0;
}
// onair_vmm_create makes size bytes (a multiple of the granularity) of
// device memory exportable as a POSIX fd, mapped (step 4 the create).
static onair_res onair_vmm_create(const onair_cu *t, onair_h ctx, int dev, size_t size, onair_vmm *h, onair_dptr *p) {
	ONAIR_CUR(t, ctx);
	onair_mem_prop prop;
	onair_vmm_prop(&prop, dev);
	onair_res r = t->MemCreate(h, size, &prop, 0);
	if (r != 0) return r + 4 * ONAIR_STEP;
	r = onair_vmm_map(t, dev, *h, size, p);
	if (r != 0) t->MemRelease(*h);
	return r;
}
static onair_res onair_vmm_export(const onair_cu *t, onair_h ctx, onair_vmm h, int *fd) {
	ONAIR_CUR(t, ctx);
	return t->MemExportToShareableHandle(fd, h, onair_handle_posix_fd, 0);
}
// onair_vmm_import imports the allocation behind fd (the caller keeps fd)
// and maps it (step 5 the import).
static onair_res onair_vmm_import(const onair_cu *t, onair_h ctx, int dev, int fd, size_t size, onair_vmm *h,
                                  onair_dptr *p) {
	ONAIR_CUR(t, ctx);
	onair_res r = t->MemImportFromShareableHandle(h, (void *)(uintptr_t)fd, onair_handle_posix_fd);
	if (r != 0) return r + 5 * ONAIR_STEP;
	r = onair_vmm_map(t, dev, *h, size, p);
	if (r != 0) t->MemRelease(*h);
	return r;
}
// onair_vmm_free unmaps, releases the handle and frees the address range
// (steps 1 unmap, 2 release, 3 address free; every step is tried).
static onair_res onair_vmm_free(const onair_cu *t, onair_h ctx, onair_vmm h, onair_dptr p, size_t size) {
	ONAIR_CUR(t, ctx);
	onair_res first = 0;
	onair_res r = t->MemUnmap(p, size);
	if (r != 0) first = r + 1 * ONAIR_STEP;
	r = t->MemRelease(h);
	if (r != 0 && first == 0) first = r + 2 * ONAIR_STEP;
	r = t->MemAddressFree(p, size);
	if (r != 0 && first == 0) first = r + 3 * ONAIR_STEP;
	return first;
}

// Streams and events.
static onair_res onair_stream_create(const onair_cu *t, onair_h ctx, onair_h *s, unsigned flags) {
	ONAIR_CUR(t, ctx);
	return t->StreamCreate(s, flags);
}
static onair_res onair_stream_destroy(const onair_cu *t, onair_h ctx, onair_h s) {
	ONAIR_CUR(t, ctx);
	return t->StreamDestroy(s);
}
static onair_res onair_stream_sync(const onair_cu *t, onair_h ctx, onair_h s) {
	ONAIR_CUR(t, ctx);
	return t->StreamSynchronize(s);
}
static onair_res onair_stream_query(const onair_cu *t, onair_h ctx, onair_h s) {
	ONAIR_CUR(t, ctx);
	return t->StreamQuery(s);
}
static onair_res onair_stream_wait(const onair_cu *t, onair_h ctx, onair_h s, onair_h e) {
	ONAIR_CUR(t, ctx);
	return t->StreamWaitEvent(s, e, 0);
}
static onair_res onair_event_create(const onair_cu *t, onair_h ctx, onair_h *e, unsigned flags) {
	ONAIR_CUR(t, ctx);
	return t->EventCreate(e, flags);
}
static onair_res onair_event_record(const onair_cu *t, onair_h ctx, onair_h e, onair_h s) {
	ONAIR_CUR(t, ctx);
	return t->EventRecord(e, s);
}
static onair_res onair_event_sync(const onair_cu *t, onair_h ctx, onair_h e) {
	ONAIR_CUR(t, ctx);
	return t->EventSynchronize(e);
}
static onair_res onair_event_query(const onair_cu *t, onair_h ctx, onair_h e) {
	ONAIR_CUR(t, ctx);
	return t->EventQuery(e);
}
static onair_res onair_event_elapsed(const onair_cu *t, onair_h ctx, float *ms, onair_h start, onair_h end) {
	ONAIR_CUR(t, ctx);
	return t->EventElapsedTime(ms, start, end);
}
static onair_res onair_event_destroy(const onair_cu *t, onair_h ctx, onair_h e) {
	ONAIR_CUR(t, ctx);
	return t->EventDestroy(e);
}

// Modules and launches.

// JIT options of cuModuleLoadDataEx (CUjit_option values).
enum { onair_jit_info_log = 3, onair_jit_info_log_size = 4, onair_jit_error_log = 5, onair_jit_error_log_size = 6 };

// onair_module_load loads a NUL-terminated PTX image; the JIT's error log
// lands in errlog (errlog_size bytes).
static onair_res onair_module_load(const onair_cu *t, onair_h ctx, onair_h *m, const void *image, char *errlog,
                                   size_t errlog_size) {
	ONAIR_CUR(t, ctx);
	int opts[2] = {onair_jit_error_log, onair_jit_error_log_size};
	void *vals[2] = {errlog, (void *)(uintptr_t)errlog_size};
	return t->ModuleLoadDataEx(m, image, 2, opts, vals);
}
static onair_res onair_module_unload(const onair_cu *t, onair_h ctx, onair_h m) {
	ONAIR_CUR(t, ctx);
	return t->ModuleUnload(m);
}
static onair_res onair_module_function(const onair_cu *t, onair_h ctx, onair_h *f, onair_h m, const char *name) {
	ONAIR_CUR(t, ctx);
	return t->ModuleGetFunction(f, m, name);
}

// onair_launch waits on n events (stream-wait-event: the GPU waits, not the
// CPU), launches f with one by-value argument (the bytes at arg) and
// records done (if not NULL) after it: a whole draw in one cgo call. A
// failure returns the CUresult plus ONAIR_STEP times the step that failed
// (1 the wait, 2 the launch, 3 the record); no out-parameter, since a Go
// pointer handed to C escapes to the heap, an allocation per draw.
static onair_res onair_launch(const onair_cu *t, onair_h ctx, onair_h s, onair_h *waits, int n, onair_h f,
                              unsigned gx, unsigned gy, unsigned bx, unsigned by, void *arg, onair_h done) {
	ONAIR_CUR(t, ctx);
	for (int i = 0; i < n; i++) {
		onair_res r = t->StreamWaitEvent(s, waits[i], 0);
		if (r != 0) return r + 1 * ONAIR_STEP;
	}
	void *params[1] = {arg};
	onair_res r = t->LaunchKernel(f, gx, gy, 1, bx, by, 1, 0, s, params, NULL);
	if (r != 0) return r + 2 * ONAIR_STEP;
	if (done != NULL) {
		r = t->EventRecord(done, s);
		if (r != 0) return r + 3 * ONAIR_STEP;
	}
	return 0;
}

// onair_thread_cpu_ns is the CPU time the calling thread has used, for the
// benchmarks that measure what waiting on the GPU costs the CPU.
static long long onair_thread_cpu_ns(void) {
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *onair_ptr(unsigned long long p) { return (void *)(uintptr_t)p; }

#endif
