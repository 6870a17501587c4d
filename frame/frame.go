// Package frame holds uncompressed NV12 and P010 pictures in host memory and
// the reference-counted pools that recycle them, so that a running show
// allocates nothing per frame.
//
// A Frame is plain data: two planes (luma, then interleaved CbCr at half
// width and half height), their pitches, a rational timestamp, colour tags
// and the identity of the source frame it came from; a frame from a pool
// that asks for it (NewAlphaPool: a browser source whose producer sends
// alpha) also has an alpha plane, which the compositors key it with (see
// Alpha and Key). Pools hand frames out
// with one reference; every extra user (a bus, an output queue) Retains it and
// the last Release gives it back.
//
// frame must never import runtime/, lang/, compiler/ or cpu/: it is the leaf
// every backend shares.
package frame

import (
	"fmt"
	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/timecode"
	"io"
	"sync/atomic"
	"unsafe"
)

// Format is the pixel layout of a frame (value.PixelFormat: the plan
// carries it too).
type Format = value.PixelFormat

const (
	NV12 = value.NV12
	P010 = value.P010
)

// ParseFormat maps "nv12" and "p010" to a Format.
func ParseFormat(s string) (Format, error) { return value.ParsePixelFormat(s) }

// Rational is an exact time base or frame rate; Den > 0.
type Rational = value.Rational

// Colour holds the colour tags stamped on a frame at its source
// (value.Colour: the plan carries them too).
type Colour = value.Colour

// BT709 is the tag set of HD video: bt709 everything, limited range.
var BT709 = Colour{Primaries: "bt709", Transfer: "bt709", Matrix: "bt709", Range: "limited"}

// Meta is what a frame says about itself besides its pixels, the same on
// every backend: the shared show runtime reads and stamps it through
// Metadata, whatever memory the pixels live in.
type Meta struct {
	PTS         int64 // presentation time in TimeBase units
	TimeBase    Rational
	Colour      Colour
	Source      string // the id of the source that produced it
	SourceFrame int64  // the source's frame number (counts on across loops)
	Stamps      Stamps // the moments the show asked for (frame_metadata); none by default
	// SentAt is when the frame's sender sent it (wall clock, Unix ns), a
	// live source's stamp (onair send's): 0 when it carries none.
	SentAt int64
	// Timecode is the SMPTE timecode of the tick a bus drew the frame on
	// (zero on a source's frames).
	Timecode timecode.Timecode
	// Audio is the sound that goes with the picture: 48 kHz stereo,
	// interleaved float32 (package audio's block). On a source's frame it
	// is the samples of that frame's period; on a bus's, the bus's mix of
	// the tick. Nil: silence. Never written once set (copies of a Meta
	// share it): whoever fills a frame sets a slice nobody else writes.
	Audio []float32
}

// OwnAudio sets m.Audio to a copy of block in store (grown when it is too
// short) and returns the store, for a frame to keep: the one place a frame
// type copies a sound it must not share. A nil block is silence.
func (m *Meta) OwnAudio(store, block []float32) []float32 {
	if block == nil {
		m.Audio = nil
		return store
	}
	if cap(store) < len(block) {
		store = make([]float32, len(block))
	}
	m.Audio = append(store[:0], block...)
	return store
}

// Frame is one picture in host memory.
type Frame struct {
	Format        Format
	Width, Height int
	Pitch         [2]int    // bytes per row of plane 0 (luma) and plane 1 (CbCr)
	Data          [2][]byte // the planes; Data[1] rows hold Width/2 Cb,Cr pairs
	// Alpha is the optional alpha plane, nil for frames without one; its
	// layout and meaning are declared once, at AlphaSize (keying.go).
	Alpha []byte
	Meta

	buf   []byte    // the one allocation both planes live in
	sound []float32 // the frame's own storage for Meta.Audio (SetAudio), kept across reuse
	refs  atomic.Int32
	pool  *Pool
}

// Wrap makes a frame over buf, a packed picture (the luma rows, then the
// chroma rows, as a raw .nv12/.p010 file holds them) of at least
// f.Size(w, h) bytes that the caller owns (page-locked memory for a GPU
// copy). It is in no pool: its last Release does nothing to buf.
func Wrap(f Format, w, h int, buf []byte) (*Frame, error) {
	if err := check(f, w, h); err != nil {
		return nil, err
	}
	if len(buf) < f.Size(w, h) {
		return nil, fmt.Errorf("frame: wrapping %d bytes as a %dx%d %v picture of %d bytes", len(buf), w, h, f, f.Size(w, h))
	}
	bps := f.BytesPerSample()
	ys := w * h * bps
	fr := &Frame{
		Format: f, Width: w, Height: h,
		Pitch: [2]int{w * bps, w * bps},
		Data:  [2][]byte{buf[:ys:ys], buf[ys:f.Size(w, h)]},
		Meta:  Meta{TimeBase: Rational{Num: 1, Den: 1}},
		buf:   buf[:f.Size(w, h)],
	}
	fr.refs.Store(1)
	return fr, nil
}

