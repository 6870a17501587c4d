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
// pictures that came out, copies each one's display area into a device
// frame of its decoder's pool on the loop's stream, waits for the stream
// once, unmaps them all and hands the frames on. Seven engines are kept
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
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/onairhq/onair/frame"
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
	closed atomic.Bool
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
	n := &NVDEC{lib: lib}
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

	pool *NVDECFramePool
	refs atomic.Int32
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

// NVDECFramePool holds a decoder's output frames, allocated once.
type NVDECFramePool struct {
	n      *NVDEC
	mu     sync.Mutex
	free   []*NVDECFrame
	all    []*NVDECFrame
	notify func() // called when a frame comes back
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
	p.mu.Lock()
	p.free = append(p.free, f)
	notify := p.notify
	p.mu.Unlock()
	if notify != nil {
		notify()
	}
}

// Free is the number of frames in the pool.
func (p *NVDECFramePool) Free() int {
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
type NVDECSource func() (au []byte, timestamp int64, err error)

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
	Source     NVDECSource
	// OnFrame receives each decoded frame, in display order, on the loop's
	// thread; the frame is the callee's (Release it when done). It must
	// not block for long: the loop's other streams wait.
	OnFrame func(*NVDECFrame)
	// OnEnd is called on the loop's thread when the decoder has stopped:
	// err is nil after the last frame of a stream that ended, or why it
	// failed.
	OnEnd func(err error)
}

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

	sentEOS bool
	ended   bool
	err     error
	frames  int64
	status  [3]int64 // ok, concealed, error
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
	pool, err := newNVDECFramePool(n, cfg.Format, cfg.Width, cfg.Height, cfg.PoolFrames)
	if err != nil {
		return nil, fmt.Errorf("NVDEC decoder %s: %w", cfg.ID, err)
	}
	var what *C.char
	var rc C.nvd_result
	out := min(cfg.PoolFrames, 8)
	c := C.nvd_dec_new(n.lib, C.int(cfg.Codec), C.int(cfg.Format.BitDepth()), C.int(cfg.Width), C.int(cfg.Height),
		C.int(cfg.DisplayDelay), C.int(cfg.ExtraSurfaces), C.int(out), &what, &rc)
	if c == nil {
		pool.close()
		return nil, fmt.Errorf("NVDEC decoder %s: %w", cfg.ID, n.err(C.GoString(what), rc))
	}
	return &NVDECDecoder{n: n, cfg: cfg, c: c, pool: pool}, nil
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

