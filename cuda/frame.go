package cuda

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/onairhq/onair/frame"
)

// Frame is an NV12 or P010 picture in device memory: a luma plane and an
// interleaved CbCr plane (Height/2 rows of Width/2 pairs), both with the
// same row pitch, plus the metadata a host frame.Frame carries.
//
// Frames are reference counted like host frames: a FramePool hands one out
// with one reference, every extra user Retains it, and the last Release
// gives it back. Because GPU work is asynchronous, a frame also carries two
// events that order that work without blocking the CPU:
//
//   - written: the writer records it after its last write (MarkWritten; an
//     Uploader, Compositor.Draw and Transition do it); a reader's stream
//     waits on it (WaitWritten; Draw does it for its layers) before reading.
//   - read: a reader that is done queueing reads calls ReleaseAfter(stream)
//     instead of Release; the next writer of the recycled frame
//     (FramePool.Get) makes its stream wait on it.
type Frame struct {
	Format        frame.Format
	Width, Height int
	Pitch         int          // bytes per row of both planes (and of the alpha plane)
	Plane         [2]DevicePtr // luma, interleaved CbCr
	// Alpha is the alpha plane of a frame from NewAlphaFramePool (0: none):
	// Height rows of Width bytes at Pitch, after the chroma rows in the
	// frame's one allocation (frame/keying.go declares what it holds).
	Alpha      DevicePtr
	frame.Meta // timestamp, colour tags, source: as a host frame's

	ctx     *Context
	mem     *DeviceMemory // nil for a wrapped frame
	written *Event
	read    *Event
	readMu  sync.Mutex // ReleaseAfter's wait-then-record is one step
	refs    atomic.Int32
	pool    *FramePool
	sound   []float32 // the frame's own storage for Meta.Audio, kept across reuse
}

// frameEvents makes a frame's two ordering events.
func (fr *Frame) makeEvents(c *Context) error {
	var err error
	if fr.written, err = c.NewEvent(EventDisableTiming); err != nil {
		return err
	}
	if fr.read, err = c.NewEvent(EventDisableTiming); err != nil {
		fr.written.Close()
		return err
	}
	return nil
}

func checkSize(f frame.Format, w, h int) error {
	if f != frame.NV12 && f != frame.P010 {
		return fmt.Errorf("cuda: unknown pixel format %v: use nv12 or p010", f)
	}
	if w <= 0 || h <= 0 || w%2 != 0 || h%2 != 0 {
		return fmt.Errorf("cuda: frame size %dx%d must be positive and even (4:2:0 chroma)", w, h)
	}
	return nil
}

// NewFrame allocates a frame outside any pool (one pitched allocation: the
// luma rows, then the chroma rows). Its pixels are undefined: Fill paints
// it black. Free it with Release.
func NewFrame(c *Context, f frame.Format, w, h int) (*Frame, error) {
	fr, err := allocFrame(c, f, w, h, false)
	if err != nil {
		return nil, err
	}
	fr.refs.Store(1)
	return fr, nil
}

// allocFrame allocates the planes at one pitch: the luma rows, the chroma
// rows, then, with alpha, the alpha rows.
func allocFrame(c *Context, f frame.Format, w, h int, alpha bool) (*Frame, error) {
	if err := checkSize(f, w, h); err != nil {
		return nil, err
	}
	rows := h + h/2
	if alpha {
		rows += h
	}
	m, err := c.AllocPitch(w*f.BytesPerSample(), rows)
	if err != nil {
		return nil, fmt.Errorf("a %dx%d %v frame: %w", w, h, f, err)
	}
	fr := &Frame{
		Format: f, Width: w, Height: h, Pitch: m.Pitch,
		Plane: [2]DevicePtr{m.Ptr, m.Ptr + DevicePtr(m.Pitch*h)},
		Meta:  frame.Meta{TimeBase: frame.Rational{Num: 1, Den: 1}},
		ctx:   c, mem: m,
	}
	if alpha {
		fr.Alpha = m.Ptr + DevicePtr(m.Pitch*(h+h/2))
	}
	if err := fr.makeEvents(c); err != nil {
		m.Free()
		return nil, err
	}
	return fr, nil
}

// RowBytes is the bytes of picture in one row of either plane.
func (fr *Frame) RowBytes() int { return fr.Width * fr.Format.BytesPerSample() }

// MarkWritten records that the writes queued on s so far complete the
// picture: readers wait for this point.
func (fr *Frame) MarkWritten(s *Stream) error { return fr.written.Record(s) }

// WaitWritten makes s wait (on the GPU) until the picture is complete.
func (fr *Frame) WaitWritten(s *Stream) error { return s.Wait(fr.written) }

// Retain adds a reference.
func (fr *Frame) Retain() { fr.refs.Add(1) }

// Refs is the current number of references.
func (fr *Frame) Refs() int32 { return fr.refs.Load() }