// Metadata returns the frame's timestamp, colour tags and source identity.
func (fr *Frame) Metadata() *Meta { return &fr.Meta }

// New allocates a frame outside any pool, tightly packed, filled with black.
// Width and height must be even and positive.
func New(f Format, w, h int) (*Frame, error) {
	if err := check(f, w, h); err != nil {
		return nil, err
	}
	fr := alloc(f, w, h, false)
	fr.refs.Store(1)
	fr.Fill()
	return fr, nil
}

// NewAlpha allocates a frame with an alpha plane outside any pool, filled
// with opaque black.
func NewAlpha(f Format, w, h int) (*Frame, error) {
	if err := check(f, w, h); err != nil {
		return nil, err
	}
	fr := alloc(f, w, h, true)
	fr.refs.Store(1)
	fr.Fill()
	return fr, nil
}

func check(f Format, w, h int) error {
	if f != NV12 && f != P010 {
		return fmt.Errorf("frame: unknown format %v", f)
	}
	if w <= 0 || h <= 0 || w%2 != 0 || h%2 != 0 {
		return fmt.Errorf("frame: size %dx%d must be positive and even (4:2:0 chroma)", w, h)
	}
	return nil
}

// alloc makes a tightly packed frame, with an alpha plane when alpha is
// set: one allocation, the alpha plane after the colour planes.
func alloc(f Format, w, h int, alpha bool) *Frame {
	bps := f.BytesPerSample()
	size := f.Size(w, h)
	n := size
	if alpha {
		n += AlphaSize(w, h)
	}
	buf := make([]byte, n)
	ys := w * h * bps
	fr := &Frame{
		Format: f, Width: w, Height: h,
		Pitch: [2]int{w * bps, w * bps},
		Data:  [2][]byte{buf[:ys:ys], buf[ys:size:size]},
		Meta:  Meta{TimeBase: Rational{Num: 1, Den: 1}},
		buf:   buf[:size:size],
	}
	if alpha {
		fr.Alpha = buf[size:]
	}
	return fr
}

// Timestamp is the frame's PTS, in its TimeBase: what an edge reports as the
// last timestamp it carried (nanoseconds on the monotonic clock once a
// pacer has released the frame).
func (fr *Frame) Timestamp() int64 { return fr.PTS }

// Bytes returns both planes as one contiguous slice (luma then chroma) when
// the frame is tightly packed, as frames from New and pools are: the layout
// of a raw .nv12/.p010 file, so a file read can land in it directly.
func (fr *Frame) Bytes() []byte { return fr.buf }

// WriteTo writes the picture as a packed raw frame (the luma rows, then the
// chroma rows, no padding): the layout of .nv12/.p010 files and of ffmpeg's
// rawvideo nv12/p010le. A packed frame goes out in one write.
func (fr *Frame) WriteTo(w io.Writer) (int64, error) {
	size := fr.Format.Size(fr.Width, fr.Height)
	if len(fr.buf) == size && fr.Pitch[0] == fr.Width*fr.Format.BytesPerSample() && fr.Pitch[1] == fr.Pitch[0] &&
		len(fr.Data[0]) > 0 && &fr.Data[0][0] == &fr.buf[0] {
		n, err := w.Write(fr.buf)
		return int64(n), err
	}
	rowBytes := fr.Width * fr.Format.BytesPerSample()
	var total int64
	for p := 0; p < 2; p++ {
		for r := 0; r < fr.Height>>p; r++ {
			n, err := w.Write(fr.Data[p][r*fr.Pitch[p] : r*fr.Pitch[p]+rowBytes])
			total += int64(n)
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// Plane16 returns plane i of a P010 frame as 16-bit words (native order,
// which is little-endian on every host onair supports).
func (fr *Frame) Plane16(i int) []uint16 {
	d := fr.Data[i]
	if len(d) < 2 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&d[0])), len(d)/2)
}

// Fill paints the frame limited-range black, opaque where it has an alpha
// plane.
func (fr *Frame) Fill() {
	y, c := fr.Format.Black()
	fr.FillRect(0, 0, fr.Width, fr.Height, y, c, c)
	for i := range fr.Alpha {
		fr.Alpha[i] = Opaque
	}
}

