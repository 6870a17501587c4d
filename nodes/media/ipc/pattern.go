package ipc

// RunPattern is a producer without a browser: a moving test picture painted
// straight into the shared buffers at a steady rate, for benchmarks and
// for machines without Chromium (the GPU machine). Each buffer's
// background is painted once; a frame then moves a bar and stamps its
// number in 16 boxes, so painting costs a few hundred kB a frame, not a
// whole picture, and the producer stays out of the measurement's way.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// PatternConfig configures RunPattern.
type PatternConfig struct {
	Socket        string
	Format        PixelFormat // RGBA, BGRA (opaque) or NV12
	Width, Height int
	// Period is the time between frames (1/rate).
	Period time.Duration
	// ID tints the background, so that sources can be told apart.
	ID int
	// Frames stops after that many frames sent; 0 runs until ctx ends.
	Frames int
	// Name names the producer in onair's log.
	Name string
	// OnConnect and OnLost are the Feed's.
	OnConnect func(*Producer)
	OnLost    func(error)
}

const (
	patternBar  = 32 // the moving bar's width in pixels
	patternStep = 8  // how far it moves a frame
	patternBox  = 16 // a counter box's side
)

// patternBuffer is what a buffer holds already: its background, and where
// its bar is.
type patternBuffer struct {
	painted bool
	bar     int
}

// RunPattern paints and sends frames until ctx ends or cfg.Frames are
// sent, connecting when onair listens and again when it comes back.
func RunPattern(ctx context.Context, cfg PatternConfig, st *FeedStats) error {
	if st == nil {
		st = &FeedStats{}
	}
	pic := NewPicture(cfg.Format, AlphaOpaque, cfg.Width, cfg.Height)
	if err := pic.Check(); err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	if cfg.Width < patternBar || cfg.Height < 2*patternBox {
		return fmt.Errorf("producer: a %dx%d test picture is too small: use at least %dx%d", cfg.Width, cfg.Height, patternBar, 2*patternBox)
	}
	if cfg.Period <= 0 {
		return fmt.Errorf("producer: frame period %v: must be positive", cfg.Period)
	}
	bufs := map[*ProducerBuffer]*patternBuffer{}
	feed := &Feed{Config: ProducerConfig{Socket: cfg.Socket, Picture: pic, Name: cfg.Name},
		OnConnect: func(p *Producer) {
			clear(bufs) // a new connection's buffers are new memory
			st.Connections.Add(1)
			if cfg.OnConnect != nil {
				cfg.OnConnect(p)
			}
		},
		OnLost: cfg.OnLost,
	}
	defer feed.Close()
	tick := time.NewTicker(cfg.Period)
	defer tick.Stop()
	var seq uint64 // frames painted: the wire's numbers have no gaps
	for cfg.Frames == 0 || st.Sent.Load() < uint64(cfg.Frames) {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		b, err := feed.Acquire(cfg.Period)
		if err != nil {
			var refused *RefusedError
			if errors.As(err, &refused) {
				return err
			}
			st.Dropped.Add(1)
			continue
		}
		pb := bufs[b]
		if pb == nil {
			pb = &patternBuffer{bar: -1}
			bufs[b] = pb
		}
		seq++
		paintPattern(pic, b.Pixels(), pb, cfg.ID, seq)
		st.Painted.Add(1)
		if err := feed.Send(b, seq, time.Now().UnixNano()); err != nil {
			st.Dropped.Add(1)
			continue
		}
		st.Sent.Add(1)
	}
	return nil
}

// paintPattern brings a buffer to frame seq: the background once, the bar
// moved from where the buffer had it, and seq's low 16 bits as boxes
// (white for 1) along the top-left.
func paintPattern(pic Picture, px []byte, pb *patternBuffer, id int, seq uint64) {
	if !pb.painted {
		for y := 0; y < pic.Height; y++ {
			patternFill(pic, px, id, 0, pic.Width, y, y+1, false)
		}
		pb.painted = true
	}
	if pb.bar >= 0 {
		patternFill(pic, px, id, pb.bar, pb.bar+patternBar, 0, pic.Height, false)
	}
	pb.bar = int(seq*patternStep) % (pic.Width - patternBar + 1)
	pb.bar &^= 1 // even, for NV12's chroma
	patternFill(pic, px, id, pb.bar, pb.bar+patternBar, 0, pic.Height, true)
	for bit := 0; bit < 16; bit++ {
		x0 := patternBox + bit*patternBox
		if x0+patternBox > pic.Width {
			break
		}
		patternFill(pic, px, id, x0, x0+patternBox, patternBox, 2*patternBox, seq>>bit&1 == 1)
	}
}

// patternFill paints columns [x0, x1) of rows [y0, y1) white, or with the
// background: a vertical ramp tinted by id.
func patternFill(pic Picture, px []byte, id, x0, x1, y0, y1 int, white bool) {
	for y := y0; y < y1; y++ {
		level := byte(32 + 160*y/pic.Height)
		if white {
			level = 235
		}
		switch pic.Format {
		case NV12:
			row := px[y*pic.Pitch:]
			for x := x0; x < x1; x++ {
				row[x] = level
			}
			if y%2 == 0 {
				c := px[pic.Offset1+(y/2)*pic.Pitch:]
				cb, cr := byte(128+(id*37)%64-32), byte(128+(id*53)%64-32)
				if white {
					cb, cr = 128, 128
				}
				for x := x0 &^ 1; x < x1; x += 2 {
					c[x], c[x+1] = cb, cr
				}
			}
		default: // RGBA, BGRA
			r, g, b := level, byte(int(level)*(id%3+1)/3), byte(255-int(level))
			if white {
				r, g, b = 255, 255, 255
			}
			if pic.Format == BGRA {
				r, b = b, r
			}
			row := px[y*pic.Pitch:]
			for x := x0; x < x1; x++ {
				row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = r, g, b, 255
			}
		}
	}
}
