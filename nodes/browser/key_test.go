package browser_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// The keyed show: a scene of one flat, known, non-black colour (a raw file
// of it) with a browser graphic over the whole canvas.
const keyShow = `
show {
  name       = "key"
  size       = "320x180"
  frame_rate = "30"
}
source "raw_file" "bg" {
  path   = "bg.nv12"
  format = "nv12"
  size   = "320x180"
  loop   = true
}
source "browser" "gfx" {
  socket = "gfx.sock"
  %s
}
scene "gfx" {
  layer {
    source = source.bg
  }
  layer {
    source = source.gfx
  }
}
bus "program" "pgm" {
  scene = scene.gfx
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`

// sceneYCbCr is the scene's colour, 8-bit limited range.
var sceneYCbCr = [3]float64{150, 90, 170}

// The graphic: transparent everywhere but two blocks of one colour, one
// opaque and one at partial alpha, each on even pixels (whole chroma quads).
var (
	keyColour         = [3]byte{255, 128, 0} // R'G'B'
	opaqueBlock       = frame.Rect{X: 32, Y: 32, W: 64, H: 64}
	partialBlock      = frame.Rect{X: 160, Y: 32, W: 64, H: 64}
	partialAlpha byte = 96
)

// bt709 is R'G'B' (0..255, full range) to 8-bit limited-range Y'CbCr in
// real arithmetic: the reference the converter and compositor answer to.
func bt709(r, g, b float64) [3]float64 {
	const kr, kb = 0.2126, 0.0722
	kg := 1 - kr - kb
	y := kr*r + kg*g + kb*b
	return [3]float64{16 + 219*y/255, 128 + 224*(b-y)/(2*(1-kb))/255, 128 + 224*(r-y)/(2*(1-kr))/255}
}

// paintKeyed paints the graphic into a four-byte buffer (straight or
// premultiplied alpha, BGRA or RGBA).
func paintKeyed(px []byte, pic ipc.Picture) {
	ri, gi, bi := 0, 1, 2
	if pic.Format == ipc.BGRA {
		ri, bi = 2, 0
	}
	for y := 0; y < pic.Height; y++ {
		for x := 0; x < pic.Width; x++ {
			p := px[y*pic.Pitch+4*x : y*pic.Pitch+4*x+4]
			var a byte
			switch {
			case in(opaqueBlock, x, y):
				a = 255
			case in(partialBlock, x, y):
				a = partialAlpha
			}
			c := keyColour
			if pic.Alpha == ipc.AlphaPremultiplied {
				for i := range c {
					c[i] = byte((int(c[i])*int(a) + 127) / 255)
				}
			} else if a == 0 {
				c = [3]byte{255, 255, 255} // a straight transparent pixel's colour must not matter
			}
			p[ri], p[gi], p[bi], p[3] = c[0], c[1], c[2], a
		}
	}
}

func in(r frame.Rect, x, y int) bool { return x >= r.X && x < r.X+r.W && y >= r.Y && y < r.Y+r.H }