// ReleaseAfter drops a reference once the reads queued on s so far are
// done: the frame's read event is recorded on s (after s waits for the
// previous readers' point, so one event covers every reader), then the
// reference goes. Readers on the GPU release this way; Release is for
// users that queued no GPU reads (or synchronized).
func (fr *Frame) ReleaseAfter(s *Stream) error {
	fr.readMu.Lock()
	err := s.Wait(fr.read)
	if err == nil {
		err = fr.read.Record(s)
	}
	fr.readMu.Unlock()
	fr.Release()
	return err
}

// Release drops a reference; the last returns a pooled frame to its pool
// (or frees a frame from NewFrame). Releasing more often than retained
// panics: that bug would hand one picture to two writers.
func (fr *Frame) Release() {
	n := fr.refs.Add(-1)
	if n < 0 {
		panic("cuda: Release of a frame with no references")
	}
	if n > 0 {
		return
	}
	if fr.pool != nil {
		fr.pool.put(fr)
		return
	}
	fr.free()
}

// free releases the frame's memory and events; queued work using it must
// be done (the context is synchronized first when reads were queued).
func (fr *Frame) free() {
	if q, err := fr.read.Query(); err == nil && !q {
		fr.read.Synchronize()
	}
	if q, err := fr.written.Query(); err == nil && !q {
		fr.written.Synchronize()
	}
	fr.written.Close()
	fr.read.Close()
	if fr.mem != nil {
		fr.mem.Free()
	}
}

// CopyMeta copies the timestamp, colour tags and source identity of src,
// and its sound into the frame's own storage: the copy may outlive src.
func (fr *Frame) CopyMeta(src *Frame) {
	fr.Meta = src.Meta
	fr.sound = fr.Meta.OwnAudio(fr.sound, src.Audio)
}

// SetAudio makes block the frame's sound, copied into storage the frame
// keeps across its reuse from a pool (as frame.Frame.SetAudio).
func (fr *Frame) SetAudio(block []float32) { fr.sound = fr.Meta.OwnAudio(fr.sound, block) }

// Metadata returns the frame's timestamp, colour tags and source identity
// (what the shared show runtime reads and stamps on every backend's frames).
func (fr *Frame) Metadata() *frame.Meta { return &fr.Meta }

// MetaFrom copies the metadata of a host frame, its sound into the
// frame's own storage.
func (fr *Frame) MetaFrom(h *frame.Frame) {
	fr.Meta = h.Meta
	fr.sound = fr.Meta.OwnAudio(fr.sound, h.Audio)
}

// MetaTo copies the metadata into a host frame, the sound into the host
// frame's own storage (the host picture outlives the device frame at an
// output's queue).
func (fr *Frame) MetaTo(h *frame.Frame) {
	a := fr.Audio
	h.Meta = fr.Meta
	h.SetAudio(a)
}

func (fr *Frame) sameShape(h *frame.Frame) error {
	if h.Format != fr.Format || h.Width != fr.Width || h.Height != fr.Height {
		return fmt.Errorf("cuda: copy between a %v %dx%d host frame and a %v %dx%d device frame", h.Format, h.Width, h.Height, fr.Format, fr.Width, fr.Height)
	}
	return nil
}

// Upload queues copying the host frame src (both planes, any pitches) into
// fr, takes its metadata and marks fr written. From page-locked memory the
// copy is asynchronous (keep src until s has done it); from ordinary memory
// src may be reused when Upload returns.
func (fr *Frame) Upload(s *Stream, src *frame.Frame) error {
	if err := fr.sameShape(src); err != nil {
		return err
	}
	for p := 0; p < 2; p++ {
		if err := s.Copy2D(DeviceRegion(fr.Plane[p], fr.Pitch), HostRegion(src.Data[p], src.Pitch[p]), fr.RowBytes(), fr.Height>>p); err != nil {
			return err
		}
	}
	if err := fr.uploadAlpha(s, src); err != nil {
		return err
	}
	fr.MetaFrom(src)
	return fr.MarkWritten(s)
}

// uploadAlpha gives fr's alpha plane src's, or makes it opaque where src
// has none (frame.Frame.CopyFrom's rule).
func (fr *Frame) uploadAlpha(s *Stream, src *frame.Frame) error {
	if fr.Alpha == 0 {
		return nil
	}
	if src.Alpha == nil {
		return s.Memset2D8(fr.Alpha, fr.Pitch, frame.Opaque, fr.Width, fr.Height)
	}
	return s.Copy2D(DeviceRegion(fr.Alpha, fr.Pitch), HostRegion(src.Alpha, src.Width), fr.Width, fr.Height)
}

