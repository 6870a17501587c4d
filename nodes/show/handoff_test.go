package show

import (
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/playout"
	"github.com/onairhq/onair/runtime"
)

// A simulated clock drives a bus's hand-off to four outputs: one with
// room, one whose queue frees 5 ms into the wait, one whose output has
// stalled, and one still starting (it took no frame yet), whose full queue
// gives up its oldest frame rather than hold the bus. The hand-off waits for the late one, gives up on the stalled one
// at its limit (half a period after the tick's deadline) and no later, and
// counts each output's waits, drops and longest wait; the frame goes to the
// two that took it and to no one else. A hand-off that starts past its
// limit (the draw itself ran late) waits for nothing.
func TestHandOffWaitIsBoundedAndCounted(t *testing.T) {
	const ms = int64(1_000_000)
	grid, err := playout.NewGrid(30, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	sched := playout.NewSchedule(grid, 2, 0)
	period := grid.Period()

	var now int64 // the simulated clock
	clock := func() int64 { return now }
	edge := func(name string, capacity int) *runtime.Edge[*frame.Frame] {
		e, err := runtime.NewEdge[*frame.Frame](runtime.EdgeConfig{From: "bus.pgm/compositor", To: name, Capacity: capacity, Policy: runtime.Drop})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Release)
		return e
	}
	newFrame := func() *frame.Frame {
		f, err := frame.New(frame.NV12, 16, 16)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	fast, late, stalled := edge("output.fast/output_null", 2), edge("output.late/output_null", 1), edge("output.stalled/output_null", 1)
	starting := edge("output.starting/output_null", 1) // its group has not started
	for _, e := range []*runtime.Edge[*frame.Frame]{fast, late, stalled, starting} {
		if ok, _ := e.TryPut(newFrame()); !ok {
			t.Fatal("cannot fill an edge")
		}
		if e == starting {
			continue
		}
		f, _ := e.Get() // the output took a tick: it is on air
		f.Release()
		if e != fast {
			e.TryPut(newFrame()) // the tick before, not taken yet
		}
	}
	// The outputs, on the simulated clock: the late one takes its queued
	// frame 5 ms after the wait began; the stalled one never does.
	var lateFreesAt int64
	waits := map[string]int{}
	wait := func(e *runtime.Edge[*frame.Frame], d int64, _ func() bool) {
		waits[e.Config().To]++
		if d <= 0 {
			t.Fatalf("asked to wait %d ns for %s", d, e.Config().To)
		}
		if e == late && now+d >= lateFreesAt {
			now = max(now, lateFreesAt)
			f, _ := e.Get()
			f.Release()
			return
		}
		now += d // nothing came: the whole wait passed
	}
	states := []*OutputState{{Address: "output.fast"}, {Address: "output.late"}, {Address: "output.stalled"}, {Address: "output.starting"}}
	outs := []*runtime.Edge[*frame.Frame]{fast, late, stalled, starting}

	const k = 7
	deadline := sched.Deadline(k)
	limit := sched.HandOffLimit(k)
	if limit != deadline+period/2 {
		t.Fatalf("hand-off limit %d, want half a period (%d) after the deadline %d", limit, period/2, deadline)
	}
	now = deadline + 3*ms // the draw took 3 ms
	lateFreesAt = now + 5*ms
	out := newFrame()
	drops := handOffTo(outs, states, out, limit, clock, wait, func() bool { return false })

	if drops != 1 {
		t.Errorf("%d drops, want 1 (the stalled output)", drops)
	}
	if now != limit {
		t.Errorf("the hand-off ended %.1f ms after the deadline, want exactly the limit, %.1f ms", float64(now-deadline)/1e6, float64(limit-deadline)/1e6)
	}
	for i, want := range []struct {
		waits, drops uint64
		maxNs        int64
	}{{0, 0, 0}, {1, 0, 5 * ms}, {1, 1, limit - deadline - 8*ms}, {0, 0, 0}} {
		st := states[i]
		if got := [2]uint64{st.HandOffWaits.Load(), st.HandOffDrops.Load()}; got != [2]uint64{want.waits, want.drops} {
			t.Errorf("%s: waits, drops = %v, want [%d %d]", st.Address, got, want.waits, want.drops)
		}
		if got := st.HandOffMaxNs.Load(); got != want.maxNs {
			t.Errorf("%s: longest wait %.2f ms, want %.2f ms", st.Address, float64(got)/1e6, float64(want.maxNs)/1e6)
		}
	}
	// The frame: one reference of ours, one each for fast, late and the
	// starting output, whose queue gave up its older frame for it.
	if r := out.Refs(); r != 4 {
		t.Errorf("the frame holds %d references after the hand-off, want 4 (ours, fast's, late's, starting's)", r)
	}
	if f, ok := starting.Get(); !ok || f != out || starting.Len() != 0 {
		t.Errorf("the starting output's queue holds %p (and %d more), want the tick's frame %p alone", f, starting.Len(), out)
	}
	if f, ok := late.Get(); !ok || f != out {
		t.Errorf("the late output's queue holds %p, want the tick's frame %p", f, out)
	}
	if f, ok := stalled.Get(); !ok || f == out {
		t.Error("the stalled output got the tick's frame, or lost the one it had")
	}

	// The next tick's draw ran past its limit: full queues are not waited
	// for at all, and the clock does not move.
	if ok, _ := late.TryPut(newFrame()); !ok {
		t.Fatal("cannot refill the late edge")
	}
	stalled.TryPut(newFrame())
	waits = map[string]int{}
	now = sched.HandOffLimit(k+1) + ms
	before := now
	if drops := handOffTo(outs, states, newFrame(), sched.HandOffLimit(k+1), clock, wait, func() bool { return false }); drops != 2 {
		t.Errorf("past the limit: %d drops, want 2", drops)
	}
	if now != before || len(waits) != 0 {
		t.Errorf("past the limit the hand-off waited (%v, %.1f ms)", waits, float64(now-before)/1e6)
	}
	if got := states[2].HandOffDrops.Load(); got != 2 {
		t.Errorf("the stalled output counts %d hand-off drops, want 2", got)
	}
}
