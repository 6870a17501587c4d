package media

import (
	"fmt"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
)

// Pattern is what a test_pattern source draws.
type Pattern uint8

const (
	// Bars: eight 75 % colour bars (BT.709, limited range) sliding left.
	Bars Pattern = iota
	// Ramp: a luma ramp sliding left over horizontal and vertical chroma ramps.
	Ramp
	// Solid: one flat colour (TestPatternConfig.Solid).
	Solid
	// Checker: 32-pixel black and white squares moving diagonally.
	Checker
)

// ParsePattern maps "bars", "ramp", "solid" and "checker" to a Pattern.
func ParsePattern(s string) (Pattern, error) {
	switch s {
	case "bars", "":
		return Bars, nil
	case "ramp":
		return Ramp, nil
	case "solid":
		return Solid, nil
	case "checker":
		return Checker, nil
	}
	return 0, fmt.Errorf("unknown pattern %q: use bars, ramp, solid or checker", s)
}

func (p Pattern) String() string { return [...]string{"bars", "ramp", "solid", "checker"}[p] }

// 75 % bars in 8-bit BT.709 limited range: white, yellow, cyan, green,
// magenta, red, blue, black.
var bars709 = [8][3]int32{
	{180, 128, 128}, {168, 44, 136}, {145, 147, 44}, {134, 63, 52},
	{63, 193, 204}, {51, 109, 212}, {28, 212, 120}, {16, 128, 128},
}

// TestPatternConfig describes a test_pattern source.
type TestPatternConfig struct {
	ID      string // the source id stamped on frame metadata
	StampID uint16 // the number drawn into the picture with the frame number
	Pattern Pattern
	Format  frame.Format
	Width   int
	Height  int
	Rate    frame.Rational // frames per second; timestamps count in 1/Rate
	Colour  frame.Colour   // tags; zero: BT709
	Solid   [3]uint8       // Y, Cb, Cr (8-bit scale) for Solid
	NoStamp bool           // leave the frame-number stamp out
	// Tone, when set, is the sound each frame carries (frame.Meta.Audio):
	// the line-up tone, with its blip on the frames that flash. A pattern
	// with a tone flashes: once a second (audio.Flashes) the frame carries
	// a white box under its stamp. Nil: silent, and no flash.
	Tone *audio.Tone
}

// TestPattern draws moving, frame-numbered pictures. Frame n carries PTS n
// in a time base of 1/Rate, and its source id and number are drawn into the
// top of the picture where ReadStamp can find them again.
type TestPattern struct {
	cfg TestPatternConfig
	n   int64
	row []int32 // scratch: one row of 10-bit samples
	// blocks are the tone's blocks already made, by where in the tone's
	// cycle they start, their length and whether they blip: a tone is
	// periodic, so a show's frames share a few immutable blocks.
	blocks map[toneKey][]float32
}

type toneKey struct {
	phase int64
	count int
	blip  bool
}

// NewTestPattern checks cfg and returns the source at frame 0.
func NewTestPattern(cfg TestPatternConfig) (*TestPattern, error) {
	if cfg.Format == 0 {
		cfg.Format = frame.NV12
	}
	if cfg.Rate.Num <= 0 || cfg.Rate.Den <= 0 {
		return nil, fmt.Errorf("test_pattern %q: frame rate %v must be positive", cfg.ID, cfg.Rate)
	}
	if cfg.Width < 32 || cfg.Height < 32 || cfg.Width%2 != 0 || cfg.Height%2 != 0 {
		return nil, fmt.Errorf("test_pattern %q: size %dx%d must be even and at least 32x32", cfg.ID, cfg.Width, cfg.Height)
	}
	if cfg.Colour == (frame.Colour{}) {
		cfg.Colour = frame.BT709
	}
	return &TestPattern{cfg: cfg, row: make([]int32, cfg.Width)}, nil
}

// Format, Width and Height describe the frames Next fills.
func (t *TestPattern) Format() frame.Format { return t.cfg.Format }
func (t *TestPattern) Width() int           { return t.cfg.Width }
func (t *TestPattern) Height() int          { return t.cfg.Height }

