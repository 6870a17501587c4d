package cuda

import (
	"errors"
	"fmt"
	"sync"

	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

func init() {
	kinds.Add("test_pattern_cuda", (*backend).newTestPattern)
	Lowering.Lower("test_pattern", nodes.Chain{Links: []nodes.Link{nodes.L("test_pattern_cuda"), nodes.L("realtime"), nodes.L("one_to_many")}})
}

// testPattern is test_pattern_cuda: media.TestPattern's pictures made on
// the GPU. The pattern's art (media.PatternArt) is drawn once on the host,
// uploaded and shared by the sources of one pattern, format and size; each
// frame is the art's pieces for its number (media.TestPattern.Pieces),
// copied into a pooled device frame by one launch of the copy kernel, and
// a second for the flash that goes over them. The numbers, metadata and
// sound are the host pattern's own (NextMeta). It runs on its source's
// pacing loop and makes the next picture whenever its edge has room; it
// queues work on its stream and never waits for it.
type testPattern struct {
	id      string
	st      *show.SourceState
	tp      *media.TestPattern
	art     *deviceArt
	release func() // gives the shared art back
	pool    *gpu.FramePool
	stream  *gpu.Stream
	pieces  []media.Piece
	regions []gpu.CopyRegion
	pending Frame // made, not yet taken by the edge
}

func (b *backend) newTestPattern(st *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
	if len(ctx.Outputs) != 1 {
		return nil, fmt.Errorf("node %s: a test pattern has one output, the plan gives it %d", n.ID, len(ctx.Outputs))
	}
	cfg, err := show.PatternConfig(st, &n)
	if err != nil {
		return nil, err
	}
	t, err := b.newPatternCutter(cfg, st.Source(n.Address))
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.ID, err)
	}
	t.id = n.ID
	return t, nil
}

// newPatternCutter makes the node of the pattern cfg, counting its frames
// and sound in st.
func (b *backend) newPatternCutter(cfg media.TestPatternConfig, st *show.SourceState) (*testPattern, error) {
	tp, err := media.NewTestPattern(cfg)
	if err != nil {
		return nil, err
	}
	t := &testPattern{id: cfg.ID, st: st, tp: tp}
	if t.stream, err = b.ctx.NewStream(); err != nil {
		return nil, err
	}
	// The copy kernel's module loads now, not on the pacing loop.
	if err = t.stream.CopyRegions(nil); err == nil {
		t.art, t.release, err = b.arts.get(b.ctx, tp)
	}
	if err == nil {
		t.pool, err = gpu.NewFramePool(b.ctx, cfg.Format, cfg.Width, cfg.Height, framesAhead)
	}
	if err != nil {
		t.Stop()
		return nil, err
	}
	return t, nil
}

func (t *testPattern) Start(ctx *runtime.NodeContext[Frame]) error {
	if ctx.Loop() == nil {
		return fmt.Errorf("node %s: test_pattern_cuda runs on its source's pacing loop; the plan gives it a thread", t.id)
	}
	t.tp.SetNext(int64(t.st.Produced.Load())) // a restart counts on
	if _, err := ctx.Watch(ctx.Outputs[0].Consumed(), func(reg *runtime.Registration) {
		t.fill(ctx)
		reg.Rearm()
	}); err != nil {
		return err
	}
	t.fill(ctx)
	return nil
}

// fill sends pictures while the edge has room.
func (t *testPattern) fill(ctx *runtime.NodeContext[Frame]) {
	for !ctx.Stopping() {
		if t.pending == nil {
			f, err := t.next()
			if err != nil {
				ctx.Fail(err)
				return
			}
			t.pending = f
		}
		ok, err := ctx.Put(0, t.pending)
		if errors.Is(err, runtime.ErrWouldBlock) {
			return // full: the Consumed watch calls again
		}
		if !ok {
			t.pending.Release()
		}
		t.pending = nil
		if err != nil {
			return
		}
	}
}

// next queues the next picture's copies into a frame of the pool.
func (t *testPattern) next() (Frame, error) {
	d, err := t.pool.Get(t.stream)
	if err != nil {
		return nil, err
	}
	n := t.tp.NextMeta(&d.Meta)
	if err := t.cut(d, n); err != nil {
		d.Release()
		return nil, fmt.Errorf("node %s: frame %d: %w", t.id, n, err)
	}
	t.st.Produced.Add(1)
	t.st.Audio.Add(d.Audio)
	return d, nil
}

