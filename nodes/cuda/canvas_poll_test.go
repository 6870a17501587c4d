package cuda

import (
	"testing"
	"time"

	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/show"
)

// TestCanvasSaysWithoutWaitingWhetherItsPictureIsDrawn: the GPU's canvas
// is show.PollsDrawn, so an AUX bus on a loop is handed off once its own
// picture is drawn, never waited for. While the canvas's stream is busy
// (a kernel that runs a second, queued after the picture) Drawn answers
// false at once, where a wait would have returned true a second later;
// once Wait returned it answers true.
func TestCanvasSaysWithoutWaitingWhetherItsPictureIsDrawn(t *testing.T) {
	if _, err := gpu.Probe(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	c, err := gpu.NewContext(gpu.SchedBlockingSync)
	if err != nil {
		t.Fatal(err)
	}
	b := newBackend(c)
	defer b.close()
	cv, err := b.newCanvas(frame.NV12, 1920, 1080)
	if err != nil {
		t.Fatal(err)
	}
	defer cv.Close()
	polls, ok := cv.(show.PollsDrawn[Frame])
	if !ok {
		t.Fatalf("the GPU's canvas (%T) is not show.PollsDrawn: AUX buses on a loop would wait for each picture in turn", cv)
	}
	dst, err := cv.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Release()
	if err := cv.Draw(dst, nil); err != nil {
		t.Fatal(err)
	}
	if err := cv.(*canvas).stream.Busy(time.Second); err != nil {
		t.Fatal(err)
	}
	if done, err := polls.Drawn(dst); err != nil || done {
		t.Fatalf("Drawn with a second of work queued after the picture: %v, %v; want false, nil (answered without waiting)", done, err)
	}
	if err := cv.Wait(dst); err != nil {
		t.Fatal(err)
	}
	if done, err := polls.Drawn(dst); err != nil || !done {
		t.Fatalf("Drawn after Wait: %v, %v; want true, nil", done, err)
	}
}
