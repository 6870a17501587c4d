package cuda

// NVDEC: HEVC and H.264 decoded on the GPU's video engines through
// libnvcuvid.so.1, on a few threads. Three files: this one is the library
// (the cuvid entry points, loaded on a Context, and what the engines
// decode), nvdec_decoder.go one stream (NVIDIA's parser or onair's, and the
// decoder the sequence creates), nvdec_loop.go the thread that serves
// several decoders.
//
// An NVDECDecoder is one stream: NVIDIA's parser and the decoder its
// sequence callback creates (checked against the engine's capabilities and
// the size and format the source declared), fed one access unit at a time
// by its Source. An NVDECLoop is one OS thread serving several decoders
// round robin: each round feeds every decoder that can take a picture one
// access unit (the parser hands each picture to an engine at once, so the
// engines work on several streams while the thread goes on), then maps the
// pictures that came out, copies their display areas into Frames of their
// decoders' FramePools on the loop's Stream (one kernel launch for all of
// them: NVDECCopyEnv), marks the frames written, waits for the stream
// once, unmaps them all and hands the frames on. Seven engines are kept
// busy by one or two threads; more threads than that only add contention.
//
// NVDEC loads only the cuvid entry points (nvdec.h's table); every CUDA
// driver call it makes goes through the one loader (driver.h) on the
// Context it was opened on, whose primary context it decodes in.

/*
#cgo CFLAGS: -I${SRCDIR}
#cgo LDFLAGS: -ldl
#include "nvdec.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// NVDECCodec is a coding NVDEC decodes for onair.
type NVDECCodec int

const (
	NVDECH264 NVDECCodec = C.NVD_CODEC_H264
	NVDECHEVC NVDECCodec = C.NVD_CODEC_HEVC
)

func (c NVDECCodec) String() string {
	switch c {
	case NVDECH264:
		return "H.264"
	case NVDECHEVC:
		return "HEVC"
	}
	return fmt.Sprintf("cudaVideoCodec(%d)", int(c))
}

// NVDEC is NVIDIA's decoder library on one Context: the cuvid entry points,
// with every CUDA driver call made through the Context's loader.
type NVDEC struct {
	ctx    *Context
	lib    *C.nvd_lib
	closed atomic.Bool
}

// err names a failed call: a CUresult as the loader names it (cuvid calls
// return CUresults too), or a failure of onair's own (a negative result).
func (n *NVDEC) err(call string, r C.nvd_result) error {
	if r == 0 {
		return nil
	}
	if r < 0 {
		return fmt.Errorf("%s failed", call)
	}
	return n.ctx.d.err(call, C.onair_res(r))
}

// nvdecLibrary is the library OpenNVDEC loads (the tests load a stand-in
// that checks the loop's logic on machines without a GPU).
var nvdecLibrary = "libnvcuvid.so.1"

// OpenNVDEC loads libnvcuvid.so.1's cuvid entry points to decode in c (the
// device's primary context: its Sched is how a loop waits for its copies).
// The error says "NVDEC" and why: no NVDEC library, or one too old. c
// stays the caller's; close it after the NVDEC.
func OpenNVDEC(c *Context) (*NVDEC, error) {
	var errbuf [512]C.char
	name := C.CString(nvdecLibrary)
	defer C.free(unsafe.Pointer(name))
	lib := C.nvd_load(name, c.d.t, unsafe.Pointer(c.h), &errbuf[0], C.size_t(len(errbuf)))
	if lib == nil {
		return nil, fmt.Errorf("NVDEC is not usable here: %s (an NVIDIA driver with its video decode library is needed)", C.GoString(&errbuf[0]))
	}
	return &NVDEC{ctx: c, lib: lib}, nil
}

// Close unloads the library. Every decoder and loop must be closed first.
func (n *NVDEC) Close() {
	if n.closed.CompareAndSwap(false, true) {
		C.nvd_close(n.lib)
	}
}

// NVDECCaps is what the engines decode of one codec and bit depth (4:2:0).
type NVDECCaps struct {
	Supported           bool
	Engines             int
	NV12, P016          bool // output surface formats
	MaxWidth, MaxHeight int
	MinWidth, MinHeight int
	MaxMacroblocks      int
}

// Caps asks the driver what its engines decode of codec at bitDepth.
func (n *NVDEC) Caps(codec NVDECCodec, bitDepth int) (NVDECCaps, error) {
	var c C.nvd_caps
	if r := C.nvd_caps_query(n.lib, C.int(codec), C.int(bitDepth-8), &c); r != 0 {
		return NVDECCaps{}, n.err("cuvidGetDecoderCaps", r)
	}
	return NVDECCaps{
		Supported: c.supported != 0, Engines: int(c.engines),
		NV12: c.output_formats&(1<<C.NVD_SURFACE_NV12) != 0, P016: c.output_formats&(1<<C.NVD_SURFACE_P016) != 0,
		MaxWidth: int(c.max_width), MaxHeight: int(c.max_height), MinWidth: int(c.min_width), MinHeight: int(c.min_height),
		MaxMacroblocks: int(c.max_mb_count),
	}, nil
}