// Rate is the source's frame rate.
func (t *TestPattern) Rate() frame.Rational { return t.cfg.Rate }

// SetNext makes frame n the next one Next draws.
func (t *TestPattern) SetNext(n int64) { t.n = n }

// Next draws the next frame into dst (of the source's format and size).
func (t *TestPattern) Next(dst *frame.Frame) error {
	if dst.Format != t.cfg.Format || dst.Width != t.cfg.Width || dst.Height != t.cfg.Height {
		return fmt.Errorf("test_pattern %q: frame is %v %dx%d, want %v %dx%d", t.cfg.ID, dst.Format, dst.Width, dst.Height, t.cfg.Format, t.cfg.Width, t.cfg.Height)
	}
	n := t.NextMeta(&dst.Meta)
	Draw(dst, t.cfg.Pattern, n, t.cfg.Solid, t.row)
	if !t.cfg.NoStamp {
		DrawStamp(dst, t.cfg.StampID, uint32(n))
	}
	if t.Flashes(n) {
		DrawFlash(dst)
	}
	return nil
}

// NextMeta numbers the next frame and stamps m as Next stamps its frame
// (PTS, time base, colour tags, source, frame number and the tone's
// block), without drawing: a drawer of its own (PatternArt's pieces)
// takes the number it returns.
func (t *TestPattern) NextMeta(m *frame.Meta) int64 {
	n := t.n
	t.n++
	m.Audio = nil
	if t.cfg.Tone != nil {
		m.Audio = t.toneBlock(n)
	}
	m.PTS, m.TimeBase = n, t.cfg.Rate.Inverse()
	m.Colour, m.Source, m.SourceFrame = t.cfg.Colour, t.cfg.ID, n
	return n
}

// Flashes reports whether frame n carries the flash: a pattern with a
// tone flashes with the tone's blip.
func (t *TestPattern) Flashes(n int64) bool {
	return t.cfg.Tone != nil && audio.Flashes(n, int64(t.cfg.Rate.Num), int64(t.cfg.Rate.Den))
}

