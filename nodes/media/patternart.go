package media

import (
	"fmt"

	"github.com/onairhq/onair/frame"
)

// PatternArt is what every picture of a test pattern can be cut from, for
// a drawer that copies rectangles instead of painting (the CUDA backend
// keeps it in device memory and makes each frame with a few 2D copies,
// nothing drawn on the CPU). It is drawn once, by Draw, the stamp's levels
// and DrawFlash, so a cut picture is byte for byte Next's:
//
//   - Base is the background, larger than a picture: frame n's background
//     is the window of it that Window(n) gives. Bars and Ramp slide left 4
//     samples a frame, so Base is their first picture twice side by side;
//     Checker repeats every two squares, so Base is its first picture two
//     squares wider and higher; Solid's is its picture.
//   - Ink holds what is laid over the background: the stamp's white along
//     rows [0, band), its black along [band, 2 band) (band the rows the
//     stamp covers, chroma neutral) and the flash box where DrawFlash puts
//     it.
//
// The art depends only on the pattern, format, size and solid colour
// (ArtKey): sources that share them can share one.
type PatternArt struct {
	Base, Ink *frame.Frame
}

// ArtKey is what a pattern's art depends on.
type ArtKey struct {
	Pattern       Pattern
	Format        frame.Format
	Width, Height int
	Solid         [3]uint8
}

// ArtKey is the key of the source's art.
func (t *TestPattern) ArtKey() ArtKey {
	return ArtKey{t.cfg.Pattern, t.cfg.Format, t.cfg.Width, t.cfg.Height, t.cfg.Solid}
}

// Piece is one rectangle of a picture cut from the art: H rows of W
// samples of plane Plane (0 luma, 1 the interleaved chroma, whose rows
// hold W samples for W/2 pairs), from (SrcX, SrcY) of the art's Base or
// Ink to (X, Y) of the picture.
type Piece struct {
	Plane      int
	Ink        bool // from Ink, else from Base
	SrcX, SrcY int
	X, Y, W, H int
}

// NewArt draws the art of the source's pictures.
func (t *TestPattern) NewArt() (*PatternArt, error) {
	w, h := t.cfg.Width, t.cfg.Height
	bw, bh := t.baseSize()
	first, err := frame.New(t.cfg.Format, bw, bh)
	if err != nil {
		return nil, err
	}
	switch t.cfg.Pattern {
	case Bars, Ramp:
		// The first picture, then each of its rows again to its right.
		one, err := frame.New(t.cfg.Format, w, h)
		if err != nil {
			return nil, err
		}
		Draw(one, t.cfg.Pattern, 0, t.cfg.Solid, nil)
		row := w * t.cfg.Format.BytesPerSample()
		for p := 0; p < 2; p++ {
			for y := 0; y < h>>p; y++ {
				src := one.Data[p][y*one.Pitch[p] : y*one.Pitch[p]+row]
				dst := first.Data[p][y*first.Pitch[p]:]
				copy(dst[:row], src)
				copy(dst[row:2*row], src)
			}
		}
	default: // Solid: still; Checker: frame 0 is every frame shifted, at any size
		Draw(first, t.cfg.Pattern, 0, t.cfg.Solid, nil)
	}
	ink, err := frame.New(t.cfg.Format, w, h)
	if err != nil {
		return nil, err
	}
	band := stampBand(h)
	if box := flashRect(w, h); 2*band > box.Y {
		return nil, fmt.Errorf("test_pattern %q: at %dx%d the stamp's ink (%d rows) reaches the flash box (row %d)", t.cfg.ID, w, h, 2*band, box.Y)
	}
	black, white, neutral := stampLevels(t.cfg.Format)
	ink.FillRect(0, 0, w, band, white, neutral, neutral)
	ink.FillRect(0, band, w, band, black, neutral, neutral)
	DrawFlash(ink)
	return &PatternArt{Base: first, Ink: ink}, nil
}

// baseSize is the size of the art's Base.
func (t *TestPattern) baseSize() (int, int) {
	w, h := t.cfg.Width, t.cfg.Height
	switch t.cfg.Pattern {
	case Bars, Ramp:
		return 2 * w, h
	case Checker:
		return w + 2*checkerSquare, h + 2*checkerSquare
	}
	return w, h
}

// Window is where frame n's background lies in the art's Base: the
// sample and row of its top left corner in the luma plane and in the
// chroma plane.
func (t *TestPattern) Window(n int64) (lumaX, lumaY, chromaX, chromaY int) {
	switch t.cfg.Pattern {
	case Bars:
		s := slide(n, t.cfg.Width) // even: a whole pair of chroma samples
		return s, 0, s, 0
	case Ramp:
		return slide(n, t.cfg.Width), 0, 0, 0 // its chroma stands still
	case Checker:
		o := checkerOffset(n)
		return o, o, 0, 0 // its chroma is flat
	}
	return 0, 0, 0, 0
}

// Pieces appends the pieces of frame n's picture to dst and says how
// many of them come first: those first pieces do not overlap (a drawer
// may lay them all at once, in any order); the rest (the flash, on a
// frame that flashes) go over them.
func (t *TestPattern) Pieces(dst []Piece, n int64) ([]Piece, int) {
	w, h := t.cfg.Width, t.cfg.Height
	band := 0
	if !t.cfg.NoStamp {
		band = stampBand(h)
	}
	lx, ly, cx, cy := t.Window(n)
	dst = append(dst,
		Piece{Plane: 0, SrcX: lx, SrcY: ly + band, X: 0, Y: band, W: w, H: h - band},
		Piece{Plane: 1, SrcX: cx, SrcY: cy + band/2, X: 0, Y: band / 2, W: w, H: h/2 - band/2})
	if !t.cfg.NoStamp {
		bits := stampBits(t.cfg.StampID, uint32(n))
		for i := 0; i < stampBlocks; i++ {
			b := stampBlock(i, w, h)
			if b.Empty() {
				continue
			}
			sy := b.Y // white ink is where the block is; black is a band below
			if !stampWhite(bits, i) {
				sy += band
			}
			dst = append(dst, Piece{Plane: 0, Ink: true, SrcX: b.X, SrcY: sy, X: b.X, Y: b.Y, W: b.W, H: b.H})
		}
		dst = append(dst, Piece{Plane: 1, Ink: true, W: w, H: band / 2})
	}
	under := len(dst)
	if t.Flashes(n) {
		b := flashRect(w, h)
		dst = append(dst,
			Piece{Plane: 0, Ink: true, SrcX: b.X, SrcY: b.Y, X: b.X, Y: b.Y, W: b.W, H: b.H},
			Piece{Plane: 1, Ink: true, SrcX: b.X, SrcY: b.Y / 2, X: b.X, Y: b.Y / 2, W: b.W, H: b.H / 2})
	}
	return dst, under
}

// Cut lays pieces from the art onto dst in order, on the host: what a
// device's copies do, the tests' reference for them.
func (a *PatternArt) Cut(dst *frame.Frame, pieces []Piece) {
	bps := dst.Format.BytesPerSample()
	for _, p := range pieces {
		src := a.Base
		if p.Ink {
			src = a.Ink
		}
		for y := 0; y < p.H; y++ {
			s := src.Data[p.Plane][(p.SrcY+y)*src.Pitch[p.Plane]+p.SrcX*bps:]
			d := dst.Data[p.Plane][(p.Y+y)*dst.Pitch[p.Plane]+p.X*bps:]
			copy(d[:p.W*bps], s[:p.W*bps])
		}
	}
}