// TestBrowserGraphicIsKeyedOverTheScene feeds a graphic with alpha (memfd
// frames, as `onair producer` sends them) into a show on the CPU backend,
// over a scene of a known colour: the opaque block lands as its colour,
// the partial block as its colour blended with the scene by its alpha,
// both checked against the BT.709 arithmetic (within 1.5 steps: the
// converter's and the key's 8-bit rounding), and every transparent pixel
// shows the scene exactly. With key = "none" the graphic is composited
// over black instead, as before keying existed.
func TestBrowserGraphicIsKeyedOverTheScene(t *testing.T) {
	for _, c := range []struct {
		name  string
		pic   ipc.Picture
		attrs string
	}{
		{"premultiplied BGRA", ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, 320, 180), ""},
		{"straight RGBA", ipc.NewPicture(ipc.RGBA, ipc.AlphaStraight, 320, 180), ""},
		{"key none", ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, 320, 180), `key = "none"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			keyed := c.attrs == ""
			dir, start := compileShow(t, fmt.Sprintf(keyShow, c.attrs))
			bg, _ := frame.New(frame.NV12, 320, 180)
			bg.FillRect(0, 0, 320, 180, uint16(sceneYCbCr[0]), uint16(sceneYCbCr[1]), uint16(sceneYCbCr[2]))
			if err := os.WriteFile(filepath.Join(dir, "bg.nv12"), bg.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- sendKeyed(filepath.Join(dir, "gfx.sock"), c.pic, 30) }()
			s := start()
			select {
			case err := <-done:
				if err != nil {
					s.Stop()
					t.Fatal(err)
				}
			case <-time.After(2 * wait):
				s.Stop()
				t.Fatal("the producer never finished")
			}
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			frames := readRecord(t, filepath.Join(dir, "pgm.y4m"))
			col := bt709(float64(keyColour[0]), float64(keyColour[1]), float64(keyColour[2]))
			a := float64(partialAlpha) / 255
			under := sceneYCbCr // what a transparent pixel and the partial block's rest show
			if !keyed {
				under = [3]float64{16, 128, 128}
			}
			var want [2][3]float64 // the opaque and the partial block
			for i := range 3 {
				want[0][i] = col[i]
				want[1][i] = col[i]*a + under[i]*(1-a)
			}
			shown := 0
			for n, f := range frames {
				if !near(sample(f, 64, 64), want[0], 1.5) {
					continue // before the graphic's first frame: the scene alone
				}
				shown++
				for y := 0; y < f.Height; y++ {
					for x := 0; x < f.Width; x++ {
						got := sample(f, x, y)
						switch {
						case in(opaqueBlock, x, y):
							if !near(got, want[0], 1.5) {
								t.Fatalf("picture %d, (%d,%d) in the opaque block: %v, want %.1f", n, x, y, got, want[0])
							}
						case in(partialBlock, x, y):
							if !near(got, want[1], 1.5) {
								t.Fatalf("picture %d, (%d,%d) in the block at alpha %d: %v, want %.1f (the colour over %v)", n, x, y, partialAlpha, got, want[1], under)
							}
						default:
							if got != under {
								t.Fatalf("picture %d, (%d,%d), a transparent pixel: %v, want %v exactly", n, x, y, got, under)
							}
						}
					}
				}
			}
			if shown < 5 {
				t.Fatalf("%d of %d pictures show the graphic", shown, len(frames))
			}
		})
	}
}

// sendKeyed connects a producer of pic and sends n frames of the graphic at
// 30 fps.
func sendKeyed(socket string, pic ipc.Picture, n int) error {
	p, err := ipc.DialWait(ipc.ProducerConfig{Socket: socket, Picture: pic, Name: "keyed graphic"}, wait)
	if err != nil {
		return err
	}
	defer p.Close()
	tick := time.NewTicker(time.Second / 30) // a producer paints on its own clock
	defer tick.Stop()
	for seq := uint64(1); seq <= uint64(n); seq++ {
		<-tick.C
		b, err := p.Acquire(wait)
		if err != nil {
			return fmt.Errorf("frame %d: %w", seq, err)
		}
		paintKeyed(b.Pixels(), pic)
		if err := p.Send(b, seq, time.Now().UnixNano()); err != nil {
			return fmt.Errorf("frame %d: %w", seq, err)
		}
	}
	return nil
}

// sample is pixel (x, y)'s luma and its quad's chroma.
func sample(f *frame.Frame, x, y int) [3]float64 {
	c := f.Data[1][(y/2)*f.Pitch[1]+x&^1:]
	return [3]float64{float64(f.Data[0][y*f.Pitch[0]+x]), float64(c[0]), float64(c[1])}
}

func near(got, want [3]float64, tol float64) bool {
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol {
			return false
		}
	}
	return true
}
