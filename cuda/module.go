package cuda

/*
#cgo CFLAGS: -I${SRCDIR}
#include "driver.h"
*/
import "C"

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"
	"unsafe"
)

// compositorPTX is kernels/compositor.cu compiled by `make ptx` (nvcc, for
// compute_75, declared PTX ISA 7.0 so that drivers from CUDA 11.0 on load
// it); kernels/compositor.sha256 records the sources it came from, and a
// test fails when they changed without the PTX being rebuilt. The driver
// JIT-compiles it on first use (about 0.8 s on the H200; the driver caches
// the result on disk), so load it at start: NewCompositor does.
//
//go:embed kernels/compositor.ptx
var compositorPTX string

// cubins are that PTX assembled by ptxas for the GPUs the profiles name
// (`make ptx` makes them; kernels/compositor.sha256 records the PTX they
// came from): on those a start loads machine code instead of waiting for
// the driver's JIT, which a fresh machine or container pays on every first
// start (ptxas takes 2.1–2.3 s for this PTX; cuda/BENCHMARKS.md).
//
//go:embed kernels/compositor.sm_*.cubin
var cubins embed.FS

// kernelImage is what to load on a GPU of compute capability major.minor:
// the cubin assembled for it, else nil (load the PTX). ONAIR_CUDA_PTX's PTX
// has no cubins: with it set, nil.
func kernelImage(major, minor int) (cubin []byte, name string) {
	if os.Getenv(PTXEnv) != "" {
		return nil, ""
	}
	name = fmt.Sprintf("sm_%d%d cubin", major, minor)
	b, err := cubins.ReadFile(fmt.Sprintf("kernels/compositor.sm_%d%d.cubin", major, minor))
	if err != nil {
		return nil, ""
	}
	return b, name
}

// ptxImage is the PTX the contexts load: the embedded build, or the file
// ONAIR_CUDA_PTX names.
var ptxImage = compositorPTX

// PTXEnv names a freshly built compositor.ptx to load instead of the
// embedded one: how one run on the GPU machine compiles the kernels with
// `make ptx` and tests them (the tests, `onair run`, `onair bench`) before
// the PTX is committed and embedded. Not for shows on air.
const PTXEnv = "ONAIR_CUDA_PTX"

func init() {
	if p := os.Getenv(PTXEnv); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			panic(PTXEnv + ": " + err.Error())
		}
		ptxImage = string(b)
	}
}

// module is the compositor's kernels, JIT-compiled by the driver for the
// context's GPU on first use.
type module struct {
	ctx                      *Context
	h                        C.onair_h
	draw4, draw16, draw48    C.onair_h // tables without keyed layers
	drawk4, drawk16, drawk48 C.onair_h // with
	transition, busy         C.onair_h
	picture                  C.onair_h
	// The decode loops' plane copies (NVDECLoop): nil when the PTX
	// predates them (an older ONAIR_CUDA_PTX), and the loops then copy
	// picture by picture.
	copy8, copy128        C.onair_h
	ptxVersion, ptxTarget string
	// image says what was loaded: "sm_90 cubin", or "PTX ISA 7.0 for
	// sm_75 (JIT)".
	image string
}

var ptxHeader = regexp.MustCompile(`(?m)^\.version\s+(\S+)\s*$|^\.target\s+(\S+)`)

// ptxInfo reads the PTX ISA version and target the image declares.
func ptxInfo(ptx string) (version, target string) {
	for _, m := range ptxHeader.FindAllStringSubmatch(ptx, 2) {
		if m[1] != "" {
			version = m[1]
		}
		if m[2] != "" {
			target = m[2]
		}
	}
	return version, target
}

// KernelImage loads the compositor's kernels if they are not yet and says
// what the driver was given: "sm_90 cubin" on a GPU onair ships machine
// code for, else "PTX ISA 7.0 for sm_75 (JIT)".
func (c *Context) KernelImage() (string, error) {
	m, err := c.kernels()
	if err != nil {
		return "", err
	}
	return m.image, nil
}

// kernels returns the context's compositor module, loading it once.
func (c *Context) kernels() (*module, error) {
	c.modOnce.Do(func() { c.mod, c.modErr = loadModule(c, ptxImage) })
	return c.mod, c.modErr
}

