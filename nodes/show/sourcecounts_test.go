package show

import (
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/runtime"
)

// A source's fan-out toward a bus whose group has not started yet keeps
// the newest frames on the edge and gives up the oldest: those were never
// due on air and are counted apart (start drops), and the bus's first tick
// shows the source's latest frame. Once the bus has taken a frame, a
// refused frame is a drop. Every frame given up or refused goes back to its
// owner either way.
func TestSourceDropsBeforeTheBusStartedAreStartDrops(t *testing.T) {
	e, err := runtime.NewEdge[*frame.Frame](runtime.EdgeConfig{From: "source.a/pace", To: "bus.pgm/compositor", Capacity: 2, Policy: runtime.Drop})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Release()
	ctx := &runtime.NodeContext[*frame.Frame]{Outputs: []*runtime.Edge[*frame.Frame]{e}, Stats: &runtime.NodeStats{}}
	st := &SourceState{Address: "source.a"}
	var sent []*frame.Frame
	send := func(n int) {
		for range n {
			f, err := frame.New(frame.NV12, 16, 16)
			if err != nil {
				t.Fatal(err)
			}
			sent = append(sent, f)
			fanOut(ctx, st, f)
		}
	}

	send(5) // the bus is still starting: the last 2 queued, the first 3 given up
	if got := [2]uint64{st.Drops.Load(), st.StartDrops.Load()}; got != [2]uint64{0, 3} {
		t.Fatalf("before the bus took a frame: drops, start drops = %v, want [0 3]", got)
	}
	f, ok := e.Get() // the bus takes its first frame
	if !ok || f != sent[3] {
		t.Fatalf("the bus's first frame is %p, want the fourth sent (%p): the edge kept the wrong ones", f, sent[3])
	}
	f.Release()
	send(2) // one fits, one is refused on air
	if got := [2]uint64{st.Drops.Load(), st.StartDrops.Load()}; got != [2]uint64{1, 3} {
		t.Fatalf("after the bus took a frame: drops, start drops = %v, want [1 3]", got)
	}
	for i, f := range sent {
		want := int32(0)
		if i == 4 || i == 5 { // still queued
			want = 1
		}
		if r := f.Refs(); r != want {
			t.Errorf("frame %d holds %d references, want %d", i, r, want)
		}
	}

	// The summary a user reads at the end keeps them apart.
	var b strings.Builder
	Summary{Sources: []SourceSummary{{Address: st.Address, Paced: 7, Drops: st.Drops.Load(), StartDrops: st.StartDrops.Load()}}}.WriteText(&b)
	if want := "7 frames, 1 drops, 0 underruns, 3 refused before going on air"; !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nwant a line with %q", b.String(), want)
	}
}

// releaseAt is the pacing clock a test gives the pacer: every release at t.
type releaseAt int64

func (t releaseAt) Release() int64 { return int64(t) }

// The realtime pacer: releases that find no frame before the source's first
// are its start, not underruns; once it has delivered, each one is. A
// released frame carries the release time, and one its bus cannot take yet
// is a start drop until the bus has taken a frame, a drop after.
func TestRealtimePacerCountsFromTheSourcesFirstFrame(t *testing.T) {
	edge := func(name string) *runtime.Edge[*frame.Frame] {
		e, err := runtime.NewEdge[*frame.Frame](runtime.EdgeConfig{From: name, To: name + "'", Capacity: 1, Policy: runtime.Drop})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Release)
		return e
	}
	in, out := edge("decoder"), edge("pace")
	ctx := &runtime.NodeContext[*frame.Frame]{Inputs: []*runtime.Edge[*frame.Frame]{in}, Outputs: []*runtime.Edge[*frame.Frame]{out}, Stats: &runtime.NodeStats{}}
	st := &SourceState{Address: "source.a"}
	r := &realtime[*frame.Frame]{st: st}
	decoded := func() {
		f, err := frame.New(frame.NV12, 16, 16)
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := in.Put(f, nil); !ok {
			t.Fatal("the decoder's edge is full")
		}
	}
	counts := func(when string, paced, underruns, drops, startDrops uint64) {
		t.Helper()
		got := [4]uint64{st.Paced.Load(), st.Underrun.Load(), st.Drops.Load(), st.StartDrops.Load()}
		if want := [4]uint64{paced, underruns, drops, startDrops}; got != want {
			t.Errorf("%s: paced, underruns, drops, start drops = %v, want %v", when, got, want)
		}
	}

	for range 3 {
		r.release(ctx, releaseAt(1_000))
	}
	counts("three releases before the first frame", 0, 0, 0, 0)

	decoded()
	r.release(ctx, releaseAt(2_000))
	counts("the first frame", 1, 0, 0, 0)
	r.release(ctx, releaseAt(3_000))
	counts("a release after it with no frame", 1, 1, 0, 0)

	decoded()
	r.release(ctx, releaseAt(4_000)) // the bus has not started: its edge still holds the first
	counts("a frame the starting bus cannot take", 2, 1, 0, 1)

	f, ok := out.Get() // the bus takes its first frame
	if !ok {
		t.Fatal("nothing reached the bus")
	}
	if pts := f.PTS; pts != 2_000 {
		t.Errorf("the first frame reached the bus stamped %d, want its release time 2000", pts)
	}
	f.Release()
	decoded()
	r.release(ctx, releaseAt(5_000))
	decoded()
	r.release(ctx, releaseAt(6_000)) // on air now: a drop
	counts("on air", 4, 1, 1, 1)
}

// What a refused frame counts as: a start drop before the bus took a frame,
// a drop after, nothing while the show stops (the buses stop first; what
// the sources still pace was never going to air).
func TestRefusedFrameCounts(t *testing.T) {
	for _, tc := range []struct {
		stopping, taken   bool
		drops, startDrops uint64
	}{
		{false, false, 0, 1},
		{false, true, 1, 0},
		{true, false, 0, 0},
		{true, true, 0, 0},
	} {
		st := &SourceState{}
		st.refused(tc.stopping, tc.taken)
		if got := [2]uint64{st.Drops.Load(), st.StartDrops.Load()}; got != [2]uint64{tc.drops, tc.startDrops} {
			t.Errorf("stopping %v, bus took a frame %v: drops, start drops = %v, want [%d %d]", tc.stopping, tc.taken, got, tc.drops, tc.startDrops)
		}
	}
}
