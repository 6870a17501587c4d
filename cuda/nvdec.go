package cuda

// NVDEC: HEVC and H.264 decoded on the GPU's video engines through
// libnvcuvid.so.1, on a few threads.
//
// An NVDECDecoder is one stream: NVIDIA's parser and the decoder its
// sequence callback creates (checked against the engine's capabilities and
// the size and format the source declared), fed one access unit at a time
// by its Source. An NVDECLoop is one OS thread serving several decoders
// round robin: each round feeds every decoder that can take a picture one
// access unit (the parser hands each picture to an engine at once, so the
// engines work on several streams while the thread goes on), then maps the
// pictures that came out, copies their display areas into device frames of
// their decoders' pools on the loop's stream (one kernel launch for all of
// them: NVDECCopyEnv), waits for the stream once, unmaps them all and hands
// the frames on. Seven engines are kept
// busy by one or two threads; more threads than that only add contention.
//
// This file and nvdec.h stand alone: they load libcuda.so.1 and
// libnvcuvid.so.1 themselves, use the device's primary context, and keep
// their own pitched device frames (NVDECFrame), because the rest of cuda/
// is being rewritten as one loader with Context, Stream, Event, Frame and
// FramePool. Folding this onto it: nvd_lib's CUDA calls become the shared
// loader's (the table keeps only the cuvid calls, looked up from the same
// library handle pattern); OpenNVDEC takes a *Context (its primary context
// and sched) instead of retaining one; NVDECLoop's stream is a *Stream and
// its wait an Event; NVDECFrame and NVDECFramePool give way to Frame and
// FramePool (nvd_map_head copies into a Frame's planes, the loop records
// the Frame's written event instead of synchronising the stream).

