package cuda

// One NVDEC stream: its configuration, the parser (NVIDIA's, or onair's
// HEVC parser feeding the engine itself), the decoder the stream's first
// sequence creates, and the capture of what the parser hands the engine.
// nvdec_lib.go says how the parts fit.

/*
#cgo CFLAGS: -I${SRCDIR}
#include "nvdec.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	goruntime "runtime"
	"sync/atomic"
	"unsafe"

	"github.com/onairhq/onair/cuda/hevc"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
)

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
	// PoolFrames is the output frames (0: 4): the cap of the decoder's own
	// FramePool. A decoder whose frames are all held by their users is not
	// fed until one comes back.
	PoolFrames int
	// Frames, when set, is where the decoded pictures go instead of a
	// FramePool of the decoder's own: frames of Format, Width and Height in
	// NVDEC's Context that the compositor reads. PoolFrames then only
	// bounds the pictures mapped at once.
	Frames *FramePool
	// Ready, when set, is asked before each access unit is fed: false
	// holds the decoder back (its user has frames it could not hand on
	// yet). The loop then looks again within NVDECPoll.
	Ready  func() bool
	Source NVDECSource
	// OnFrame receives each decoded frame, in display order, on the loop's
	// thread, written (its copy done) and with what the decoder knows of
	// the picture; the frame is the callee's (Release it when done). It
	// must not block for long: the loop's other streams wait.
	OnFrame func(*Frame, NVDECPicture)
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

// NVDECPicture is what a decoder knows of a picture it hands on.
type NVDECPicture struct {
	// Index counts the decoder's frames in display order, from 0.
	Index int64
	// Timestamp is what the source gave with the access unit the picture
	// came from (the parser carries it into display order).
	Timestamp int64
	// Status is the engine's decode status: "ok", "concealed" (an error the
	// engine concealed) or "error".
	Status string
}

// NVDECDecoder decodes one stream on a loop.
type NVDECDecoder struct {
	n    *NVDEC
	cfg  NVDECConfig
	c    *C.nvd_dec
	pool *FramePool
	// ownPool: the pool is the decoder's own (no NVDECConfig.Frames),
	// closed with it.
	ownPool bool

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
	pool, ownPool, err := n.framePool(cfg)
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
		if ownPool {
			pool.Close()
		}
		return nil, fmt.Errorf("NVDEC decoder %s: %w", cfg.ID, n.err(C.GoString(what), rc))
	}
	if cfg.CaptureParams != nil {
		c.capture = 1
	}
	d := &NVDECDecoder{n: n, cfg: cfg, c: c, pool: pool, ownPool: ownPool}
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

// framePool is the pool a decoder of cfg writes into: cfg.Frames, checked
// against the stream and NVDEC's context, or (own) a pool of its own.
func (n *NVDEC) framePool(cfg NVDECConfig) (pool *FramePool, own bool, err error) {
	fp := cfg.Frames
	if fp == nil {
		fp, err = NewFramePool(n.ctx, cfg.Format, cfg.Width, cfg.Height, cfg.PoolFrames)
		return fp, true, err
	}
	if fp.Format() != cfg.Format || fp.Width() != cfg.Width || fp.Height() != cfg.Height {
		return nil, false, fmt.Errorf("the frame pool holds %v %dx%d frames, the stream is %v %dx%d", fp.Format(), fp.Width(), fp.Height(), cfg.Format, cfg.Width, cfg.Height)
	}
	if fp.Context().h != n.ctx.h {
		return nil, false, fmt.Errorf("the frame pool is of another context (%p) than NVDEC's (%p)", unsafe.Pointer(fp.Context().h), unsafe.Pointer(n.ctx.h))
	}
	return fp, false, nil
}

// close frees the parser, the decoder and its own pool (frames still held
// are freed when their users let go).
func (d *NVDECDecoder) close() {
	if d.c != nil {
		C.nvd_dec_free(d.c)
		d.c = nil
	}
	if d.ownPool {
		d.pool.Close()
	}
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