// feed parses one access unit (or the end of the stream).
func (d *NVDECDecoder) feed() error {
	au, ts, err := d.cfg.Source()
	if err == io.EOF {
		d.sentEOS = true
		if r := C.nvd_parse(d.c, nil, 0, 0, 0, 1); r != 0 || d.c.err[0] != 0 {
			return d.callbackErr("cuvidParseVideoData (end of stream)", r)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("NVDEC decoder %s: reading the stream: %w", d.cfg.ID, err)
	}
	if len(au) == 0 {
		return nil
	}
	r := C.nvd_parse(d.c, (*C.uchar)(unsafe.Pointer(&au[0])), C.size_t(len(au)), C.longlong(ts), 1, 0)
	goruntime.KeepAlive(au)
	if r != 0 || d.c.err[0] != 0 {
		return d.callbackErr("cuvidParseVideoData", r)
	}
	return nil
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

// Err is why the decoder stopped (nil while it runs or after a clean end).
func (d *NVDECDecoder) Err() error { return d.err }

// NVDECLoop is one OS thread that decodes several streams round robin.
type NVDECLoop struct {
	n      *NVDEC
	stream unsafe.Pointer

	mu       sync.Mutex
	decs     []*NVDECDecoder
	wake     chan struct{}
	stopping atomic.Bool

	// One round's mapped pictures, reused.
	batch []mapped
}

type mapped struct {
	d   *NVDECDecoder
	f   *NVDECFrame
	ptr C.ulonglong
	pic C.int
}

// NewLoop makes a loop with its own CUDA stream.
func (n *NVDEC) NewLoop() (*NVDECLoop, error) {
	var s unsafe.Pointer
	if r := C.nvd_stream_new(n.lib, &s); r != 0 {
		return nil, n.err("cuStreamCreate", r)
	}
	return &NVDECLoop{n: n, stream: s, wake: make(chan struct{}, 1)}, nil
}

// Add puts a decoder on the loop (before or while it runs).
func (l *NVDECLoop) Add(d *NVDECDecoder) {
	d.pool.mu.Lock()
	d.pool.notify = l.poke
	d.pool.mu.Unlock()
	l.mu.Lock()
	l.decs = append(l.decs, d)
	l.mu.Unlock()
	l.poke()
}

func (l *NVDECLoop) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Stop makes Run return after its current round.
func (l *NVDECLoop) Stop() {
	l.stopping.Store(true)
	l.poke()
}

// Run decodes until every decoder has ended or Stop is called, on the
// calling goroutine locked to its OS thread; it then closes every decoder
// and the loop's stream. Failures of one decoder end that decoder only
// (OnEnd says why); the error is the loop's own (its stream failed).
func (l *NVDECLoop) Run() error {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	defer l.close()
	if r := C.nvd_current(l.n.lib); r != 0 {
		return l.n.err("cuCtxSetCurrent", r)
	}
	var decs []*NVDECDecoder
	for !l.stopping.Load() {
		l.mu.Lock()
		decs = append(decs[:0], l.decs...)
		l.mu.Unlock()
		progress, live := false, 0
		// Feed every decoder that has shown what it decoded and has a
		// frame to decode into.
		for _, d := range decs {
			if d.ended {
				continue
			}
			live++
			if d.c.qlen > 0 || d.sentEOS || d.pool.Free() == 0 {
				continue
			}
			if err := d.feed(); err != nil {
				d.finish(err)
				continue
			}
			progress = true
		}
		// Map what came out, copy it into frames, wait once, unmap.
		n, err := l.collect(decs)
		if err != nil {
			return err
		}
		if n > 0 {
			progress = true
		}
		for _, d := range decs {
			if !d.ended && d.sentEOS && d.c.qlen == 0 {
				d.finish(nil) // every picture of the stream is out
			}
		}
		if live == 0 {
			l.mu.Lock()
			more := len(l.decs) > len(decs)
			l.mu.Unlock()
			if !more {
				return nil
			}
			continue
		}
		if !progress {
			<-l.wake // a frame came back to a pool, a decoder was added, or Stop
		}
	}
	return nil
}

// collect maps the pictures waiting for display (at most the pool's free
// frames and the decoder's output surfaces per decoder), queues their
// copies on the loop's stream, waits for the stream, unmaps and hands the
// frames on. The pictures of one round were handed to the engines
// together, so waiting for each in turn costs about the longest of them.
func (l *NVDECLoop) collect(decs []*NVDECDecoder) (int, error) {
	b := l.batch[:0]
	for _, d := range decs {
		if d.ended {
			continue
		}
		taken := 0
		for d.c.qlen > 0 && taken < int(d.c.output_surfaces) {
			f := d.pool.get()
			if f == nil {
				break
			}
			var ptr C.ulonglong
			var ts C.longlong
			var pic C.int
			var what *C.char
			if r := C.nvd_map_head(d.c, l.stream, C.ulonglong(f.Ptr), C.size_t(f.Pitch), &ptr, &ts, &pic, &what); r != 0 {
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
	serr := C.nvd_stream_sync(l.n.lib, l.stream)
	for i := range b {
		m := &b[i]
		m.f.Status = decodeStatus(C.nvd_status(m.d.c, m.pic))
		C.nvd_unmap(m.d.c, m.ptr)
	}
	if serr != 0 {
		for _, m := range b {
			m.f.Release()
		}
		return 0, l.n.err("cuStreamSynchronize", serr)
	}
	for i := range b {
		m := &b[i]
		f, d := m.f, m.d
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
			continue
		}
		d.cfg.OnFrame(f)
		*m = mapped{}
	}
	return len(b), nil
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
	if l.stream != nil {
		C.nvd_stream_free(l.n.lib, l.stream)
		l.stream = nil
	}
}