/*
#cgo LDFLAGS: -ldl
#include "nvdec.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/onairhq/onair/cuda/hevc"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
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

// NVDECError is a failed driver call: which call, and the driver's error.
type NVDECError struct {
	Call string
	Code int
	Name string
}

func (e *NVDECError) Error() string {
	return fmt.Sprintf("%s: %s (%d)", e.Call, e.Name, e.Code)
}

// NVDEC is NVIDIA's decoder library and the CUDA calls decoding needs, on
// one device's primary context.
type NVDEC struct {
	lib    *C.nvd_lib
	device int
	closed atomic.Bool

	// The copy kernels loaded into the primary context by the library
	// itself, for loops of their own stream (NewLoop), once.
	modOnce        sync.Once
	mod            unsafe.Pointer // CUmodule
	copy8, copy128 unsafe.Pointer // CUfunction
	modErr         error
}

func (n *NVDEC) err(call string, r C.nvd_result) error {
	if r == 0 {
		return nil
	}
	return &NVDECError{Call: call, Code: int(r), Name: C.GoString(C.nvd_error_name(n.lib, r))}
}

// nvdecLibraries are the libraries OpenNVDEC loads (the tests load a
// stand-in that checks the loop's logic on machines without a GPU).
var nvdecLibraries = [2]string{"libcuda.so.1", "libnvcuvid.so.1"}

// OpenNVDEC loads libcuda.so.1 and libnvcuvid.so.1, initialises the driver
// and retains device's primary context. With blockingSync the context is
// asked to block a thread that waits for the GPU rather than spin (it keeps
// its flags if something else made it active first). The error says
// "NVDEC" and why: no driver, no NVDEC library, no device.
func OpenNVDEC(device int, blockingSync bool) (*NVDEC, error) {
	var errbuf [512]C.char
	cudaName, cuvidName := C.CString(nvdecLibraries[0]), C.CString(nvdecLibraries[1])
	defer C.free(unsafe.Pointer(cudaName))
	defer C.free(unsafe.Pointer(cuvidName))
	lib := C.nvd_load(cudaName, cuvidName, &errbuf[0], C.size_t(len(errbuf)))
	if lib == nil {
		return nil, fmt.Errorf("NVDEC is not usable here: %s (an NVIDIA driver with its video decode library is needed)", C.GoString(&errbuf[0]))
	}
	n := &NVDEC{lib: lib, device: device}
	var what *C.char
	blocking := C.int(0)
	if blockingSync {
		blocking = 1
	}
	if r := C.nvd_open(lib, C.int(device), blocking, &what); r != 0 {
		err := n.err(C.GoString(what), r)
		C.nvd_close(lib)
		return nil, fmt.Errorf("NVDEC is not usable on GPU %d: %w", device, err)
	}
	return n, nil
}

// Close releases the primary context and the libraries. Every decoder and
// loop must be closed first.
func (n *NVDEC) Close() {
	if n.closed.CompareAndSwap(false, true) {
		if n.mod != nil {
			C.nvd_module_unload(n.lib, n.mod)
		}
		C.nvd_close(n.lib)
	}
}

// copyKernels loads the compositor's PTX (ptxImage: the embedded build or
// ONAIR_CUDA_PTX's) into the primary context through the library's own
// table, once, and returns its copy kernels: for loops with a stream of
// their own, which have no Context of the shared loader to take them from.
func (n *NVDEC) copyKernels() (copy8, copy128 unsafe.Pointer, err error) {
	n.modOnce.Do(func() {
		var log [4096]C.char
		var what *C.char
		var mod, c8, c128 unsafe.Pointer
		r := C.nvd_result(1)
		if cubin := n.cubin(); cubin != nil { // as Context's kernels: machine code where onair ships it
			image := C.CBytes(cubin)
			r = C.nvd_module_load(n.lib, (*C.char)(image), &mod, &c8, &c128, &log[0], C.size_t(len(log)), &what)
			C.free(image)
		}
		if r != 0 {
			image := C.CString(ptxImage)
			defer C.free(unsafe.Pointer(image))
			log[0] = 0
			r = C.nvd_module_load(n.lib, image, &mod, &c8, &c128, &log[0], C.size_t(len(log)), &what)
		}
		if r != 0 {
			n.modErr = n.err(C.GoString(what), r)
			if s := C.GoString(&log[0]); s != "" {
				n.modErr = fmt.Errorf("%w; the JIT said: %s", n.modErr, s)
			}
			return
		}
		n.mod, n.copy8, n.copy128 = mod, c8, c128
	})
	return n.copy8, n.copy128, n.modErr
}

// cubin is the compositor's cubin for the decoder's GPU, or nil.
func (n *NVDEC) cubin() []byte {
	major, minor, err := capability(n.device)
	if err != nil {
		return nil
	}
	b, _ := kernelImage(major, minor)
	return b
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

// NVDECFrame is one decoded picture in pitched device memory: the luma
// rows, then the interleaved Cb,Cr rows, Pitch bytes apart (P010 holds
// 16-bit samples with the value in the high ten bits, as NVDEC's P016
// surfaces do). It comes from its decoder's pool with one reference.
type NVDECFrame struct {
	Ptr    uint64 // the luma plane; the chroma plane starts Pitch*Height bytes on
	Pitch  int
	Format frame.Format
	Width  int
	Height int
	// Index counts the decoder's frames in display order, from 0.
	Index int64
	// Timestamp is what the source gave with the access unit the picture
	// came from (the parser carries it into display order).
	Timestamp int64
	// Status is the engine's decode status: "ok", "concealed" (an error the
	// engine concealed) or "error".
	Status string
	// Device is the frame of the shared loader the picture was copied into
	// when the decoder writes into a FramePool (NVDECConfig.Frames): the
	// frame the compositor reads. TakeDevice hands it on.
	Device *Frame

	pool *NVDECFramePool
	refs atomic.Int32
}

// TakeDevice returns the device frame the picture was copied into, with
// the reference the NVDECFrame held (the NVDECFrame is spent: do not
// Release it too), its Meta's timestamp left to the caller. It is nil for
// a decoder with a pool of its own.
func (f *NVDECFrame) TakeDevice() *Frame {
	d := f.Device
	f.Device = nil
	return d
}

// ChromaPtr is where the chroma plane starts.
func (f *NVDECFrame) ChromaPtr() uint64 { return f.Ptr + uint64(f.Pitch*f.Height) }

// Retain adds a reference.
func (f *NVDECFrame) Retain() { f.refs.Add(1) }

// Release drops a reference; the last returns the frame to its pool.
func (f *NVDECFrame) Release() {
	switch n := f.refs.Add(-1); {
	case n == 0:
		f.pool.put(f)
	case n < 0:
		panic("cuda: Release of an NVDEC frame with no references")
	}
}

// Download copies the picture into dst, a host frame of its format and
// size, synchronously. It may be called from any goroutine.
func (f *NVDECFrame) Download(dst *frame.Frame) error {
	if dst.Format != f.Format || dst.Width != f.Width || dst.Height != f.Height {
		return fmt.Errorf("download: the frame is %v %dx%d, the picture %v %dx%d", dst.Format, dst.Width, dst.Height, f.Format, f.Width, f.Height)
	}
	row := f.Width * f.Format.BytesPerSample()
	n := f.pool.n
	for p, rows := range []int{f.Height, f.Height / 2} {
		src := f.Ptr
		if p == 1 {
			src = f.ChromaPtr()
		}
		if dst.Pitch[p] != row {
			return fmt.Errorf("download: the host frame is not tightly packed")
		}
		if r := C.nvd_download(n.lib, C.ulonglong(src), C.size_t(f.Pitch), unsafe.Pointer(&dst.Data[p][0]), C.size_t(row), C.size_t(rows)); r != 0 {
			return n.err("cuMemcpy2D (device to host)", r)
		}
	}
	dst.PTS = f.Timestamp
	return nil
}

// NVDECFramePool holds a decoder's output frames: its own, allocated once,
// or (dev set) frames of a FramePool of the shared loader, which the
// decoder's users hold and release like any device frame.
type NVDECFramePool struct {
	n      *NVDEC
	mu     sync.Mutex
	free   []*NVDECFrame
	all    []*NVDECFrame
	notify func() // called when a frame comes back
	dev    *FramePool
}

func devicePool(n *NVDEC, fp *FramePool, f frame.Format, w, h int) (*NVDECFramePool, error) {
	if fp.Format() != f || fp.Width() != w || fp.Height() != h {
		return nil, fmt.Errorf("the frame pool holds %v %dx%d frames, the stream is %v %dx%d", fp.Format(), fp.Width(), fp.Height(), f, w, h)
	}
	return &NVDECFramePool{n: n, dev: fp}, nil
}

// getOn takes a frame to copy a picture into on stream s: a device-backed
// pool's frame waits (on the GPU) for its last readers there.
func (p *NVDECFramePool) getOn(s *Stream) (*NVDECFrame, error) {
	if p.dev == nil {
		return p.get(), nil
	}
	if s == nil {
		return nil, errors.New("a decoder writing into a frame pool runs on a loop made by NewLoopOn")
	}
	fr, err := p.dev.Get(s)
	if err == ErrExhausted {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fr.Plane[1] != fr.Plane[0]+DevicePtr(fr.Pitch*fr.Height) {
		fr.Release()
		return nil, errors.New("the frame pool's frames do not hold their chroma rows right after the luma rows")
	}
	f := &NVDECFrame{Ptr: uint64(fr.Plane[0]), Pitch: fr.Pitch, Format: fr.Format, Width: fr.Width, Height: fr.Height, Device: fr, pool: p}
	f.refs.Store(1)
	return f, nil
}

func (p *NVDECFramePool) setNotify(fn func()) {
	if p.dev != nil {
		p.dev.SetNotify(fn)
		return
	}
	p.mu.Lock()
	p.notify = fn
	p.mu.Unlock()
}

func newNVDECFramePool(n *NVDEC, f frame.Format, w, h, count int) (*NVDECFramePool, error) {
	p := &NVDECFramePool{n: n}
	row := w * f.BytesPerSample()
	for i := 0; i < count; i++ {
		var ptr C.ulonglong
		var pitch C.size_t
		if r := C.nvd_alloc_pitch(n.lib, C.size_t(row), C.size_t(h+h/2), &ptr, &pitch); r != 0 {
			p.close()
			return nil, fmt.Errorf("NVDEC frame pool (%d frames of %dx%d %v): %w", count, w, h, f, n.err("cuMemAllocPitch", r))
		}
		fr := &NVDECFrame{Ptr: uint64(ptr), Pitch: int(pitch), Format: f, Width: w, Height: h, pool: p}
		p.all = append(p.all, fr)
		p.free = append(p.free, fr)
	}
	return p, nil
}

func (p *NVDECFramePool) get() *NVDECFrame {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		return nil
	}
	f := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	f.refs.Store(1)
	return f
}

func (p *NVDECFramePool) put(f *NVDECFrame) {
	if p.dev != nil {
		if d := f.TakeDevice(); d != nil {
			d.Release()
		}
		return
	}
	p.mu.Lock()
	p.free = append(p.free, f)
	notify := p.notify
	p.mu.Unlock()
	if notify != nil {
		notify()
	}
}

// Free is the number of frames the pool can hand out now.
func (p *NVDECFramePool) Free() int {
	if p.dev != nil {
		return p.dev.Available()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}

func (p *NVDECFramePool) close() {
	for _, f := range p.all {
		C.nvd_free(p.n.lib, C.ulonglong(f.Ptr))
	}
	p.all, p.free = nil, nil
}

// NVDECSource supplies a decoder's access units: the bytes of one (start
// codes included; they need to stay valid only until the next call), a
// timestamp to carry into display order, and io.EOF after the last. A
// looping source simply goes on from the start of the stream: an IDR
// picture starts the next pass without a gap.
type NVDECSource func() (NVDECUnit, error)

// NVDECUnit is one access unit for a decoder.
type NVDECUnit struct {
	// Data is the access unit (Annex B, start codes included), valid until
	// the source is called again.
	Data []byte
	// NALs, when set, is where each NAL unit's header starts in Data
	// (es.AccessUnit.NALs): onair's parser then does not search Data for
	// start codes again.
	NALs []int32
	// Timestamp is carried into display order.
	Timestamp int64
}

// NVDECConfig describes one stream.
type NVDECConfig struct {
	ID    string
	Codec NVDECCodec
	// Format, Width and Height are what the source declares: NV12 for
	// 8-bit video, P010 for 10-bit, the display size. A stream that says
	// otherwise is refused at its first sequence header.
	Format frame.Format
	Width  int
	Height int
	// DisplayDelay is how many pictures the parser holds back before
	// display beyond what reordering needs (0: none): a picture held back
	// is decoded by the time the loop maps it, at the price of latency.
	// NVDECDisplayDelay is what the measurements favour.
	DisplayDelay int
	// ExtraSurfaces are decode surfaces beyond what the stream needs (its
	// DPB and the display delay).
	ExtraSurfaces int
	// PoolFrames is the output frames (0: 4). A decoder whose frames are
	// all held by their users is not fed until one comes back.
	PoolFrames int
	// Frames, when set, is where the decoded pictures go instead of a
	// pool of the decoder's own: device frames of Format, Width and Height
	// that the compositor reads (the decoder's loop must come from
	// NewLoopOn). PoolFrames is then the FramePool's cap.
	Frames *FramePool
	// Ready, when set, is asked before each access unit is fed: false
	// holds the decoder back (its user has frames it could not hand on
	// yet). The loop then looks again within NVDECPoll.
	Ready  func() bool
	Source NVDECSource
	// OnFrame receives each decoded frame, in display order, on the loop's
	// thread; the frame is the callee's (Release it when done). It must
	// not block for long: the loop's other streams wait.
	OnFrame func(*NVDECFrame)
	// OnEnd is called on the loop's thread when the decoder has stopped:
	// err is nil after the last frame of a stream that ended, or why it
	// failed.
	OnEnd func(err error)

	// OwnParser (HEVC only; H.264 keeps NVIDIA's parser) feeds the engine
	// from onair's HEVC parser (package hevc) instead of NVIDIA's
	// cuvidParseVideoData: the decoder is created from its SPS as NVIDIA's
	// sequence callback creates it, each picture's parameters are written
	// into a CUVIDPICPARAMS for cuvidDecodePicture, and the pictures are
	// queued for display in the order the parser outputs them, held back
	// by DisplayDelay as NVIDIA's parser holds them. Byte-exact on the
	// H200 (TestNVDECOwnParserIsByteExact); canvas nvdec_parser picks it.
	OwnParser bool
	// CaptureParams, when set, receives a copy of each picture's
	// parameters handed to cuvidDecodePicture (NVIDIA's parser's, or with
	// OwnParser onair's), read back into a hevc.Picture with its bitstream
	// and slice offsets copied, in decoding order, on the loop's thread:
	// the check of onair's parser against NVIDIA's (HEVC only). Output and
	// ChromaFormatIDC come from the decoder, Index counts the pictures.
	CaptureParams func(p *hevc.Picture)
	// CaptureDisplay, with CaptureParams, receives each picture handed on
	// for display: its surface, the picture order count of the picture
	// last decoded into that surface, and its timestamp.
	CaptureDisplay func(surface int, poc int32, ts int64)
}

// ownSurfacesOverDPB is how many decode surfaces the own parser's decoder
// gets beyond the stream's MaxDecPicBuffering: NVIDIA's parser asks for 3
// more (min_num_decode_surfaces 8 for a buffer of 5, 10 for 7, measured on
// the H200), and so does onair's.
const ownSurfacesOverDPB = 3

// NVDECDisplayDelay is the display delay that decoded the most 1080p HEVC
// frames a second on the H200 for the least CPU (BENCHMARKS.md): 2 against
// 0, 4,743 against 4,196 frames/s for seven streams on one thread.
const NVDECDisplayDelay = 2

// NVDECDecoder decodes one stream on a loop.
type NVDECDecoder struct {
	n    *NVDEC
	cfg  NVDECConfig
	c    *C.nvd_dec
	pool *NVDECFramePool

	stop    atomic.Bool // Stop asked: the loop ends it on its next round
	loop    atomic.Pointer[NVDECLoop]
	sentEOS bool
	ended   bool
	err     error
	frames  int64
	status  [3]int64 // ok, concealed, error

	// OwnParser: onair's HEVC parser and the sequence the decoder was
	// created for.
	parser  *hevc.Parser
	seq     hevc.Sequence
	haveSeq bool

	// Capture mode: pictures captured, the POC decoded into each surface,
	// and (the tests) the common part of NVIDIA's parameters.
	captured int64
	surfPOC  [64]int32
	onCommon func(nvdecCommon)
}

// NewDecoder makes a decoder of cfg's stream; it is added to a loop to run.
func (n *NVDEC) NewDecoder(cfg NVDECConfig) (*NVDECDecoder, error) {
	if cfg.Codec != NVDECH264 && cfg.Codec != NVDECHEVC {
		return nil, fmt.Errorf("NVDEC decoder %s: codec %v: onair decodes H.264 and HEVC", cfg.ID, cfg.Codec)
	}
	if cfg.Format != frame.NV12 && cfg.Format != frame.P010 {
		return nil, fmt.Errorf("NVDEC decoder %s: format %v: use nv12 or p010", cfg.ID, cfg.Format)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width%2 != 0 || cfg.Height%2 != 0 {
		return nil, fmt.Errorf("NVDEC decoder %s: size %dx%d must be positive and even", cfg.ID, cfg.Width, cfg.Height)
	}
	if cfg.Source == nil || cfg.OnFrame == nil {
		return nil, fmt.Errorf("NVDEC decoder %s: a Source and an OnFrame are needed", cfg.ID)
	}
	if cfg.DisplayDelay < 0 || cfg.DisplayDelay > 8 {
		return nil, fmt.Errorf("NVDEC decoder %s: display delay %d: use 0 to 8", cfg.ID, cfg.DisplayDelay)
	}
	if cfg.PoolFrames <= 0 {
		cfg.PoolFrames = 4
	}
	if (cfg.OwnParser || cfg.CaptureParams != nil) && cfg.Codec != NVDECHEVC {
		return nil, fmt.Errorf("NVDEC decoder %s: onair's own parser and the capture of picture parameters are for HEVC only", cfg.ID)
	}
	var pool *NVDECFramePool
	var err error
	if cfg.Frames != nil {
		pool, err = devicePool(n, cfg.Frames, cfg.Format, cfg.Width, cfg.Height)
	} else {
		pool, err = newNVDECFramePool(n, cfg.Format, cfg.Width, cfg.Height, cfg.PoolFrames)
	}
	if err != nil {
		return nil, fmt.Errorf("NVDEC decoder %s: %w", cfg.ID, err)
	}
	var what *C.char
	var rc C.nvd_result
	out := min(cfg.PoolFrames, 8)
	own := C.int(0)
	if cfg.OwnParser {
		own = 1
	}
	c := C.nvd_dec_new(n.lib, C.int(cfg.Codec), C.int(cfg.Format.BitDepth()), C.int(cfg.Width), C.int(cfg.Height),
		C.int(cfg.DisplayDelay), C.int(cfg.ExtraSurfaces), C.int(out), own, &what, &rc)
	if c == nil {
		pool.close()
		return nil, fmt.Errorf("NVDEC decoder %s: %w", cfg.ID, n.err(C.GoString(what), rc))
	}
	if cfg.CaptureParams != nil {
		c.capture = 1
	}
	d := &NVDECDecoder{n: n, cfg: cfg, c: c, pool: pool}
	if cfg.OwnParser {
		d.parser = hevc.NewParser()
		d.parser.SetDisplayDelay(cfg.DisplayDelay)
	}
	return d, nil
}

// Frames is how many frames the decoder has handed on.
func (d *NVDECDecoder) Frames() int64 { return atomic.LoadInt64(&d.frames) }

// Statuses counts the frames by the engine's decode status: decoded
// cleanly, with an error the engine concealed, with an error.
func (d *NVDECDecoder) Statuses() (ok, concealed, failed int64) {
	return atomic.LoadInt64(&d.status[0]), atomic.LoadInt64(&d.status[1]), atomic.LoadInt64(&d.status[2])
}

// Pool is the decoder's frame pool.
func (d *NVDECDecoder) Pool() *NVDECFramePool { return d.pool }

// close frees the parser, the decoder and the pool; frames still held are
// freed with it, so a decoder is closed after its users let go.
func (d *NVDECDecoder) close() {
	if d.c != nil {
		C.nvd_dec_free(d.c)
		d.c = nil
	}
	d.pool.close()
}

func (d *NVDECDecoder) callbackErr(call string, r C.nvd_result) error {
	msg := C.GoString(&d.c.err[0])
	if msg == "" {
		return fmt.Errorf("NVDEC decoder %s: %w", d.cfg.ID, d.n.err(call, r))
	}
	if code := d.c.err_code; code > 0 {
		return fmt.Errorf("NVDEC decoder %s: %w", d.cfg.ID, d.n.err(msg, code))
	}
	return fmt.Errorf("NVDEC decoder %s: %s", d.cfg.ID, msg)
}

// Surfaces is what the decoder was created with (0s before the stream's
// first sequence): the decode surfaces the stream needs at least (NVIDIA's
// parser's min_num_decode_surfaces, or onair's parser's
// MaxDecPicBuffering+ownSurfacesOverDPB) and the decode surfaces created.
func (d *NVDECDecoder) Surfaces() (min, created int) {
	return int(d.c.fmt.min_surfaces), int(d.c.surfaces)
}

// feed parses one access unit (or the end of the stream). It reports
// false when the source had nothing yet (an empty access unit).
// feedSafely is feed with a panic in it (its source, its parser: a hostile
// stream) as its error: that decoder ends, the loop's others go on.
func (d *NVDECDecoder) feedSafely() (fed bool, err error) {
	defer panics.Catch("feeding an NVDEC decoder", nil, func(e error) { err = e })
	return d.feed()
}

func (d *NVDECDecoder) feed() (bool, error) {
	fed, err := d.feedAU()
	if d.c.nevents > 0 {
		d.drainCapture()
	}
	return fed, err
}

func (d *NVDECDecoder) feedAU() (bool, error) {
	u, err := d.cfg.Source()
	au, ts := u.Data, u.Timestamp
	if d.parser != nil && (err == nil || err == io.EOF) && (len(au) > 0 || err == io.EOF) {
		if err == io.EOF {
			d.sentEOS = true
		}
		return true, d.feedOwn(u, err == io.EOF)
	}
	if err == io.EOF {
		d.sentEOS = true
		if r := C.nvd_parse(d.c, nil, 0, 0, 0, 1); r != 0 || d.c.err[0] != 0 {
			return true, d.callbackErr("cuvidParseVideoData (end of stream)", r)
		}
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("NVDEC decoder %s: reading the stream: %w", d.cfg.ID, err)
	}
	if len(au) == 0 {
		return false, nil
	}
	r := C.nvd_parse(d.c, (*C.uchar)(unsafe.Pointer(&au[0])), C.size_t(len(au)), C.longlong(ts), 1, 0)
	goruntime.KeepAlive(au)
	if r != 0 || d.c.err[0] != 0 {
		return true, d.callbackErr("cuvidParseVideoData", r)
	}
	return true, nil
}

// feedOwn hands one access unit (or, at eos, the end of the stream) to
// onair's HEVC parser and what comes out to the engine and the display
// queue: the decoder is created at the first sequence, each picture is
// written into the decoder's CUVIDPICPARAMS and handed to
// cuvidDecodePicture with its slices where they lie (in the access unit
// when they lie back to back there, as they usually do: no copy), and each
// picture to show is queued as NVIDIA's display callback queues it.
func (d *NVDECDecoder) feedOwn(u NVDECUnit, eos bool) error {
	if clk := d.c.clk; clk != nil {
		t := C.nvd_tcpu(clk)
		defer func() { clk.parse += C.nvd_tcpu(clk) - t }()
	}
	var pics []*hevc.Picture
	var out []hevc.Display
	if eos {
		out = d.parser.Flush()
	} else {
		var err error
		if pics, out, err = d.parser.NextNALs(u.Data, u.NALs, u.Timestamp); err != nil {
			return fmt.Errorf("NVDEC decoder %s: parsing the stream: %w", d.cfg.ID, err)
		}
		if seq, ok := d.parser.Sequence(); ok && (!d.haveSeq || seq != d.seq) {
			if err := d.ownSequence(seq); err != nil {
				return err
			}
		}
	}
	for _, p := range pics {
		if !d.haveSeq {
			return fmt.Errorf("NVDEC decoder %s: a picture came before any sequence header", d.cfg.ID)
		}
		if p.CurrPicIdx < 0 || p.CurrPicIdx >= int(d.c.surfaces) {
			return fmt.Errorf("NVDEC decoder %s: the parser put picture %d (POC %d) in surface %d of %d", d.cfg.ID, p.Index, p.POC, p.CurrPicIdx, int(d.c.surfaces))
		}
		if len(p.Data) == 0 || len(p.SliceOffsets) == 0 {
			return fmt.Errorf("NVDEC decoder %s: picture %d (POC %d) has no slice data", d.cfg.ID, p.Index, p.POC)
		}
		pp := d.c.own // made at the first picture
		if pp == nil {
			pp = C.nvd_own_params(d.c)
		}
		if pp == nil {
			return fmt.Errorf("NVDEC decoder %s: out of memory for a picture's parameters", d.cfg.ID)
		}
		fillPicParams(pp, p)
		// The slice data goes to the engine from where it lies (the access
		// unit, or the parser's buffer): cuvidDecodePicture takes it in
		// during the call.
		ok := C.nvd_own_decode(d.c, (*C.uchar)(unsafe.Pointer(&p.Data[0])), C.size_t(len(p.Data)),
			(*C.uint)(unsafe.Pointer(&p.SliceOffsets[0])), C.size_t(len(p.SliceOffsets)))
		goruntime.KeepAlive(p.Data)
		goruntime.KeepAlive(p.SliceOffsets)
		if ok == 0 {
			return d.callbackErr("cuvidDecodePicture", 0)
		}
	}
	for _, o := range out {
		for _, p := range pics {
			if p.CurrPicIdx == o.Surface && p.POC != o.POC {
				return fmt.Errorf("NVDEC decoder %s: the parser decoded POC %d into surface %d before POC %d there was shown", d.cfg.ID, p.POC, o.Surface, o.POC)
			}
		}
		if C.nvd_own_display(d.c, C.int(o.Surface), C.longlong(o.Timestamp)) == 0 {
			return d.callbackErr("display", 0)
		}
	}
	if eos {
		d.c.eos = 1
	}
	return nil
}

// ownSequence creates the decoder for onair's parser's sequence as
// NVIDIA's sequence callback does (nvd_sequence: the same checks, the same
// refusals), or checks a sequence again against it.
func (d *NVDECDecoder) ownSequence(seq hevc.Sequence) error {
	var f C.nvd_format
	f.codec = C.NVD_CODEC_HEVC
	f.progressive = 1
	f.depth_luma_minus8 = C.uchar(seq.BitDepthLuma - 8)
	f.depth_chroma_minus8 = C.uchar(seq.BitDepthChroma - 8)
	f.min_surfaces = C.uchar(min(seq.MaxDecPicBuffering+ownSurfacesOverDPB, 32))
	f.coded_width, f.coded_height = C.uint(seq.CodedWidth), C.uint(seq.CodedHeight)
	f.left, f.top, f.right, f.bottom = C.int(seq.Left), C.int(seq.Top), C.int(seq.Right), C.int(seq.Bottom)
	f.chroma_format = C.int(seq.ChromaFormatIDC) // cudaVideoChromaFormat counts as chroma_format_idc does
	n := C.nvd_sequence(d.c, &f)
	if n == 0 {
		return d.callbackErr("cuvidCreateDecoder", 0)
	}
	if !d.haveSeq {
		d.parser.SetSurfaces(int(n))
	}
	d.seq, d.haveSeq = seq, true
	return nil
}

// drainCapture hands on what capture mode logged during a feed.
func (d *NVDECDecoder) drainCapture() {
	defer C.nvd_capture_clear(d.c)
	for _, e := range unsafe.Slice(d.c.events, int(d.c.nevents)) {
		if e.display != 0 {
			if fn := d.cfg.CaptureDisplay; fn != nil {
				poc := int32(0)
				if i := int(e.di.picture_index); i >= 0 && i < len(d.surfPOC) {
					poc = d.surfPOC[i]
				}
				fn(int(e.di.picture_index), poc, int64(e.di.timestamp))
			}
			continue
		}
		p, common := readPicParams(e.pp)
		p.Index = d.captured
		d.captured++
		p.ChromaFormatIDC = uint8(d.c.fmt.chroma_format)
		p.Output = true
		if p.CurrPicIdx >= 0 && p.CurrPicIdx < len(d.surfPOC) {
			d.surfPOC[p.CurrPicIdx] = p.POC
		}
		if d.onCommon != nil {
			d.onCommon(common)
		}
		if d.cfg.CaptureParams != nil {
			d.cfg.CaptureParams(p)
		}
	}
}

func (d *NVDECDecoder) finish(err error) {
	if d.ended {
		return
	}
	d.ended, d.err = true, err
	if d.cfg.OnEnd != nil {
		d.cfg.OnEnd(err)
	}
}

// ErrStopped is what a decoder ended by Stop reports to OnEnd.
var ErrStopped = errors.New("NVDEC decoder stopped")

// Stop ends the decoder on its loop's next round (OnEnd gets ErrStopped,
// then the loop frees it); it may be called from any goroutine.
func (d *NVDECDecoder) Stop() {
	d.stop.Store(true)
	if l := d.loop.Load(); l != nil {
		l.poke()
	}
}

// Err is why the decoder stopped (nil while it runs or after a clean end).
func (d *NVDECDecoder) Err() error { return d.err }

// NVDECPoll is how soon a loop looks again at a decoder that had nothing
// to feed (its source was empty) or was held back by its Ready, and runs
// its Every functions again.
const NVDECPoll = 2 * time.Millisecond

// NVDECLoop is one OS thread that decodes several streams round robin.
type NVDECLoop struct {
	n      *NVDEC
	stream unsafe.Pointer
	gs     *Stream // the shared loader's stream (NewLoopOn), borrowed
	every  map[int]func() bool
	nextFn int
	// everyMu is held while the Every functions run, so that a cancel
	// returns only once its function is not running.
	everyMu  sync.Mutex
	everyIDs []int
	name     string // the thread's name in /proc (SetName)
	stats    nvdecStats

	mu       sync.Mutex
	decs     []*NVDECDecoder
	wake     *loopWake
	stopping atomic.Bool

	// One round's mapped pictures, reused.
	batch []mapped

	clk *C.nvd_clocks // CPU clocks by call (NVDECClocksEnv), or nil

	// copies is the round's table for the copy kernel (C memory), nil
	// when the loop copies picture by picture (NVDECCopyEnv "each", or
	// copyWhy: the kernels could not be had).
	copies  *C.nvd_copies
	batched bool
	copyWhy error
}

// NVDECCopyEnv chooses how a decode loop copies the pictures it maps out
// of the decoder's surfaces: "batch" (the default: anything but "each")
// copies every picture of a round with one kernel launch on the loop's
// stream (onair_copy8/onair_copy128 of the compositor's PTX, from the
// loop's Context for NewLoopOn, loaded by the NVDEC library for NewLoop);
// "each" queues a cuMemcpy2DAsync per picture (one, or two where the
// surface's chroma rows do not follow its luma rows as the frame's do),
// as a loop does anyway when the kernels cannot be had (CopyMode says
// why). Read when a loop is made.
const NVDECCopyEnv = "ONAIR_NVDEC_COPY"

// CopyMode says how the loop copies pictures: "batch" (one kernel launch
// a round) or "each" (a cuMemcpy2DAsync per plane region), and, for "each"
// where "batch" was asked, why.
func (l *NVDECLoop) CopyMode() (mode string, why error) {
	if l.batched {
		return "batch", nil
	}
	return "each", l.copyWhy
}

// setCopies gives the loop its copy table for the kernels copy8 and
// copy128, unless err says they cannot be had.
func (l *NVDECLoop) setCopies(copy8, copy128 unsafe.Pointer, err error) {
	if err == nil && (copy8 == nil || copy128 == nil) {
		err = errors.New("the compositor PTX has no copy kernels (onair_copy8, onair_copy128): rebuild it with `make ptx`")
	}
	if err != nil {
		l.copyWhy = err
		return
	}
	l.copies = (*C.nvd_copies)(C.calloc(1, C.sizeof_nvd_copies))
	l.copies.copy8, l.copies.copy128 = copy8, copy128
	l.batched = true
}

// NVDECClocksEnv, set to anything, has every decode loop read its thread's
// CPU clock around each NVIDIA call (Stats' CPU fields): a measurement,
// about ten system calls a picture, not for shows on air.
const NVDECClocksEnv = "ONAIR_NVDEC_CLOCKS"

// newClocks is a loop's CPU clocks when NVDECClocksEnv asks for them. They
// live as long as the process: a loop's decoders may outlive its Run.
func newClocks() *C.nvd_clocks {
	if os.Getenv(NVDECClocksEnv) == "" {
		return nil
	}
	return (*C.nvd_clocks)(C.calloc(1, C.sizeof_nvd_clocks))
}

type mapped struct {
	d   *NVDECDecoder
	f   *NVDECFrame
	ptr C.ulonglong
	pic C.int
	err error // marking its device frame written failed
}

// NewLoop makes a loop with its own CUDA stream.
func (n *NVDEC) NewLoop() (*NVDECLoop, error) {
	var s unsafe.Pointer
	if r := C.nvd_stream_new(n.lib, &s); r != 0 {
		return nil, n.err("cuStreamCreate", r)
	}
	l := &NVDECLoop{n: n, stream: s, wake: newLoopWake(), clk: newClocks()}
	if os.Getenv(NVDECCopyEnv) != "each" {
		l.setCopies(n.copyKernels())
	}
	return l, nil
}

// NewLoopOn makes a loop that copies pictures on s, a stream of the
// shared loader's Context (the device's primary context, as NVDEC's):
// decoders writing into FramePools (NVDECConfig.Frames) need it, so that
// a recycled frame is written only after its readers' streams are done.
// The stream stays the caller's. The loop copies with the kernels of s's
// Context (NVDECCopyEnv), loaded by the compositor already.
func (n *NVDEC) NewLoopOn(s *Stream) *NVDECLoop {
	l := &NVDECLoop{n: n, stream: unsafe.Pointer(s.h), gs: s, wake: newLoopWake(), clk: newClocks()}
	if os.Getenv(NVDECCopyEnv) != "each" {
		l.setCopies(n.contextKernels(s.ctx))
	}
	return l
}

// contextKernels returns the copy kernels of c's module, once it is sure
// that c is the context NVDEC works in (both retain the device's primary
// context: the same CUcontext).
func (n *NVDEC) contextKernels(c *Context) (copy8, copy128 unsafe.Pointer, err error) {
	if C.nvd_same_context(n.lib, unsafe.Pointer(c.h)) == 0 {
		return nil, nil, fmt.Errorf("the loop's stream is of another context (%p) than NVDEC's (%p)", unsafe.Pointer(c.h), n.lib.ctx)
	}
	m, err := c.kernels()
	if err != nil {
		return nil, nil, err
	}
	return unsafe.Pointer(m.copy8), unsafe.Pointer(m.copy128), nil
}

// NVDECLoopStats is where a loop's thread spent its time (wall clock,
// summed over rounds): feeding access units to the parser (which submits
// pictures to the engines from its callbacks), mapping pictures and
// queueing their copies, waiting for the copies (asleep: blocking sync),
// unmapping them.
//
// With NVDECClocksEnv set, the CPU fields say where the thread's CPU time
// went, NVIDIA call by call (thread CPU ns, summed): ParseCPUNs is all of
// cuvidParseVideoData, DecodeCPUNs the cuvidDecodePicture calls its
// callbacks made (part of ParseCPUNs), then cuvidMapVideoFrame64, the
// plane copies queued (CopyMode "each": the cuMemcpy2DAsync calls;
// "batch": the kernel launches, a round's for all its pictures),
// cuvidGetDecodeStatus and cuvidUnmapVideoFrame64. CopyLaunches counts the
// copy kernel's launches ("batch"). Sleeps counts the times the loop slept
// for want of work, WakeWrites the pokes that had to wake it from there
// (the rest found it working and cost no system call).
type NVDECLoopStats struct {
	Rounds, Frames                 int64
	FeedNs, MapNs, WaitNs, UnmapNs int64
	CopyLaunches                   int64
	Sleeps, WakeWrites             int64

	Clocks                                       bool
	ParseCPUNs, DecodeCPUNs, MapCPUNs, CopyCPUNs int64
	StatusCPUNs, UnmapCPUNs                      int64
}

type nvdecStats struct {
	rounds, frames          atomic.Int64
	feed, mapq, wait, unmap atomic.Int64
	launches                atomic.Int64
}

// Stats returns the loop's counters so far.
func (l *NVDECLoop) Stats() NVDECLoopStats {
	s := &l.stats
	st := NVDECLoopStats{Rounds: s.rounds.Load(), Frames: s.frames.Load(), FeedNs: s.feed.Load(), MapNs: s.mapq.Load(), WaitNs: s.wait.Load(), UnmapNs: s.unmap.Load(),
		CopyLaunches: s.launches.Load(), Sleeps: int64(l.wake.sleeps.Load()), WakeWrites: int64(l.wake.writes.Load())}
	if c := l.clk; c != nil { // read while the loop runs: a measurement's figures, not exact to the call
		st.Clocks = true
		st.ParseCPUNs, st.DecodeCPUNs, st.MapCPUNs = int64(c.parse), int64(c.decode), int64(c._map)
		st.CopyCPUNs, st.StatusCPUNs, st.UnmapCPUNs = int64(c.copy), int64(c.status), int64(c.unmap)
	}
	return st
}

// SetName names the loop's thread in /proc (at most 15 bytes are kept), so
// that a reading of per-thread CPU finds it; call it before Run.
func (l *NVDECLoop) SetName(name string) { l.name = name }

// Every makes the loop call fn once a round, on its thread, at least every
// NVDECPoll, until fn returns false or the returned cancel is called:
// housekeeping of a user that has no decoder running (showing black while
// its file cannot be opened). cancel, from any goroutine but the loop's own
// (fn stops itself by returning false), returns once fn is not running and
// will not run again.
func (l *NVDECLoop) Every(fn func() (again bool)) (cancel func()) {
	l.mu.Lock()
	if l.every == nil {
		l.every = map[int]func() bool{}
	}
	id := l.nextFn
	l.nextFn++
	l.every[id] = fn
	l.mu.Unlock()
	l.poke()
	return func() {
		l.mu.Lock()
		delete(l.every, id)
		l.mu.Unlock()
		l.everyMu.Lock() // a round running fn has ended
		l.everyMu.Unlock()
	}
}

// runEvery calls the Every functions once, dropping those that are done.
// runOne runs a function given to Every; one that panics is logged with
// its stack, counted and dropped, and the loop goes on (its owner's own
// recovery, where it has one, has failed its node already).
func (l *NVDECLoop) runOne(fn func() bool) (again bool) {
	defer func() {
		if p := recover(); p != nil {
			panics.From("housekeeping on decode loop "+l.name, p, nil).Log(nil)
			again = false
		}
	}()
	return fn()
}

func (l *NVDECLoop) runEvery() int {
	l.everyMu.Lock()
	defer l.everyMu.Unlock()
	l.mu.Lock()
	ids := l.everyIDs[:0]
	for id := range l.every {
		ids = append(ids, id)
	}
	l.everyIDs = ids
	l.mu.Unlock()
	n := 0
	for _, id := range ids {
		l.mu.Lock()
		fn := l.every[id] // cancelled meanwhile: gone
		l.mu.Unlock()
		if fn == nil {
			continue
		}
		n++
		if !l.runOne(fn) {
			l.mu.Lock()
			delete(l.every, id)
			l.mu.Unlock()
		}
	}
	return n
}

// Add puts a decoder on the loop (before or while it runs).
func (l *NVDECLoop) Add(d *NVDECDecoder) {
	d.loop.Store(l)
	d.c.clk = l.clk
	d.pool.setNotify(l.poke)
	l.mu.Lock()
	l.decs = append(l.decs, d)
	l.mu.Unlock()
	l.poke()
}

func (l *NVDECLoop) poke() { l.wake.poke() }

// Stop makes Run return after its current round.
func (l *NVDECLoop) Stop() {
	l.stopping.Store(true)
	l.poke()
}

// Run decodes until every decoder has ended or Stop is called, on the
// calling goroutine locked to its OS thread; it then closes every decoder
// and the loop's stream. Failures of one decoder end that decoder only
// (OnEnd says why); the error is the loop's own (its stream failed).
func (l *NVDECLoop) Run() (err error) {
	goruntime.LockOSThread()
	if l.name != "" {
		name := []byte(l.name)
		name = append(name[:min(len(name), 15)], 0)
		unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0)
		// The named thread exits with the loop, never to run other
		// goroutines under that name.
	} else {
		defer goruntime.UnlockOSThread()
	}
	defer l.close()
	// A panic past the decoders' own recovery ends the loop (its decoders
	// closed, each told) as a failed stream does; the process goes on.
	defer func() {
		if p := recover(); p != nil {
			e := panics.From("decode loop "+l.name, p, nil)
			e.Log(nil)
			err = e
		}
	}()
	if err := l.wake.open(); err != nil {
		return err
	}
	if r := C.nvd_current(l.n.lib); r != 0 {
		return l.n.err("cuCtxSetCurrent", r)
	}
	var decs []*NVDECDecoder
	for !l.stopping.Load() {
		housekeeping := l.runEvery()
		l.mu.Lock()
		decs = append(decs[:0], l.decs...)
		l.mu.Unlock()
		progress, live, poll := false, 0, housekeeping > 0
		l.stats.rounds.Add(1)
		t0 := time.Now()
		// Feed every decoder that has shown what it decoded and has a
		// frame to decode into.
		for _, d := range decs {
			if !d.ended && d.stop.Load() {
				d.finish(ErrStopped)
			}
			if d.ended {
				continue
			}
			live++
			if d.c.qlen > 0 || d.sentEOS || d.pool.Free() == 0 {
				continue
			}
			if d.cfg.Ready != nil && !d.cfg.Ready() {
				poll = true
				continue
			}
			fed, err := d.feedSafely()
			if err != nil {
				d.finish(err)
				continue
			}
			if !fed {
				poll = true
				continue
			}
			progress = true
		}
		l.stats.feed.Add(int64(time.Since(t0)))
		// Map what came out, copy it into frames, wait once, unmap.
		n, err := l.collect(decs)
		if err != nil {
			return err
		}
		if n > 0 {
			progress = true
		}
		ended := false
		for _, d := range decs {
			if !d.ended && d.sentEOS && d.c.qlen == 0 {
				d.finish(nil) // every picture of the stream is out
			}
			ended = ended || d.ended
		}
		if ended && l.gs != nil {
			l.dropEnded() // a long-lived loop frees what its users restart
		}
		if live == 0 && !poll {
			l.mu.Lock()
			more := len(l.decs) > len(decs)
			l.mu.Unlock()
			if !more && l.gs == nil {
				return nil // a loop of its own decoders ends with them
			}
			if more {
				continue
			}
		}
		if !progress {
			l.idle(poll) // a frame came back to a pool, a decoder was added, Stop, or NVDECPoll passed
		}
	}
	return nil
}

// dropEnded closes the decoders that have ended and takes them off the
// loop.
func (l *NVDECLoop) dropEnded() {
	l.mu.Lock()
	keep := l.decs[:0]
	var gone []*NVDECDecoder
	for _, d := range l.decs {
		if d.ended {
			gone = append(gone, d)
		} else {
			keep = append(keep, d)
		}
	}
	clear(l.decs[len(keep):])
	l.decs = keep
	l.mu.Unlock()
	for _, d := range gone {
		d.close()
	}
}

// idle waits for a poke, or at most NVDECPoll when poll is set.
func (l *NVDECLoop) idle(poll bool) {
	if poll {
		l.wake.sleep(NVDECPoll)
	} else {
		l.wake.sleep(-1)
	}
}

// collect maps the pictures waiting for display (at most the pool's free
// frames and the decoder's output surfaces per decoder), queues their
// copies on the loop's stream (one kernel launch for the round, or copies
// picture by picture: CopyMode), marks device frames written, waits for
// the stream, unmaps and hands the frames on. The pictures of one round
// were handed to the engines together, so waiting for each in turn costs
// about the longest of them.
func (l *NVDECLoop) collect(decs []*NVDECDecoder) (int, error) {
	t0 := time.Now()
	b := l.batch[:0]
	cp := l.copies
	var lerr error // the copies could not be queued: the loop fails
	for _, d := range decs {
		if d.ended || lerr != nil {
			continue
		}
		taken := 0
		for d.c.qlen > 0 && taken < int(d.c.output_surfaces) {
			if cp != nil && cp.a.entries+2 > C.ONAIR_MAX_COPIES {
				if lerr = l.launchCopies(); lerr != nil {
					break
				}
			}
			f, err := d.pool.getOn(l.gs)
			if err != nil {
				d.finish(fmt.Errorf("NVDEC decoder %s: %w", d.cfg.ID, err))
				break
			}
			if f == nil {
				break
			}
			var ptr C.ulonglong
			var ts C.longlong
			var pic C.int
			var what *C.char
			if r := C.nvd_map_head(d.c, l.stream, C.ulonglong(f.Ptr), C.size_t(f.Pitch), cp, &ptr, &ts, &pic, &what); r != 0 {
				f.Release()
				if ptr != 0 {
					C.nvd_unmap(d.c, ptr)
				}
				d.finish(fmt.Errorf("NVDEC decoder %s: %w", d.cfg.ID, l.n.err(C.GoString(what), r)))
				break
			}
			f.Timestamp = int64(ts)
			b = append(b, mapped{d: d, f: f, ptr: ptr, pic: pic})
			taken++
		}
	}
	l.batch = b
	if len(b) == 0 {
		return 0, nil
	}
	if cp != nil && lerr == nil {
		lerr = l.launchCopies()
	}
	if lerr == nil {
		// A device frame is written once its copy is done: its event goes
		// after the round's copies on the stream.
		for i := range b {
			if f := b[i].f; f.Device != nil {
				b[i].err = f.Device.MarkWritten(l.gs)
			}
		}
	}
	t1 := time.Now()
	serr := C.nvd_stream_sync(l.n.lib, l.stream)
	t2 := time.Now()
	for i := range b {
		m := &b[i]
		m.f.Status = decodeStatus(C.nvd_status(m.d.c, m.pic))
		C.nvd_unmap(m.d.c, m.ptr)
	}
	l.stats.mapq.Add(int64(t1.Sub(t0)))
	l.stats.wait.Add(int64(t2.Sub(t1)))
	l.stats.unmap.Add(int64(time.Since(t2)))
	l.stats.frames.Add(int64(len(b)))
	if lerr != nil || serr != 0 {
		for _, m := range b {
			m.f.Release()
		}
		if lerr != nil {
			return 0, lerr
		}
		return 0, l.n.err("cuStreamSynchronize", serr)
	}
	for i := range b {
		m := &b[i]
		f, d := m.f, m.d
		if m.err != nil {
			f.Release()
			d.finish(fmt.Errorf("NVDEC decoder %s: %w", d.cfg.ID, m.err))
			*m = mapped{}
			continue
		}
		switch f.Status {
		case "concealed":
			atomic.AddInt64(&d.status[1], 1)
		case "error":
			atomic.AddInt64(&d.status[2], 1)
		default:
			atomic.AddInt64(&d.status[0], 1)
		}
		f.Index = d.frames
		atomic.AddInt64(&d.frames, 1)
		if d.ended { // failed while its pictures were in flight
			f.Release()
			*m = mapped{}
			continue
		}
		d.cfg.OnFrame(f)
		*m = mapped{}
	}
	return len(b), nil
}

// launchCopies queues the copies in the round's table: one launch of the
// copy kernel.
func (l *NVDECLoop) launchCopies() error {
	if l.copies.a.entries == 0 {
		return nil
	}
	l.stats.launches.Add(1)
	if r := C.nvd_copy_launch(l.n.lib, l.copies, l.stream, l.clk); r != 0 {
		return l.n.err("cuLaunchKernel (the decode loop's copies)", r)
	}
	return nil
}

// decodeStatus names a picture's decode status (asked once it is mapped,
// so decoded).
func decodeStatus(st C.int) string {
	switch st {
	case C.NVD_STATUS_CONCEALED:
		return "concealed"
	case C.NVD_STATUS_ERROR:
		return "error"
	}
	return "ok"
}

func (l *NVDECLoop) close() {
	l.mu.Lock()
	decs := l.decs
	l.decs = nil
	l.mu.Unlock()
	for _, d := range decs {
		d.finish(errors.New("the loop stopped"))
		d.close()
	}
	if l.stream != nil && l.gs == nil {
		C.nvd_stream_free(l.n.lib, l.stream)
	}
	l.stream = nil
	if l.copies != nil {
		C.free(unsafe.Pointer(l.copies))
		l.copies = nil
	}
	l.wake.close()
}
