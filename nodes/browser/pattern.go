package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// The test-pattern producer of `onair producer -pattern`: a moving,
// frame-numbered picture over the producer protocol, in memfds or (with
// nodes/cuda's painter) CUDA buffers, and a buffer pool that behaves like
// Chromium's (at most two idle, the rest destroyed) or keeps every buffer.
//
// The picture (BGRA, premultiplied alpha), frame n:
//   - 75 % colour bars over the top three quarters, a grey ramp below;
//   - a box, a sixth of the height square, grey 192 at alpha 192, moving 8
//     pixels a frame left to right at mid height;
//   - n's 32 low bits as a row of square blocks near the top left, bit 0
//     first, white for 1 and black for 0 (PatternNumber reads them back).
//
// A painter repaints only what changed in a buffer since it last held a
// picture (the old box, the new box, the number), so a producer of forty
// 1080p windows costs little CPU; a buffer painted for the first time is
// painted whole.

// PatternBlock is the side of one bit's block, in pixels, at width w.
func PatternBlock(w int) int { return max(2, min(16, w/36)&^1) }

// patternNumber is where the bits are: the row of blocks (as many of the
// 32 as a narrow picture has room for).
func patternNumber(w int) frame.Rect {
	b := PatternBlock(w)
	return frame.Rect{X: b, Y: b, W: min(32*b, (w-b)/b*b), H: b}
}

// PatternBits is how many bits the row holds at width w.
func PatternBits(w int) int { return patternNumber(w).W / PatternBlock(w) }

// patternBox is where frame seq's box is.
func patternBox(w, h int, seq uint64) frame.Rect {
	s := max(2, (h/6)&^1)
	travel := max(1, w-s)
	return frame.Rect{X: int(seq*8%uint64(travel)) &^ 1, Y: (h/2 - s/2) &^ 1, W: s, H: s}
}

var bars = [8][3]byte{{191, 191, 191}, {191, 191, 0}, {0, 191, 191}, {0, 191, 0}, {191, 0, 191}, {191, 0, 0}, {0, 0, 191}, {0, 0, 0}}

// PaintPattern paints rectangle r of frame seq of the w×h pattern into
// dst, whose first byte is r's top-left pixel and whose rows are pitch
// bytes apart, as BGRA with premultiplied alpha.
func PaintPattern(dst []byte, pitch, w, h int, r frame.Rect, seq uint64) {
	box, num := patternBox(w, h, seq), patternNumber(w)
	blk := PatternBlock(w)
	for y := r.Y; y < r.Y+r.H; y++ {
		row := dst[(y-r.Y)*pitch:]
		for x := r.X; x < r.X+r.W; x++ {
			var c [3]byte
			a := byte(255)
			switch {
			case in(num, x, y):
				if seq>>((x-num.X)/blk)&1 == 1 {
					c = [3]byte{255, 255, 255}
				}
			case in(box, x, y):
				c, a = [3]byte{192, 192, 192}, 192
			case y < h*3/4:
				c = bars[x*8/w]
			default:
				g := byte(x * 255 / max(1, w-1))
				c = [3]byte{g, g, g}
			}
			p := row[(x-r.X)*4 : (x-r.X)*4+4]
			p[0], p[1], p[2], p[3] = c[2], c[1], c[0], a
		}
	}
}

func in(r frame.Rect, x, y int) bool { return x >= r.X && x < r.X+r.W && y >= r.Y && y < r.Y+r.H }

// PatternNumber reads the frame number back from a converted picture (the
// pattern at the frame's size, not scaled): the low 32 bits of the frame
// number (fewer on a picture under 560 pixels wide: PatternBits), from the
// luma at each block's centre.
func PatternNumber(f *frame.Frame) uint32 {
	num, blk := patternNumber(f.Width), PatternBlock(f.Width)
	var n uint32
	for i := 0; i < PatternBits(f.Width); i++ {
		x, y := num.X+i*blk+blk/2, num.Y+blk/2
		var luma int
		if f.Format == frame.P010 {
			luma = int(f.Plane16(0)[y*f.Pitch[0]/2+x] >> 8)
		} else {
			luma = int(f.Data[0][y*f.Pitch[0]+x])
		}
		if luma > 128 {
			n |= 1 << i
		}
	}
	return n
}

// Painter puts pattern pictures into a producer's buffers.
type Painter struct {
	// Memory is the buffers' kind, announced in HELLO.
	Memory ipc.Memory
	// Alloc makes a buffer; nil makes memfds.
	Alloc func(size int) (ipc.BufferMemory, error)
	// Paint makes rectangles rs of buffer b hold frame seq of the pattern
	// and returns once the writes are complete (the GPU's included).
	Paint func(b *ipc.ProducerBuffer, pic ipc.Picture, rs []frame.Rect, seq uint64) error
}

