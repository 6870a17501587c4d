package frame

import (
	"slices"
	"testing"
)

// A bus's frame carries its tick's mix in storage of its own: a copy of
// its metadata (a recording's picture, a transition's output) keeps the
// sound it was given when the frame is reused for the next tick, and after
// the first tick neither the bus's SetAudio nor the copy allocates.
func TestFrameSoundIsItsOwnAndReused(t *testing.T) {
	p, err := NewPool(NV12, 64, 36, 2)
	if err != nil {
		t.Fatal(err)
	}
	bus, _ := p.Get()
	out, _ := p.Get()
	mix := make([]float32, 3200)
	for i := range mix {
		mix[i] = 0.25
	}
	bus.SetAudio(mix)
	mix[0] = 1 // the mixer writes its block again for the next tick
	if bus.Audio[0] != 0.25 || len(bus.Audio) != 3200 {
		t.Fatalf("the frame's sound follows the mixer's block: %v, %d samples", bus.Audio[0], len(bus.Audio))
	}
	out.CopyMeta(bus)
	bus.Release() // back to the pool, and handed out again for the next tick
	next, _ := p.Get()
	if next != bus {
		t.Fatal("the pool handed out another frame: the test reads nothing")
	}
	if next.Audio != nil {
		t.Fatal("a frame from the pool carries the last tick's sound")
	}
	next.SetAudio(slices.Repeat([]float32{-0.5}, 3200))
	if out.Audio[0] != 0.25 || out.Audio[1] != 0.25 {
		t.Fatalf("the copy's sound changed when its source frame was reused: %v", out.Audio[:2])
	}
	if n := testing.AllocsPerRun(100, func() { next.SetAudio(mix); out.CopyMeta(next) }); n != 0 {
		t.Fatalf("%v allocations per tick", n)
	}
	next.SetAudio(nil)
	if next.Audio != nil {
		t.Fatal("silence is a nil block")
	}
}
