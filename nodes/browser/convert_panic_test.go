package browser

import (
	goruntime "runtime"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// A panic in a band of a conversion (a frame whose luma plane is short of
// its rows) reaches the goroutine that asked for the conversion, as one
// *panics.Error, once every band has ended: that goroutine's recovery (the
// import's thread, or its handler on a loop) fails the node, and the band
// goroutines never take the process down.
func TestABandOfAConversionThatPanicsReachesItsCaller(t *testing.T) {
	if goruntime.NumCPU() < 2 {
		t.Skip("one core: the conversion runs in one band, on its caller")
	}
	pic := ipc.NewPicture(ipc.BGRA, ipc.AlphaOpaque, 1280, 720)
	src := make([]byte, pic.Size)
	dst, _ := frame.New(frame.NV12, 1280, 720)
	dst.Data[0] = dst.Data[0][:1280]
	before := panics.Recovered()
	var got any
	func() {
		defer func() { got = recover() }()
		ToCanvas(dst, src, pic)
	}()
	e, ok := got.(*panics.Error)
	if !ok || e.Where != "a band of a browser picture's conversion" {
		t.Fatalf("the caller got %v (%T), want the band's *panics.Error", got, got)
	}
	if n := panics.Recovered() - before; n < 1 {
		t.Errorf("%d panics counted", n)
	}
	// Whole frames convert as before, on the same goroutines' successors.
	whole, _ := frame.New(frame.NV12, 1280, 720)
	if err := ToCanvas(whole, src, pic); err != nil {
		t.Fatal(err)
	}
}