// HostPainter paints memfd buffers in place.
var HostPainter = Painter{Paint: func(b *ipc.ProducerBuffer, pic ipc.Picture, rs []frame.Rect, seq uint64) error {
	px := b.Pixels()
	for _, r := range rs {
		PaintPattern(px[r.Y*pic.Pitch+r.X*4:], pic.Pitch, pic.Width, pic.Height, r, seq)
	}
	return nil
}}

// PatternConfig configures one pattern producer.
type PatternConfig struct {
	Socket        string
	Width, Height int
	Period        time.Duration // between frames; 0 is 1/30 s
	Frames        int           // stop after this many frames sent; 0: until the context ends
	// MaxIdle, when positive, destroys returned buffers beyond that many
	// idle, as Chromium's capture pool does (2); 0 keeps every buffer.
	MaxIdle int
	Painter Painter
	Name    string
	Log     *slog.Logger
}

// PatternStats counts what a pattern producer did, over all its
// connections.
type PatternStats struct {
	Sent, Dropped, Connections atomic.Uint64
	Created, Destroyed         atomic.Uint64 // buffers made and destroyed (the pool's churn)
}

// RunPattern streams the pattern to cfg.Socket until ctx ends or Frames
// were sent, connecting again whenever onair goes away. A refusal (another
// version, a picture or memory the source cannot take) ends it with the
// receiver's words.
func RunPattern(ctx context.Context, cfg PatternConfig, st *PatternStats) error {
	if cfg.Period <= 0 {
		cfg.Period = time.Second / 30
	}
	if cfg.Painter.Paint == nil {
		cfg.Painter = HostPainter
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pic := ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, cfg.Width, cfg.Height)
	pic.Memory = cfg.Painter.Memory
	if err := pic.Check(); err != nil {
		return fmt.Errorf("pattern producer: %w", err)
	}
	pcfg := ipc.ProducerConfig{Socket: cfg.Socket, Picture: pic, MaxIdle: cfg.MaxIdle, Name: cfg.Name, Alloc: cfg.Painter.Alloc}
	painted := map[*ipc.ProducerBuffer]uint64{} // the frame each buffer holds
	var p *ipc.Producer
	var base ipc.ProducerStats // the connection's counts already added
	account := func() {
		s := p.Stats()
		st.Created.Add(s.Created - base.Created)
		st.Destroyed.Add(s.Destroyed - base.Destroyed)
		base = s
	}
	hangUp := func() {
		account()
		p.Close()
		p, base = nil, ipc.ProducerStats{}
		clear(painted)
	}
	defer func() {
		if p != nil {
			hangUp()
		}
	}()
	tick := time.NewTicker(cfg.Period)
	defer tick.Stop()
	for seq := uint64(1); cfg.Frames == 0 || st.Sent.Load() < uint64(cfg.Frames); {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if p != nil {
			select {
			case <-p.Done():
				if refused := (*ipc.RefusedError)(nil); errors.As(p.Err(), &refused) {
					return fmt.Errorf("pattern producer %s: %w", cfg.Socket, refused)
				}
				log.Warn("onair went away; connecting again", "socket", cfg.Socket, "error", p.Err())
				hangUp()
			default:
			}
		}
		if p == nil {
			var err error
			if p, err = ipc.DialWait(pcfg, cfg.Period); err != nil {
				p = nil
				if refused := (*ipc.RefusedError)(nil); errors.As(err, &refused) {
					return err
				}
				st.Dropped.Add(1)
				continue
			}
			st.Connections.Add(1)
			log.Info("connected", "socket", cfg.Socket, "return_queue", p.Welcome().ReturnQueue, "frames_in_flight", p.Welcome().FramesInFlight)
		}
		b, err := p.Acquire(cfg.Period)
		if err != nil {
			st.Dropped.Add(1)
			continue
		}
		if err := cfg.Painter.Paint(b, pic, dirty(pic, painted[b], seq), seq); err != nil {
			p.Discard(b)
			return fmt.Errorf("pattern producer %s: painting frame %d: %w", cfg.Socket, seq, err)
		}
		if len(painted) > 4*ipc.MaxBuffers { // destroyed buffers' entries: start afresh
			clear(painted)
		}
		painted[b] = seq
		if err := p.Send(b, seq, time.Now().UnixNano()); err != nil {
			st.Dropped.Add(1)
			continue
		}
		st.Sent.Add(1)
		seq++
		account()
	}
	return nil
}

// dirty is what must be painted to turn a buffer holding frame old (0:
// nothing yet) into frame seq.
func dirty(pic ipc.Picture, old, seq uint64) []frame.Rect {
	if old == 0 {
		return []frame.Rect{{W: pic.Width, H: pic.Height}}
	}
	return []frame.Rect{patternBox(pic.Width, pic.Height, old), patternBox(pic.Width, pic.Height, seq), patternNumber(pic.Width)}
}
