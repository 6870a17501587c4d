package frame

import "errors"

// Pool recycles frames of one format and size. Get hands out a frame with one
// reference; the frame comes back when its last reference is released. After
// warm-up, Get and Release allocate nothing.
type Pool struct {
	format        Format
	width, height int
	alpha         bool // frames have an alpha plane
	list          *FreeList[*Frame]
}

// NewPool returns a pool of w×h frames of format f. max bounds the number of
// frames it will ever allocate (0: unbounded); Get fails once they are all out.
func NewPool(f Format, w, h, max int) (*Pool, error) {
	if err := check(f, w, h); err != nil {
		return nil, err
	}
	return &Pool{format: f, width: w, height: h, list: NewFreeList[*Frame](max)}, nil
}

// NewAlphaPool is NewPool for frames with an alpha plane (AlphaSize): the
// pools of browser sources whose producer sends alpha. Every other pool
// makes frames without one, and pays nothing for it.
func NewAlphaPool(f Format, w, h, max int) (*Pool, error) {
	p, err := NewPool(f, w, h, max)
	if p != nil {
		p.alpha = true
	}
	return p, err
}

// HasAlpha reports whether the pool's frames have an alpha plane.
func (p *Pool) HasAlpha() bool { return p.alpha }

// Format, Width and Height describe the pool's frames.
func (p *Pool) Format() Format { return p.format }
func (p *Pool) Width() int     { return p.width }
func (p *Pool) Height() int    { return p.height }

// Allocated is the number of frames the pool has ever allocated.
func (p *Pool) Allocated() int { return p.list.Allocated() }

// Free is the number of frames waiting in the pool.
func (p *Pool) Free() int { return p.list.Free() }

// ErrExhausted is returned by Get when a bounded pool has every frame out.
var ErrExhausted = errors.New("frame: pool exhausted: every frame is still referenced (a user forgot Release, or the pool is too small)")

// Get returns a frame with one reference. Its pixels are whatever the last
// user left; its metadata is cleared.
func (p *Pool) Get() (*Frame, error) {
	fr, fresh, ok := p.list.Get()
	if !ok {
		return nil, ErrExhausted
	}
	if fresh {
		fr = alloc(p.format, p.width, p.height, p.alpha)
		fr.pool = p
	}
	fr.PTS, fr.SourceFrame, fr.Source = 0, 0, ""
	fr.TimeBase, fr.Colour, fr.Audio = Rational{Num: 1, Den: 1}, Colour{}, nil
	fr.refs.Store(1)
	return fr, nil
}

// Put drops one reference to fr, a frame from this pool, as fr.Release
// does: the frame goes back to the pool when its last user lets go.
func (p *Pool) Put(fr *Frame) {
	if fr.pool != p {
		panic("frame: Put of a frame into a pool it did not come from")
	}
	fr.Release()
}

func (p *Pool) put(fr *Frame) {
	if !p.list.Put(fr) { // closed: left to the garbage collector
		fr.pool = nil
	}
}

// Close lets go of the frames waiting in the pool, and of each frame still
// out when its last reference goes: a pool of a size no longer used (a
// producer that changed its picture) holds no memory once its frames are
// back. Get still works after Close, allocating each time.
func (p *Pool) Close() {
	for _, fr := range p.list.Close() {
		fr.pool = nil
	}
}
