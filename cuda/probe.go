// Package cuda reaches NVIDIA's driver libraries through dlopen, so that
// onair builds, tests and runs on machines without CUDA installed.
//
// What is here today is the probe `onair run -backend auto` uses to decide
// whether a GPU is usable (it loads libcuda.so.1, initialises the driver and
// reads each device's name, memory and compute capability), and
// MeasureUpload, the host-to-device copy measurement behind the capacity
// profiles' PCIe figures. The GPU nodes (NVDEC, uploads, compositor
// kernels) build on the same loader.
//
// cuda must never import runtime/, lang/ or compiler/.
package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

typedef int (*cuInit_t)(unsigned int);
typedef int (*cuDriverGetVersion_t)(int*);
typedef int (*cuDeviceGetCount_t)(int*);
typedef int (*cuDeviceGet_t)(int*, int);
typedef int (*cuDeviceGetName_t)(char*, int, int);
typedef int (*cuDeviceTotalMem_t)(size_t*, int);
typedef int (*cuDeviceGetAttribute_t)(int*, int, int);

static void* onair_dlopen(const char* name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
static const char* onair_dlerror(void) { return dlerror(); }
static void* onair_dlsym(void* h, const char* name) { return dlsym(h, name); }

static int call_init(void* f, unsigned int flags) { return ((cuInit_t)f)(flags); }
static int call_version(void* f, int* v) { return ((cuDriverGetVersion_t)f)(v); }
static int call_count(void* f, int* n) { return ((cuDeviceGetCount_t)f)(n); }
static int call_get(void* f, int* d, int i) { return ((cuDeviceGet_t)f)(d, i); }
static int call_name(void* f, char* s, int n, int d) { return ((cuDeviceGetName_t)f)(s, n, d); }
static int call_mem(void* f, size_t* b, int d) { return ((cuDeviceTotalMem_t)f)(b, d); }
static int call_attr(void* f, int* v, int a, int d) { return ((cuDeviceGetAttribute_t)f)(v, a, d); }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Device describes one GPU the driver reports.
type Device struct {
	Index        int
	Name         string
	MemoryBytes  uint64
	ComputeMajor int
	ComputeMinor int
}

// Driver is what the probe found.
type Driver struct {
	Library string // the library that was loaded
	Version int    // CUDA driver API version, e.g. 13000 for 13.0
	Devices []Device
}

// VersionString renders the driver API version as "13.0".
func (d *Driver) VersionString() string {
	return fmt.Sprintf("%d.%d", d.Version/1000, d.Version%1000/10)
}

const (
	attrComputeMajor = 75 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	attrComputeMinor = 76 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
)

var (
	probeOnce sync.Once
	probed    *Driver
	probeErr  error
)

// Probe loads the CUDA driver and lists its devices. It runs once per
// process; later calls return the first answer. The error says why no GPU
// is usable (no library, no device, the driver refused to start).
func Probe() (*Driver, error) {
	probeOnce.Do(func() { probed, probeErr = probe("libcuda.so.1") })
	return probed, probeErr
}

func probe(lib string) (*Driver, error) {
	cname := C.CString(lib)
	defer C.free(unsafe.Pointer(cname))
	h := C.onair_dlopen(cname)
	if h == nil {
		return nil, fmt.Errorf("cannot load %s (%s): no NVIDIA driver on this machine", lib, C.GoString(C.onair_dlerror()))
	}
	// The handle stays open: the driver library is not unloaded once loaded.
	sym := func(name string) (unsafe.Pointer, error) {
		cs := C.CString(name)
		defer C.free(unsafe.Pointer(cs))
		p := C.onair_dlsym(h, cs)
		if p == nil {
			return nil, fmt.Errorf("%s has no %s: the driver is too old for onair", lib, name)
		}
		return p, nil
	}
	names := []string{"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName", "cuDeviceTotalMem_v2", "cuDeviceGetAttribute"}
	fn := make(map[string]unsafe.Pointer, len(names))
	for _, n := range names {
		p, err := sym(n)
		if err != nil {
			return nil, err
		}
		fn[n] = p
	}
	if rc := C.call_init(fn["cuInit"], 0); rc != 0 {
		return nil, fmt.Errorf("cuInit failed with CUDA error %d: the driver is loaded but no GPU is usable (is the device visible in this container?)", int(rc))
	}
	d := &Driver{Library: lib}
	var v C.int
	if rc := C.call_version(fn["cuDriverGetVersion"], &v); rc != 0 {
		return nil, fmt.Errorf("cuDriverGetVersion failed with CUDA error %d", int(rc))
	}
	d.Version = int(v)
	var n C.int
	if rc := C.call_count(fn["cuDeviceGetCount"], &n); rc != 0 {
		return nil, fmt.Errorf("cuDeviceGetCount failed with CUDA error %d", int(rc))
	}
	if n == 0 {
		return nil, fmt.Errorf("the CUDA driver %s reports no devices", d.VersionString())
	}
	for i := 0; i < int(n); i++ {
		var dev C.int
		if rc := C.call_get(fn["cuDeviceGet"], &dev, C.int(i)); rc != 0 {
			return nil, fmt.Errorf("cuDeviceGet(%d) failed with CUDA error %d", i, int(rc))
		}
		var buf [256]C.char
		C.call_name(fn["cuDeviceGetName"], &buf[0], C.int(len(buf)), dev)
		var mem C.size_t
		C.call_mem(fn["cuDeviceTotalMem_v2"], &mem, dev)
		var major, minor C.int
		C.call_attr(fn["cuDeviceGetAttribute"], &major, attrComputeMajor, dev)
		C.call_attr(fn["cuDeviceGetAttribute"], &minor, attrComputeMinor, dev)
		d.Devices = append(d.Devices, Device{
			Index: i, Name: C.GoString(&buf[0]), MemoryBytes: uint64(mem),
			ComputeMajor: int(major), ComputeMinor: int(minor),
		})
	}
	return d, nil
}