func loadModule(c *Context, ptx string) (*module, error) {
	m := &module{ctx: c}
	m.ptxVersion, m.ptxTarget = ptxInfo(ptx)
	if m.ptxVersion == "" {
		return nil, errors.New("cuda: the embedded compositor PTX has no .version line: rebuild it with `make ptx`")
	}
	var log [4096]C.char
	var h C.onair_h
	rc := C.onair_res(1)
	var major, minor C.int
	if C.onair_dev_attr(c.d.t, &major, attrComputeMajor, C.int(c.device)) == 0 && C.onair_dev_attr(c.d.t, &minor, attrComputeMinor, C.int(c.device)) == 0 {
		if cubin, name := kernelImage(int(major), int(minor)); cubin != nil {
			// A driver older than the ptxas that assembled it refuses
			// the cubin: the PTX follows.
			image := C.CBytes(cubin)
			rc = C.onair_module_load(c.d.t, c.h, &h, image, &log[0], C.size_t(len(log)))
			C.free(image)
			m.image = name
		}
	}
	if rc != 0 {
		image := C.CString(ptx)
		defer C.free(unsafe.Pointer(image))
		log[0] = 0
		rc = C.onair_module_load(c.d.t, c.h, &h, unsafe.Pointer(image), &log[0], C.size_t(len(log)))
		m.image = fmt.Sprintf("PTX ISA %s for %s (JIT)", m.ptxVersion, m.ptxTarget)
	}
	m.h = h
	if rc != 0 {
		return nil, fmt.Errorf("loading the compositor kernels (PTX ISA %s, %s) on a CUDA %s driver: %w%s",
			m.ptxVersion, m.ptxTarget, versionString(c.d.version), c.d.err("cuModuleLoadDataEx", rc), jitLog(&log))
	}
	for _, k := range []struct {
		name string
		fn   *C.onair_h
	}{{"onair_draw4", &m.draw4}, {"onair_draw16", &m.draw16}, {"onair_draw48", &m.draw48},
		{"onair_drawk4", &m.drawk4}, {"onair_drawk16", &m.drawk16}, {"onair_drawk48", &m.drawk48},
		{"onair_transition", &m.transition}, {"onair_busy", &m.busy}, {"onair_picture", &m.picture}} {
		cs := C.CString(k.name)
		var fn C.onair_h
		rc := C.onair_module_function(c.d.t, c.h, &fn, m.h, cs)
		*k.fn = fn
		C.free(unsafe.Pointer(cs))
		if rc != 0 {
			m.unload()
			return nil, fmt.Errorf("the compositor PTX lacks kernel %s (rebuild it with `make ptx`): %w", k.name, c.d.err("cuModuleGetFunction", rc))
		}
	}
	for _, k := range []struct {
		name string
		fn   *C.onair_h
	}{{"onair_copy8", &m.copy8}, {"onair_copy128", &m.copy128}} {
		cs := C.CString(k.name)
		var fn C.onair_h
		if C.onair_module_function(c.d.t, c.h, &fn, m.h, cs) == 0 {
			*k.fn = fn
		}
		C.free(unsafe.Pointer(cs))
	}
	if m.copy8 == nil || m.copy128 == nil {
		m.copy8, m.copy128 = nil, nil
	}
	return m, nil
}

func jitLog(log *[4096]C.char) string {
	if s := C.GoString(&log[0]); s != "" {
		return "; the JIT said: " + s
	}
	return ""
}

func (m *module) unload() error {
	return m.ctx.d.err("cuModuleUnload", C.onair_module_unload(m.ctx.d.t, m.ctx.h, m.h))
}

// Busy queues a kernel that keeps the GPU busy for d on s: something to
// wait on, for benchmarks and tests of waiting.
func (s *Stream) Busy(d time.Duration) error {
	m, err := s.ctx.kernels()
	if err != nil {
		return err
	}
	ns := C.ulonglong(d)
	return launchErr(s.ctx.d, C.onair_launch(s.ctx.d.t, s.ctx.h, s.h, nil, 0, m.busy, 1, 1, 1, 1, unsafe.Pointer(&ns), nil))
}
