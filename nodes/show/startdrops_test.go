package show

import (
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/runtime"
)

// A source's fan-out toward a bus whose group has not started yet fills the
// edge and has the rest refused: those frames were never due on air and are
// counted apart (start drops). Once the bus has taken a frame, a refused
// frame is a drop. Every refused frame goes back to its owner either way.
func TestSourceDropsBeforeTheBusStartedAreStartDrops(t *testing.T) {
	e, err := runtime.NewEdge[*frame.Frame](runtime.EdgeConfig{From: "source.a/pace", To: "bus.pgm/compositor", Capacity: 2, Policy: runtime.Drop})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Release()
	ctx := &runtime.NodeContext[*frame.Frame]{Outputs: []*runtime.Edge[*frame.Frame]{e}, Stats: &runtime.NodeStats{}}
	st := &SourceState{Address: "source.a"}
	newFrame := func() *frame.Frame {
		f, err := frame.New(frame.NV12, 16, 16)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	var refused []*frame.Frame
	send := func(n int) {
		for range n {
			f := newFrame()
			full := e.Len() == e.Config().Capacity
			fanOut(ctx, st, f)
			if full {
				refused = append(refused, f)
			}
		}
	}

	send(5) // the bus is still starting: 2 queued, 3 refused
	if got := [2]uint64{st.Drops.Load(), st.StartDrops.Load()}; got != [2]uint64{0, 3} {
		t.Fatalf("before the bus took a frame: drops, start drops = %v, want [0 3]", got)
	}
	if _, ok := e.Get(); !ok { // the bus takes its first frame
		t.Fatal("the edge holds no frame")
	}
	send(2) // one fits, one is refused on air
	if got := [2]uint64{st.Drops.Load(), st.StartDrops.Load()}; got != [2]uint64{1, 3} {
		t.Fatalf("after the bus took a frame: drops, start drops = %v, want [1 3]", got)
	}
	for i, f := range refused {
		if r := f.Refs(); r != 0 {
			t.Errorf("refused frame %d holds %d references, want 0", i, r)
		}
	}
	if len(refused) != 4 {
		t.Errorf("%d frames refused, want 4", len(refused))
	}

	// The summary a user reads at the end keeps them apart.
	var b strings.Builder
	Summary{Sources: []SourceSummary{{Address: st.Address, Paced: 7, Drops: st.Drops.Load(), StartDrops: st.StartDrops.Load()}}}.WriteText(&b)
	if want := "7 frames, 1 drops, 0 underruns (3 of them paced before its buses started)"; !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nwant a line with %q", b.String(), want)
	}
}