// cut queues frame n's pieces of the art into d on the stream and marks d
// written.
func (t *testPattern) cut(d *gpu.Frame, n int64) error {
	if err := t.lay(d, n, t.stream.CopyRegions); err != nil {
		return err
	}
	return d.MarkWritten(t.stream)
}

// lay copies frame n's pieces of the art into d with copies: the pieces
// that do not overlap in one call (a launch of the copy kernel), those
// that go over them (the flash) in a second.
func (t *testPattern) lay(d *gpu.Frame, n int64, copies func([]gpu.CopyRegion) error) error {
	var under int
	t.pieces, under = t.tp.Pieces(t.pieces[:0], n)
	t.regions = t.art.regions(t.regions[:0], d, t.pieces)
	if err := copies(t.regions[:under]); err != nil {
		return err
	}
	if under < len(t.regions) {
		return copies(t.regions[under:])
	}
	return nil
}

func (t *testPattern) Stop() {
	if t.pending != nil {
		t.pending.Release()
		t.pending = nil
	}
	if t.stream != nil {
		t.stream.Synchronize() // no copy reads the art any more
	}
	if t.release != nil {
		t.release()
		t.release = nil
	}
	if t.pool != nil {
		t.pool.Close()
	}
	if t.stream != nil {
		t.stream.Close()
	}
}

// deviceArt is a pattern's art in device memory.
type deviceArt struct {
	base, ink *gpu.Frame
	refs      int
}

// regions appends the copies that lay pieces from the art into d.
func (a *deviceArt) regions(dst []gpu.CopyRegion, d *gpu.Frame, pieces []media.Piece) []gpu.CopyRegion {
	bps := d.Format.BytesPerSample()
	for _, p := range pieces {
		src := a.base
		if p.Ink {
			src = a.ink
		}
		dst = append(dst, gpu.CopyRegion{
			Src:      src.Plane[p.Plane] + gpu.DevicePtr(p.SrcY*src.Pitch+p.SrcX*bps),
			Dst:      d.Plane[p.Plane] + gpu.DevicePtr(p.Y*d.Pitch+p.X*bps),
			SrcPitch: src.Pitch, DstPitch: d.Pitch, Width: p.W * bps, Rows: p.H,
		})
	}
	return dst
}

// artCache holds the arts of a backend's test patterns, one for each
// pattern, format, size and solid colour, while a source uses it.
type artCache struct {
	mu   sync.Mutex
	arts map[media.ArtKey]*deviceArt
}

// get returns the art of tp's pictures, drawn and uploaded by the first
// source that needs it (and complete on the GPU when get returns), and
// the function that gives it back once the caller's copies from it are
// done.
func (c *artCache) get(ctx *gpu.Context, tp *media.TestPattern) (*deviceArt, func(), error) {
	key := tp.ArtKey()
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.arts[key]
	if a == nil {
		var err error
		if a, err = uploadArt(ctx, tp); err != nil {
			return nil, nil, err
		}
		if c.arts == nil {
			c.arts = map[media.ArtKey]*deviceArt{}
		}
		c.arts[key] = a
	}
	a.refs++
	return a, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if a.refs--; a.refs == 0 {
			delete(c.arts, key)
			a.base.Release()
			a.ink.Release()
		}
	}, nil
}

// uploadArt draws tp's art and copies it into device frames.
func uploadArt(ctx *gpu.Context, tp *media.TestPattern) (*deviceArt, error) {
	host, err := tp.NewArt()
	if err != nil {
		return nil, err
	}
	s, err := ctx.NewStream()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	a := &deviceArt{}
	if a.base, err = uploadFrame(ctx, s, host.Base); err == nil {
		a.ink, err = uploadFrame(ctx, s, host.Ink)
	}
	if err == nil {
		err = s.Synchronize()
	}
	if err != nil {
		a.free()
		return nil, fmt.Errorf("the %v test pattern's art: %w", tp.ArtKey().Pattern, err)
	}
	return a, nil
}

// uploadFrame copies a host picture into a new device frame on s.
func uploadFrame(ctx *gpu.Context, s *gpu.Stream, h *frame.Frame) (*gpu.Frame, error) {
	d, err := gpu.NewFrame(ctx, h.Format, h.Width, h.Height)
	if err != nil {
		return nil, err
	}
	if err := d.Upload(s, h); err != nil {
		d.Release()
		return nil, err
	}
	return d, nil
}

func (a *deviceArt) free() {
	for _, f := range []*gpu.Frame{a.base, a.ink} {
		if f != nil {
			f.Release()
		}
	}
}