// toneBlock is frame n's block of the tone, from the cache when a frame
// at the same point of the tone's cycle made one.
func (t *TestPattern) toneBlock(n int64) []float32 {
	tone := t.cfg.Tone
	period := int64(0) // samples in the tone's cycle, when whole
	if hz := int64(tone.Hz); float64(hz) == tone.Hz && hz > 0 {
		period = audio.Rate / gcd(audio.Rate, hz)
	}
	if period == 0 {
		return tone.Block(nil, n)
	}
	k := toneKey{tone.Cadence.Start(n) % period, tone.Cadence.Samples(n), audio.Flashes(n, tone.Cadence.Num, tone.Cadence.Den)}
	if b, ok := t.blocks[k]; ok {
		return b
	}
	b := tone.Block(nil, n)
	if t.blocks == nil {
		t.blocks = map[toneKey][]float32{}
	}
	if len(t.blocks) < 256 {
		t.blocks[k] = b
	}
	return b
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// FlashBox is where a flashing frame's white box lies, as a fraction of
// the picture: a quarter of its width and height, centred.
var FlashBox = [4]float64{0.375, 0.375, 0.25, 0.25}

// DrawFlash paints the flash: a white (peak luma, neutral chroma) box over
// FlashBox.
func DrawFlash(dst *frame.Frame) {
	box := flashRect(dst.Width, dst.Height)
	x0, y0, w, h := box.X, box.Y, box.W, box.H
	bps := dst.Format.BytesPerSample()
	put := func(row []byte, x int, v int) {
		if bps == 1 {
			row[x] = byte(v)
			return
		}
		v <<= 8 // P010: the 10 bits at the top of 16
		row[2*x], row[2*x+1] = byte(v), byte(v>>8)
	}
	for y := y0; y < y0+h; y++ {
		row := dst.Data[0][y*dst.Pitch[0]:]
		for x := x0; x < x0+w; x++ {
			put(row, x, 235)
		}
	}
	for y := y0 / 2; y < (y0+h)/2; y++ {
		row := dst.Data[1][y*dst.Pitch[1]:]
		for x := x0; x < x0+w; x++ {
			put(row, x, 128)
		}
	}
}

// flashRect is FlashBox in a w x h picture, on even samples.
func flashRect(w, h int) frame.Rect {
	return frame.Rect{X: int(FlashBox[0]*float64(w)) &^ 1, Y: int(FlashBox[1]*float64(h)) &^ 1,
		W: int(FlashBox[2]*float64(w)) &^ 1, H: int(FlashBox[3]*float64(h)) &^ 1}
}

// Draw paints pattern p at frame number n over the whole of dst. solid is
// the Y, Cb, Cr of Solid. row is optional scratch of dst.Width entries.
func Draw(dst *frame.Frame, p Pattern, n int64, solid [3]uint8, row []int32) {
	w, h := dst.Width, dst.Height
	if len(row) < w {
		row = make([]int32, w)
	}
	row = row[:w]
	shift := slide(n, w)
	// Luma: every pattern but Checker is the same on every row.
	switch p {
	case Bars:
		for x := range row {
			row[x] = bars709[((x+shift)%w)*8/w][0] << 2
		}
		fillRows(dst, 0, 0, h, row)
		for x := 0; x < w/2; x++ {
			b := bars709[((2*x+shift)%w)*8/w]
			row[2*x], row[2*x+1] = b[1]<<2, b[2]<<2
		}
		fillRows(dst, 1, 0, h/2, row)
	case Ramp:
		for x := range row {
			row[x] = 64 + int32((x+shift)%w)*(940-64)/int32(w-1)
		}
		fillRows(dst, 0, 0, h, row)
		for y := 0; y < h/2; y++ {
			for x := 0; x < w/2; x++ {
				row[2*x] = 64 + int32(y)*(960-64)/int32(h/2)
				row[2*x+1] = 64 + int32(x)*(960-64)/int32(w/2)
			}
			fillRows(dst, 1, y, y+1, row)
		}
	case Solid:
		for x := range row {
			row[x] = int32(solid[0]) << 2
		}
		fillRows(dst, 0, 0, h, row)
		for x := 0; x < w/2; x++ {
			row[2*x], row[2*x+1] = int32(solid[1])<<2, int32(solid[2])<<2
		}
		fillRows(dst, 1, 0, h/2, row)
	case Checker:
		off := checkerOffset(n)
		for y := 0; y < h; y++ {
			for x := range row {
				if ((x+off)/checkerSquare+(y+off)/checkerSquare)%2 == 0 {
					row[x] = 940
				} else {
					row[x] = 64
				}
			}
			fillRows(dst, 0, y, y+1, row)
		}
		for x := range row {
			row[x] = 512
		}
		fillRows(dst, 1, 0, h/2, row)
	}
}

// slide is how far Bars and Ramp (and Bars' chroma) have moved left at
// frame n in a picture w samples wide: 4 samples a frame, even.
func slide(n int64, w int) int { return int(n*4) % w }

// Checker's squares are checkerSquare samples on a side; the pattern moves
// 2 samples right and down a frame and repeats every two squares.
const checkerSquare = 32

func checkerOffset(n int64) int { return int(n*2) % (2 * checkerSquare) }

// fillRows stores row (10-bit values) into rows [y0, y1) of plane p.
func fillRows(dst *frame.Frame, p, y0, y1 int, row []int32) {
	w := dst.Width
	if dst.Format == frame.P010 {
		pl, pitch := dst.Plane16(p), dst.Pitch[p]/2
		first := pl[y0*pitch : y0*pitch+w]
		for x := range first {
			first[x] = uint16(row[x]) << 6
		}
		for y := y0 + 1; y < y1; y++ {
			copy(pl[y*pitch:y*pitch+w], first)
		}
		return
	}
	pl, pitch := dst.Data[p], dst.Pitch[p]
	first := pl[y0*pitch : y0*pitch+w]
	for x := range first {
		first[x] = uint8(row[x] >> 2)
	}
	for y := y0 + 1; y < y1; y++ {
		copy(pl[y*pitch:y*pitch+w], first)
	}
}

// The stamp: 48 bits (16 of source id, 24 of frame number, 8 of check) as
// black and white blocks, stampCols across and stampRows down, each block
// Width/stampCols by Height/stampBlockRows pixels, along the top of the
// picture. Blocks that large survive scaling to a quarter and blending.
const (
	stampCols      = 16
	stampRows      = 3
	stampBlockRows = 16 // block height is Height/16
)

func stampBits(id uint16, n uint32) uint64 {
	v := uint64(id)<<24 | uint64(n&0xffffff)
	return v<<8 | uint64(stampCheck(v))
}

// stampCheck is a small checksum that tells a stamp from random picture.
func stampCheck(v uint64) uint8 {
	c := uint8(0xa5)
	for i := 0; i < 5; i++ {
		c = c*31 + uint8(v>>(8*i))
	}
	return c
}

// DrawStamp draws id and the low 24 bits of frame number n into the top of
// dst as large black and white blocks (chroma neutral).
func DrawStamp(dst *frame.Frame, id uint16, n uint32) {
	bits := stampBits(id, n)
	black, white, neutral := stampLevels(dst.Format)
	for i := 0; i < stampBlocks; i++ {
		yv := black
		if stampWhite(bits, i) {
			yv = white
		}
		b := stampBlock(i, dst.Width, dst.Height)
		dst.FillRect(b.X, b.Y, b.W, b.H, yv, neutral, neutral)
	}
}

const stampBlocks = stampCols * stampRows

// stampWhite reports whether block i of a stamp of bits is white.
func stampWhite(bits uint64, i int) bool { return bits>>(stampBlocks-1-i)&1 == 1 }

// stampLevels are the stamp's black and white luma and its chroma, as
// samples of format f.
func stampLevels(f frame.Format) (black, white, neutral uint16) {
	if f == frame.P010 {
		return 64 << 6, 940 << 6, 512 << 6
	}
	return 16, 235, 128
}

// stampBlock is where block i of the stamp lies in a w x h picture (even
// samples: the blocks tile the band along the top, stampBand rows).
func stampBlock(i, w, h int) frame.Rect {
	r, c := i/stampCols, i%stampCols
	x0, x1 := c*w/stampCols&^1, (c+1)*w/stampCols&^1
	y0, y1 := r*h/stampBlockRows&^1, (r+1)*h/stampBlockRows&^1
	return frame.Rect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
}

// stampBand is the rows along the top of a picture h rows high the stamp
// covers.
func stampBand(h int) int { return stampRows * h / stampBlockRows &^ 1 }

// ReadStamp reads the id and frame number DrawStamp drew, from a picture
// that now covers rect of f (scaled, possibly blended). It samples the middle
// of each block, so it tolerates bilinear scaling down to a quarter of the
// original size. ok is false when the check does not match (no stamp there).
func ReadStamp(f *frame.Frame, rect frame.Rect) (id uint16, n uint32, ok bool) {
	var bits uint64
	bw, bh := float64(rect.W)/stampCols, float64(rect.H)/stampBlockRows
	for i := 0; i < stampCols*stampRows; i++ {
		r, c := i/stampCols, i%stampCols
		cx, cy := rect.X+int((float64(c)+0.5)*bw), rect.Y+int((float64(r)+0.5)*bh)
		rx, ry := max(int(bw/6), 0), max(int(bh/6), 0)
		var sum, cnt int
		for y := cy - ry; y <= cy+ry; y++ {
			for x := cx - rx; x <= cx+rx; x++ {
				if x < 0 || y < 0 || x >= f.Width || y >= f.Height {
					continue
				}
				sum += lumaAt(f, x, y)
				cnt++
			}
		}
		bits <<= 1
		if cnt > 0 && sum/cnt > 125 {
			bits |= 1
		}
	}
	v := bits >> 8
	if uint8(bits) != stampCheck(v) {
		return 0, 0, false
	}
	return uint16(v >> 24), uint32(v & 0xffffff), true
}

// lumaAt returns the luma at (x, y) on an 8-bit scale.
func lumaAt(f *frame.Frame, x, y int) int {
	if f.Format == frame.P010 {
		return int(f.Plane16(0)[y*f.Pitch[0]/2+x] >> 8)
	}
	return int(f.Data[0][y*f.Pitch[0]+x])
}