// FillRect paints the rectangle (clipped to the frame; x, y, w, h rounded to
// even) with one luma and one Cb, Cr value, given as stored samples.
func (fr *Frame) FillRect(x, y, w, h int, Y, Cb, Cr uint16) {
	x0, y0, x1, y1 := clipEven(x, y, w, h, fr.Width, fr.Height)
	if x1 <= x0 || y1 <= y0 {
		return
	}
	// The first row of each plane painted sample by sample, the others
	// copies of it (memmove).
	bps := fr.Format.BytesPerSample()
	b0, b1 := x0*bps, x1*bps
	for p, h := range [2][2]int{{y0, y1}, {y0 / 2, y1 / 2}} {
		first := fr.Data[p][h[0]*fr.Pitch[p]+b0 : h[0]*fr.Pitch[p]+b1]
		switch {
		case fr.Format == P010 && p == 0:
			row := fr.Plane16(0)[h[0]*fr.Pitch[0]/2+x0 : h[0]*fr.Pitch[0]/2+x1]
			for i := range row {
				row[i] = Y
			}
		case fr.Format == P010:
			row := fr.Plane16(1)[h[0]*fr.Pitch[1]/2+x0 : h[0]*fr.Pitch[1]/2+x1]
			for i := 0; i+1 < len(row); i += 2 {
				row[i], row[i+1] = Cb, Cr
			}
		case p == 0:
			for i := range first {
				first[i] = byte(Y)
			}
		default:
			for i := 0; i+1 < len(first); i += 2 {
				first[i], first[i+1] = byte(Cb), byte(Cr)
			}
		}
		for r := h[0] + 1; r < h[1]; r++ {
			copy(fr.Data[p][r*fr.Pitch[p]+b0:r*fr.Pitch[p]+b1], first)
		}
	}
}

func clipEven(x, y, w, h, W, H int) (x0, y0, x1, y1 int) {
	x0, y0, x1, y1 = x&^1, y&^1, (x+w+1)&^1, (y+h+1)&^1
	x0, y0 = max(x0, 0), max(y0, 0)
	x1, y1 = min(x1, W), min(y1, H)
	return
}

// CopyMeta copies the timestamp, colour tags and source identity of src,
// and its sound into the frame's own storage (SetAudio): the copy may
// outlive src.
func (fr *Frame) CopyMeta(src *Frame) {
	fr.Meta = src.Meta
	fr.sound = fr.Meta.OwnAudio(fr.sound, src.Audio)
}

// SetAudio makes block the frame's sound (Meta.Audio), copied into storage
// the frame keeps across its reuse from a pool: after the first ticks a
// bus's mix allocates nothing. A frame's sound is never written while it is
// in use (Meta.Audio's rule): the storage is written again only after the
// frame's last Release, when the pool hands it out again.
func (fr *Frame) SetAudio(block []float32) { fr.sound = fr.Meta.OwnAudio(fr.sound, block) }

// CopyFrom copies the pixels and metadata of src, which must have the same
// format and size. Alpha goes with the colour when both frames have an
// alpha plane; a frame with one copied from a frame without is opaque; a
// frame without one keeps src's colour, which is src over black.
func (fr *Frame) CopyFrom(src *Frame) error {
	if src.Format != fr.Format || src.Width != fr.Width || src.Height != fr.Height {
		return fmt.Errorf("frame: copy %v %dx%d into %v %dx%d", src.Format, src.Width, src.Height, fr.Format, fr.Width, fr.Height)
	}
	rowBytes := fr.Width * fr.Format.BytesPerSample()
	for p := 0; p < 2; p++ {
		rows := fr.Height >> p
		for r := 0; r < rows; r++ {
			copy(fr.Data[p][r*fr.Pitch[p]:r*fr.Pitch[p]+rowBytes], src.Data[p][r*src.Pitch[p]:])
		}
	}
	if fr.Alpha != nil {
		if src.Alpha != nil {
			copy(fr.Alpha, src.Alpha)
		} else {
			for i := range fr.Alpha {
				fr.Alpha[i] = Opaque
			}
		}
	}
	fr.CopyMeta(src)
	return nil
}

// Retain adds a reference: call it once for every extra user of the frame.
func (fr *Frame) Retain() { fr.refs.Add(1) }

// Refs is the current number of references.
func (fr *Frame) Refs() int32 { return fr.refs.Load() }

// Release drops a reference; the last one returns a pooled frame to its pool.
// Releasing a frame more often than it was retained panics, since that bug
// would otherwise hand one buffer to two users.
func (fr *Frame) Release() {
	n := fr.refs.Add(-1)
	if n < 0 {
		panic("frame: Release of a frame with no references")
	}
	if n == 0 && fr.pool != nil {
		fr.pool.put(fr)
	}
}
