package cpu

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/show"
)

// gate holds the pictures of one canvas undrawn, as a GPU stream behind
// other work holds a bus's picture, until the test lets them go.
type gate struct {
	mu   sync.Mutex
	cond *sync.Cond
	held string         // the bus whose pictures are not drawn; "": none
	bus  map[int]string // the bus each canvas draws, read off its pictures
	n    int            // canvases made
}

// gatedCanvas is a CPU canvas that says, as the GPU's does, whether a
// picture is drawn (show.PollsDrawn) and makes Wait wait for it: a
// picture of the held bus is drawn only once the gate lets it go.
type gatedCanvas struct {
	show.Canvas[Frame]
	id int
	g  *gate
}

// holds reads f's bus and says whether the gate holds it; g.mu is held.
func (c gatedCanvas) holds(f Frame) bool {
	c.g.bus[c.id] = f.Metadata().Source
	return c.g.held != "" && c.g.held == c.g.bus[c.id]
}

func (c gatedCanvas) Drawn(f Frame) (bool, error) {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	return !c.holds(f), nil
}

func (c gatedCanvas) Wait(f Frame) error {
	c.g.mu.Lock()
	for c.holds(f) {
		c.g.cond.Wait()
	}
	c.g.mu.Unlock()
	return c.Canvas.Wait(f)
}

// TestALateAUXPictureHoldsNoOtherBusOnItsLoop: four AUX buses on the
// default loop, on canvases that queue their work as the GPU's do. While
// one bus's pictures are not drawn (its stream behind other work), the
// other three go on committing their ticks, each as its own picture is
// done, rather than waiting behind the late one in turn (as every AUX bus
// of the seeds' show took the longest wait of any bus on the loop before
// it); the late bus commits nothing meanwhile, counts the deadlines it
// missed, and goes on once its pictures are drawn.
func TestALateAUXPictureHoldsNoOtherBusOnItsLoop(t *testing.T) {
	const aux = 4
	p := compile(t, writeShow(t, auxShow(aux)), nil)
	for _, n := range p.Nodes {
		if n.Kind == "compositor" && strings.HasPrefix(n.Address, "bus.mon[") && n.Placement.Loop != "default" {
			t.Fatalf("%s is placed on %q, not the default loop: the test is about buses sharing a loop", n.ID, n.Placement.Loop)
		}
	}
	g := &gate{bus: map[int]string{}}
	g.cond = sync.NewCond(&g.mu)
	be := *Backend()
	newCanvas := be.NewCanvas
	be.NewCanvas = func(f frame.Format, w, h int) (show.Canvas[Frame], error) {
		c, err := newCanvas(f, w, h)
		if err != nil {
			return nil, err
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.n++
		return gatedCanvas{Canvas: c, id: g.n, g: g}, nil
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dir, _ := showDirs.Load(p)
	s, err := show.Start(context.Background(), &be, p, nil, show.Options{BaseDir: dir.(string)}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	release := func() {
		g.mu.Lock()
		g.held = ""
		g.cond.Broadcast()
		g.mu.Unlock()
	}
	defer release() // before Stop: a Wait held would hold the stop

	waitShow(t, s, "every bus on air", func(sum show.Summary) bool {
		for _, b := range sum.Buses {
			if b.Ticks < 5 {
				return false
			}
		}
		return true
	})
	const late = "bus.mon[0]"
	g.mu.Lock()
	g.held = late
	g.mu.Unlock()
	before := s.State.Summary()
	others := 0
	waitShow(t, s, "the other AUX buses' next 30 ticks while "+late+"'s pictures are held", func(sum show.Summary) bool {
		for _, b := range sum.Buses {
			if strings.HasPrefix(b.Address, "bus.mon[") && b.Address != late && b.Ticks < busOf(before, b.Address).Ticks+30 {
				return false
			}
		}
		return true
	})
	during := s.State.Summary()
	for _, b := range during.Buses {
		if strings.HasPrefix(b.Address, "bus.mon[") && b.Address != late {
			others++
		}
	}
	if others != aux-1 {
		t.Fatalf("%d AUX buses besides %s in the summary, want %d", others, late, aux-1)
	}
	// One tick may have been found drawn just before the hold.
	if got, was := busOf(during, late).Ticks, busOf(before, late).Ticks; got > was+1 {
		t.Errorf("%s committed %d ticks while its pictures were held, want at most 1", late, got-was)
	}
	release()
	resumed := waitShow(t, s, late+" drawing again", func(sum show.Summary) bool {
		return busOf(sum, late).Ticks >= busOf(during, late).Ticks+10
	})
	if m := busOf(resumed, late).Missed; m == 0 {
		t.Errorf("%s counted no missed deadline after its pictures were held for 30 ticks", late)
	}
}
