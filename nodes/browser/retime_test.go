package browser_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// patternShow is browserShow with the pattern producer's picture at the
// show's size, so that Program's pictures carry the producer's frame
// numbers unscaled (browser.PatternNumber).
const patternShow = `
show {
  name       = "gfx"
  size       = "320x180"
  frame_rate = "30"
}
source "browser" "gfx" {
  socket = "gfx.sock"
}
scene "gfx" {
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

// patternProducer connects to socket with a 320x180 pattern picture.
func patternProducer(t *testing.T, socket string) *ipc.Producer {
	p, err := ipc.DialWait(ipc.ProducerConfig{Socket: socket, Picture: ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, 320, 180), Name: "test pattern"}, wait)
	if err != nil {
		t.Error(err)
		return nil
	}
	return p
}

// sendPattern paints frame seq of the pattern whole and sends it.
func sendPattern(t *testing.T, p *ipc.Producer, seq uint64) bool {
	b, err := p.Acquire(wait)
	if err != nil {
		t.Errorf("frame %d: %v", seq, err)
		return false
	}
	pic := ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, 320, 180)
	browser.PaintPattern(b.Pixels(), pic.Pitch, pic.Width, pic.Height, frame.Rect{W: pic.Width, H: pic.Height}, seq)
	if err := p.Send(b, seq, time.Now().UnixNano()); err != nil {
		t.Errorf("frame %d: %v", seq, err)
		return false
	}
	return true
}

// TestProducerFasterThanTheShowIsRetimed is issue 27's second item: a
// producer faster than the show's rate had every frame stamped one slot
// after the last, so its pictures ran ahead of real time without bound
// (60 fps into 30: 12 s late after 24 s, memory growing) and nothing was
// counted. Here a producer sends 300 frames as fast as its buffers come
// back (hundreds a second), then stays connected: Program must reach the
// newest frame within a second of ticks after the burst, never going
// backwards, with the frames it passed over counted as early.
func TestProducerFasterThanTheShowIsRetimed(t *testing.T) {
	const frames = 300
	dir, start := compileShow(t, patternShow)
	socket := filepath.Join(dir, "gfx.sock")
	connected := make(chan *ipc.Producer, 1)
	go func() {
		p := patternProducer(t, socket)
		if p != nil && !sendPattern(t, p, 1) {
			p = nil
		}
		connected <- p
	}()
	s := start()
	defer s.Stop()
	p := <-connected
	if p == nil {
		t.FailNow()
	}
	defer p.Close()
	ticks := func() uint64 { return s.State.Summary().Buses[0].Ticks }
	before := ticks()
	for seq := uint64(2); seq <= frames; seq++ {
		if !sendPattern(t, p, seq) {
			t.FailNow()
		}
	}
	during := ticks() - before

	// Wait for Program to show the last frame (before the fix: ten
	// seconds of ticks, one frame each).
	rec := filepath.Join(dir, "pgm.y4m")
	var shown []uint32
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	deadline := time.After(wait)
	for len(shown) == 0 || shown[len(shown)-1] != frames {
		select {
		case <-poll.C:
		case <-deadline:
			t.Fatalf("Program never showed frame %d; it showed %d last", frames, shown[len(shown)-1])
		}
		shown = shown[:0]
		for _, f := range readRecord(t, rec) {
			shown = append(shown, browser.PatternNumber(f))
		}
	}
	first := 0
	for first < len(shown) && shown[first] == 0 {
		first++ // black before the first frame
	}
	for i := first + 1; i < len(shown); i++ {
		if shown[i] < shown[i-1] {
			t.Fatalf("Program showed frame %d after frame %d", shown[i], shown[i-1])
		}
	}
	var early float64
	s.Collect(func(x metrics.Sample) {
		if x.Name == "onair_browser_early_total" {
			early = x.Value
		}
	})
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	bs := sum.Sources[0].Browser
	// From the producer's first frame to its last, Program took as many
	// ticks as the burst lasted and a second more (a busy machine's
	// delays), not one tick a frame.
	took := len(shown) - first
	if took > int(during)+30 {
		t.Errorf("Program took %d ticks to go from frame 1 to frame %d, sent in %d ticks: the frames ran behind real time", took, frames, during)
	}
	if bs.Early == 0 || bs.Early >= frames {
		t.Errorf("%d of %d frames counted early, want some and not all", bs.Early, frames)
	}
	if early == 0 {
		t.Error("/metrics has no onair_browser_early_total, or it is 0")
	}
	t.Logf("%d frames sent in %d ticks; Program showed frame %d %d ticks after frame 1; %d early, %d paced, %d underruns",
		frames, during, frames, took, bs.Early, sum.Sources[0].Paced, sum.Sources[0].Underruns)
}