// Download copies fr into the host frame dst (both planes, any pitches)
// once it is written, with its metadata, and returns when the bytes are
// there.
func (fr *Frame) Download(s *Stream, dst *frame.Frame) error {
	if err := fr.sameShape(dst); err != nil {
		return err
	}
	if err := fr.WaitWritten(s); err != nil {
		return err
	}
	for p := 0; p < 2; p++ {
		if err := s.Copy2D(HostRegion(dst.Data[p], dst.Pitch[p]), DeviceRegion(fr.Plane[p], fr.Pitch), fr.RowBytes(), fr.Height>>p); err != nil {
			return err
		}
	}
	if fr.Alpha != 0 && dst.Alpha != nil {
		if err := s.Copy2D(HostRegion(dst.Alpha, dst.Width), DeviceRegion(fr.Alpha, fr.Pitch), fr.Width, fr.Height); err != nil {
			return err
		}
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	fr.MetaTo(dst)
	return nil
}

// Fill queues painting the frame limited-range black (opaque, where it has
// an alpha plane) and marks it written.
func (fr *Frame) Fill(s *Stream) error {
	y, c := fr.Format.Black()
	var err error
	if fr.Format == frame.P010 {
		err = errors.Join(s.Memset2D16(fr.Plane[0], fr.Pitch, y, fr.Width, fr.Height),
			s.Memset2D16(fr.Plane[1], fr.Pitch, c, fr.Width, fr.Height/2))
	} else {
		err = errors.Join(s.Memset2D8(fr.Plane[0], fr.Pitch, byte(y), fr.Width, fr.Height),
			s.Memset2D8(fr.Plane[1], fr.Pitch, byte(c), fr.Width, fr.Height/2))
	}
	if err == nil && fr.Alpha != 0 {
		err = s.Memset2D8(fr.Alpha, fr.Pitch, frame.Opaque, fr.Width, fr.Height)
	}
	if err != nil {
		return err
	}
	return fr.MarkWritten(s)
}

// FramePool recycles device frames of one format and size: it allocates up
// to its cap, then hands out only frames that came back, so a running show
// allocates nothing. It is safe for concurrent use.
type FramePool struct {
	ctx           *Context
	format        frame.Format
	width, height int
	alpha         bool // frames have an alpha plane
	list          *frame.FreeList[*Frame]
}

// ErrExhausted is returned by Get when every frame of a capped pool is out.
var ErrExhausted = errors.New("cuda: frame pool exhausted: every frame is still referenced (a user forgot Release, or the pool's cap is too small)")

// NewFramePool returns a pool of w×h frames of format f in context c, at
// most max of them (0: no cap).
func NewFramePool(c *Context, f frame.Format, w, h, max int) (*FramePool, error) {
	if err := checkSize(f, w, h); err != nil {
		return nil, err
	}
	return &FramePool{ctx: c, format: f, width: w, height: h, list: frame.NewFreeList[*Frame](max)}, nil
}

// NewAlphaFramePool is NewFramePool for frames with an alpha plane: the
// pools of browser sources whose producer sends alpha.
func NewAlphaFramePool(c *Context, f frame.Format, w, h, max int) (*FramePool, error) {
	p, err := NewFramePool(c, f, w, h, max)
	if p != nil {
		p.alpha = true
	}
	return p, err
}

// HasAlpha reports whether the pool's frames have an alpha plane.
func (p *FramePool) HasAlpha() bool { return p.alpha }

// Format, Width and Height describe the pool's frames.
func (p *FramePool) Format() frame.Format { return p.format }
func (p *FramePool) Width() int           { return p.width }
func (p *FramePool) Height() int          { return p.height }

// Context is the pool's context.
func (p *FramePool) Context() *Context { return p.ctx }

// Allocated is how many frames the pool has allocated.
func (p *FramePool) Allocated() int { return p.list.Allocated() }

// Free is how many frames wait in the pool.
func (p *FramePool) Free() int { return p.list.Free() }

// Available is how many frames Get can hand out now: those waiting in the
// pool and those a capped pool may still allocate.
func (p *FramePool) Available() int { return p.list.Available() }

// SetNotify makes the pool call fn (on the releasing goroutine, without
// holding the pool's lock) each time a frame comes back: a writer that
// waits for a frame (an NVDEC loop) wakes on it.
func (p *FramePool) SetNotify(fn func()) { p.list.SetNotify(fn) }

// Get returns a frame with one reference and cleared metadata, for writing
// on stream s: s waits (on the GPU) until the frame's previous readers are
// done with it. Its pixels are whatever its last user left.
func (p *FramePool) Get(s *Stream) (*Frame, error) {
	if p.list.Closed() {
		return nil, errors.New("cuda: Get from a closed frame pool")
	}
	fr, fresh, ok := p.list.Get()
	if !ok {
		return nil, ErrExhausted
	}
	if fresh {
		var err error
		if fr, err = allocFrame(p.ctx, p.format, p.width, p.height, p.alpha); err != nil {
			p.list.Unget()
			return nil, err
		}
		fr.pool = p
	}
	fr.Meta = frame.Meta{TimeBase: frame.Rational{Num: 1, Den: 1}}
	fr.refs.Store(1)
	if s != nil {
		if err := s.Wait(fr.read); err != nil {
			fr.Release()
			return nil, err
		}
	}
	return fr, nil
}

func (p *FramePool) put(fr *Frame) {
	if !p.list.Put(fr) { // closed
		fr.free()
	}
}

// Close frees the frames in the pool; frames still out are freed when
// their last reference goes.
func (p *FramePool) Close() {
	for _, fr := range p.list.Close() {
		fr.free()
	}
}
