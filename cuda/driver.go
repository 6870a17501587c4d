package cuda

/*
#cgo CFLAGS: -I${SRCDIR}
#cgo LDFLAGS: -ldl
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"
)

// DriverLibrary is the library the loader opens: the NVIDIA driver's CUDA
// entry points, installed with the driver (no CUDA toolkit needed).
const DriverLibrary = "libcuda.so.1"

// MinDriverVersion is the oldest CUDA driver API version onair runs on
// (11.0: the _v2 primary-context calls appeared there). A driver may still
// be too old for the compositor's PTX; loading it says so (see Compositor).
const MinDriverVersion = 11000

// driver is one loaded libcuda: the table of entry points dlsym found, and
// what cuDriverGetVersion said. It is read-only once loaded and safe for
// concurrent use.
type driver struct {
	t       *C.onair_cu
	lib     string
	version int
}

var (
	driverOnce sync.Once
	theDriver  *driver
	driverErr  error
)

// load returns the process's driver, loading and initialising it on first
// use: dlopen of libcuda.so.1, dlsym of every entry point onair calls, cuInit
// and the version check. Later calls return the first answer.
func load() (*driver, error) {
	driverOnce.Do(func() { theDriver, driverErr = loadDriver(DriverLibrary) })
	return theDriver, driverErr
}

// loadDriver opens lib and checks it is a CUDA driver onair can use. The
// errors say what is missing and what to do.
func loadDriver(lib string) (*driver, error) {
	cname := C.CString(lib)
	defer C.free(unsafe.Pointer(cname))
	var missing C.int
	var dlerr *C.char
	t := C.onair_load(cname, &missing, &dlerr)
	if t == nil {
		if missing < 0 {
			return nil, fmt.Errorf("no NVIDIA driver: cannot load %s (%s): install the NVIDIA driver, or run with -backend cpu", lib, C.GoString(dlerr))
		}
		return nil, fmt.Errorf("%s has no %s: the NVIDIA driver is too old for onair (it needs CUDA %s or newer): update the driver",
			lib, C.GoString(C.onair_sym_name(missing)), versionString(MinDriverVersion))
	}
	d := &driver{t: t, lib: lib}
	if rc := C.onair_init(t); rc != 0 {
		return nil, fmt.Errorf("%w: the driver is loaded but no GPU is usable (is the device visible in this container?)", d.err("cuInit", rc))
	}
	var v C.int
	if rc := C.onair_version(t, &v); rc != 0 {
		return nil, d.err("cuDriverGetVersion", rc)
	}
	d.version = int(v)
	if err := checkVersion(lib, d.version); err != nil {
		return nil, err
	}
	return d, nil
}

// checkVersion refuses a driver older than MinDriverVersion.
func checkVersion(lib string, v int) error {
	if v < MinDriverVersion {
		return fmt.Errorf("%s is CUDA %s, older than onair needs (CUDA %s): update the NVIDIA driver", lib, versionString(v), versionString(MinDriverVersion))
	}
	return nil
}

func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// Error is a CUDA driver call that failed: which call, and the driver's
// name and description of the error. Error() reads
// "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)", followed by what
// to do where onair knows.
type Error struct {
	Call string // the driver API function, without its _v2 suffix
	Code int    // the CUresult
	Name string // e.g. CUDA_ERROR_OUT_OF_MEMORY
	Text string // the driver's description, e.g. "out of memory"
}

// CUresult values onair treats specially.
const (
	errOutOfMemory    = 2
	errNoDevice       = 100
	errInvalidPTX     = 218
	errUnsupportedPTX = 222
	errNotReady       = 600
	errIllegalAddress = 700
)

var hints = map[int]string{
	errOutOfMemory:    "the GPU's memory is full: lower the frame pools' caps, or run fewer shows on this GPU",
	errNoDevice:       "no GPU is visible to this process (check CUDA_VISIBLE_DEVICES and the container's device access)",
	errUnsupportedPTX: "the NVIDIA driver is older than the compositor's PTX needs: update the driver",
	errInvalidPTX:     "the driver could not compile the embedded PTX for this GPU: report it with the driver version",
	errIllegalAddress: "a kernel touched memory outside its frames (an onair bug); the context is unusable: restart the show and report it",
}

func (e *Error) Error() string {
	s := e.Call + ": " + e.Name + " (" + e.Text + ")"
	if h := hints[e.Code]; h != "" {
		s += ": " + h
	}
	return s
}

// IsOutOfMemory reports whether err is a CUDA out-of-memory error.
func IsOutOfMemory(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == errOutOfMemory
}

// err turns a CUresult into an *Error naming call, or nil for success. A
// negative result is the trampoline's failure to make the context current
// before call.
func (d *driver) err(call string, rc C.onair_res) error {
	if rc == 0 {
		return nil
	}
	if rc < 0 {
		call, rc = "cuCtxSetCurrent (before "+call+")", -rc
	}
	e := &Error{Call: call, Code: int(rc), Name: fmt.Sprintf("CUDA error %d", int(rc)), Text: "no description"}
	if s := C.onair_err_name(d.t, rc); s != nil {
		e.Name = C.GoString(s)
	}
	if s := C.onair_err_string(d.t, rc); s != nil {
		e.Text = C.GoString(s)
	}
	return e
}
