package show

import (
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/playout"
	"github.com/onairhq/onair/runtime"
)

// What a source and a bus count before the show goes on air is the
// start's (a source that started first paces while the others start, and
// what it underran or dropped was never on air); from the moment the show
// goes on air every underrun, drop, missed deadline and repeat is counted
// as the show's. Driven by hand: the pacer's releases on a given clock,
// the bus's counts set as its compositor sets them.
func TestCountsRunFromTheMomentTheShowWentOnAir(t *testing.T) {
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
	now := int64(1_000)
	st := &SourceState{Address: "source.a"}
	bs := &BusState{Address: "bus.pgm", Kind: "aux", switcher: playout.NewSwitcher(-1), first: -1}
	b := &State{opts: Options{Clock: func() int64 { return now }},
		buses: map[string]*BusState{bs.Address: bs}, outputs: map[string]*OutputState{}}
	b.topo.Store(&topology{sources: map[string]*SourceState{st.Address: st}})
	r := &realtime[*frame.Frame]{b: b, st: st}
	decoded := func() {
		f, err := frame.New(frame.NV12, 16, 16)
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := in.Put(f, nil); !ok {
			t.Fatal("the decoder's edge is full")
		}
	}
	take := func() {
		f, ok := out.Get()
		if !ok {
			t.Fatal("nothing reached the bus")
		}
		f.Release()
	}
	counts := func(when string, want [6]uint64) {
		t.Helper()
		sum := b.Summary()
		s, bus := sum.Sources[0], sum.Buses[0]
		got := [6]uint64{s.Underruns, s.Drops, bus.Missed, s.StartUnderruns, s.StartDrops, bus.StartMissed}
		if got != want {
			t.Errorf("%s: underruns, drops, missed; start underruns, start drops, start missed = %v, want %v", when, got, want)
		}
	}

	// Starting: the first frame, taken; two releases with none; a frame
	// the bus cannot take (its edge still full); a deadline missed.
	decoded()
	r.release(ctx, releaseAt(now))
	take()
	r.release(ctx, releaseAt(now))
	r.release(ctx, releaseAt(now))
	decoded()
	r.release(ctx, releaseAt(now))
	decoded()
	r.release(ctx, releaseAt(now))
	bs.mu.Lock()
	bs.missed = 1
	bs.mu.Unlock()
	counts("before going on air", [6]uint64{0, 0, 0, 2, 1, 1})
	if sum := b.Summary(); sum.Start != nil {
		t.Errorf("the summary says the show went on air before it did: %+v", sum.Start)
	}

	now = 5_000
	b.markOnAir(&StartReport{StartedMs: 4, WaitedMs: 3, SourcesMs: 2, Slowest: st.Address, SlowestMs: 2})
	if at, ok := b.OnAir(); !ok || at != 5_000 {
		t.Errorf("OnAir() = %d, %v; want 5000, true", at, ok)
	}
	counts("going on air", [6]uint64{0, 0, 0, 2, 1, 1})

	take()
	r.release(ctx, releaseAt(now)) // no frame: on air, an underrun
	decoded()
	r.release(ctx, releaseAt(now))
	decoded()
	r.release(ctx, releaseAt(now)) // the bus has not taken the last: a drop
	bs.mu.Lock()
	bs.missed = 3
	bs.mu.Unlock()
	counts("on air", [6]uint64{1, 1, 2, 2, 1, 1})

	var text strings.Builder
	b.Summary().WriteText(&text)
	for _, want := range []string{
		"Start: on air after 4ms; waited 3ms for every part to be ready before going on air, 2ms of it for the sources (the slowest: source.a, 2ms)",
		"while starting, before going on air (not counted below): 2 source underruns, 1 source drops, 1 missed deadlines, 0 repeats",
		"1 drops, 1 underruns, 1 refused before going on air, 2 underruns before going on air",
		"2 missed deadlines",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the summary:\n%s\nwant a line with %q", text.String(), want)
		}
	}
}
