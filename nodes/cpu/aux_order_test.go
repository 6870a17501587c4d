package cpu

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/show"
)

// canvasEvent is one call of a canvas: a picture queued (draw) or waited
// for, and the tick it was for.
type canvasEvent struct {
	canvas int
	wait   bool
	f      *frame.Frame
	tick   int64
}

// orderCanvas logs every Draw and Wait of the canvas it wraps.
type orderCanvas struct {
	show.Canvas[Frame]
	id  int
	log *canvasLog
}

type canvasLog struct {
	mu     sync.Mutex
	events []canvasEvent
	n      int // canvases made
}

func (c orderCanvas) Draw(dst Frame, layers []show.Layer[Frame]) error {
	c.log.mu.Lock()
	c.log.events = append(c.log.events, canvasEvent{canvas: c.id, f: dst, tick: -1})
	c.log.mu.Unlock()
	return c.Canvas.Draw(dst, layers)
}

// Wait logs the tick, which the compositor stamps between the two, on
// the wait and on its draw.
func (c orderCanvas) Wait(f Frame) error {
	c.log.mu.Lock()
	k := f.Metadata().PTS
	for i := len(c.log.events) - 1; i >= 0; i-- {
		if e := &c.log.events[i]; e.canvas == c.id && !e.wait && e.f == f && e.tick < 0 {
			e.tick = k
			break
		}
	}
	c.log.events = append(c.log.events, canvasEvent{canvas: c.id, wait: true, f: f, tick: k})
	c.log.mu.Unlock()
	return c.Canvas.Wait(f)
}

// TestAUXBusesOnALoopQueueEveryPictureBeforeWaiting: four AUX buses on
// the default loop, their canvases logged. For every tick all four drew,
// every bus queued its picture before any bus waited for its own: the
// loop's buses queue one after another and then wait, so the last bus's
// tick does not take every other bus's wait (on the GPU, a stream
// synchronized and the thread woken, in turn). Ticks next to one a bus
// did not draw (a machine that held the loop past a deadline) are left
// out.
func TestAUXBusesOnALoopQueueEveryPictureBeforeWaiting(t *testing.T) {
	const buses, ticks = 4, 30
	src := `show {
  name       = "aux-order"
  size       = "320x180"
  frame_rate = "30"
  format     = "nv12"
}
source "test_pattern" "p" {
  count   = 4
  pattern = "bars"
}
bus "aux" "mon" {
  count  = 4
  source = source.p[count.index]
}
output "null" "mon" {
  count = 4
  bus   = bus.mon[count.index]
}
`
	path := filepath.Join(t.TempDir(), "show.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p := compile(t, path, nil)
	for _, n := range p.Nodes {
		if n.Kind == "compositor" && n.Placement.Loop != "default" {
			t.Fatalf("%s is placed on %q, not the default loop: the test is about buses sharing a loop", n.ID, n.Placement.Loop)
		}
	}
	be := *Backend()
	cl := &canvasLog{}
	newCanvas := be.NewCanvas
	be.NewCanvas = func(f frame.Format, w, h int) (show.Canvas[Frame], error) {
		c, err := newCanvas(f, w, h)
		if err != nil {
			return nil, err
		}
		cl.mu.Lock()
		defer cl.mu.Unlock()
		cl.n++
		return orderCanvas{Canvas: c, id: cl.n, log: cl}, nil
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := show.Start(context.Background(), &be, p, nil, show.Options{BaseDir: filepath.Dir(path)}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	waitShow(t, s, "every bus drew its ticks", func(sum show.Summary) bool {
		for _, b := range sum.Buses {
			if b.Ticks < ticks {
				return false
			}
		}
		return true
	})
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.n != buses {
		t.Fatalf("%d canvases made, want one for each of the %d buses", cl.n, buses)
	}
	type span struct{ lastDraw, firstWait, draws, waits int }
	byTick := map[int64]*span{}
	drew := map[[2]int64]bool{} // (canvas, tick)
	for i, e := range cl.events {
		if e.tick < 0 {
			continue // drawn as the show stopped: never waited for
		}
		sp := byTick[e.tick]
		if sp == nil {
			sp = &span{lastDraw: -1, firstWait: len(cl.events)}
			byTick[e.tick] = sp
		}
		if e.wait {
			sp.waits++
			sp.firstWait = min(sp.firstWait, i)
		} else {
			sp.draws++
			sp.lastDraw = max(sp.lastDraw, i)
			drew[[2]int64{int64(e.canvas), e.tick}] = true
		}
	}
	all := func(k int64) bool {
		for c := 1; c <= buses; c++ {
			if !drew[[2]int64{int64(c), k}] {
				return false
			}
		}
		return true
	}
	checked := 0
	for k, sp := range byTick {
		if !all(k-1) || !all(k) || !all(k+1) {
			continue
		}
		checked++
		if sp.lastDraw > sp.firstWait {
			t.Errorf("tick %d: a bus waited for its picture (event %d) before another queued its own (event %d)", k, sp.firstWait, sp.lastDraw)
		}
	}
	if checked < ticks/2 {
		t.Errorf("%d ticks drawn by every bus with their neighbours, want at least %d", checked, ticks/2)
	}
}
