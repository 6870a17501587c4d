package cpu_test

import (
	"fmt"
	"github.com/onairhq/onair/nodes/cpu"
	"github.com/onairhq/onair/nodes/media"
	"os"
	"path/filepath"

	"github.com/onairhq/onair/frame"
)

// A bus's frame: two sources drawn side by side from pooled frames, the
// canvas written to a Y4M record, and the source frame numbers read back from
// the picture.
func Example() {
	rate := frame.Rational{Num: 30, Den: 1}
	pool, _ := frame.NewPool(frame.NV12, 640, 360, 8)
	cam, _ := media.NewTestPattern(media.TestPatternConfig{ID: "cam", StampID: 1, Pattern: media.Bars, Format: frame.NV12, Width: 640, Height: 360, Rate: rate})
	gfx, _ := media.NewTestPattern(media.TestPatternConfig{ID: "gfx", StampID: 2, Pattern: media.Ramp, Format: frame.NV12, Width: 640, Height: 360, Rate: rate})
	dir, _ := os.MkdirTemp("", "onair-example")
	defer os.RemoveAll(dir)
	rec, _ := media.CreateRecord(filepath.Join(dir, "pgm.y4m"), frame.NV12, 640, 360, rate)
	comp := cpu.NewCompositor()

	for i := 0; i < 3; i++ {
		a, _ := pool.Get()
		b, _ := pool.Get()
		cam.Next(a)
		gfx.Next(b)
		canvas, _ := pool.Get()
		comp.Render(canvas, []cpu.Layer{
			{Frame: a, Rect: frame.Rect{X: 0, Y: 90, W: 320, H: 180}, Opacity: 1},
			{Frame: b, Rect: frame.Rect{X: 320, Y: 90, W: 320, H: 180}, Fit: frame.Contain, Opacity: 1},
		})
		rec.Write(canvas)
		_, na, _ := media.ReadStamp(canvas, frame.Rect{X: 0, Y: 90, W: 320, H: 180})
		_, nb, _ := media.ReadStamp(canvas, frame.Rect{X: 320, Y: 90, W: 320, H: 180})
		fmt.Printf("program frame %d shows cam %d and gfx %d\n", i, na, nb)
		a.Release()
		b.Release()
		canvas.Release()
	}
	rec.Close()
	fmt.Println("frames allocated:", pool.Allocated(), "recorded:", rec.Frames())
	// Output:
	// program frame 0 shows cam 0 and gfx 0
	// program frame 1 shows cam 1 and gfx 1
	// program frame 2 shows cam 2 and gfx 2
	// frames allocated: 3 recorded: 3
}
