package playout

import (
	"errors"
	"fmt"
	"testing"
)

func TestGridIsExactAtNTSCRates(t *testing.T) {
	g, err := NewGrid(30000, 1001, 5)
	if err != nil {
		t.Fatal(err)
	}
	// 30000 frames at 30000/1001 fps are exactly 1001 seconds.
	if got := g.At(30000); got != 5+1001_000_000_000 {
		t.Fatalf("At(30000) = %d, want %d", got, 5+1001_000_000_000)
	}
	// A day of frames does not drift or overflow.
	day := int64(24 * 3600 * 30)
	want := 5 + day*1001*1_000_000_000/30000
	if got := g.At(day); got != want {
		t.Fatalf("At(day) = %d, want %d", got, want)
	}
	for _, k := range []int64{0, 1, 2, 29, 30, 1000, 123456, day} {
		if i := g.Index(g.At(k)); i != k {
			t.Errorf("Index(At(%d)) = %d", k, i)
		}
		if i := g.Index(g.At(k+1) - 1); i != k {
			t.Errorf("Index(At(%d)-1) = %d, want %d", k+1, i, k)
		}
	}
	if g.Index(4) != -1 {
		t.Error("a time before the origin has a tick")
	}
	if _, err := NewGrid(0, 1, 0); err == nil {
		t.Error("a zero rate was accepted")
	}
}

func TestInputPicksNewestAtOrBeforeTheTick(t *testing.T) {
	var released []int
	in := NewInput(func(f int) { released = append(released, f) })
	if _, ok, _ := in.Pick(100); ok {
		t.Fatal("an input with no frame returned one")
	}
	in.Offer(1, 10)
	in.Offer(2, 20)
	in.Offer(3, 130) // after the tick: must wait
	f, ok, fresh := in.Pick(100)
	if !ok || !fresh || f != 2 {
		t.Fatalf("Pick(100) = %d %v %v, want frame 2, fresh", f, ok, fresh)
	}
	if len(released) != 1 || released[0] != 1 {
		t.Fatalf("released %v, want [1] (passed over)", released)
	}
	f, ok, fresh = in.Pick(120)
	if !ok || fresh || f != 2 {
		t.Fatalf("Pick(120) = %d %v %v, want a repeat of 2", f, ok, fresh)
	}
	f, _, fresh = in.Pick(140)
	if f != 3 || !fresh {
		t.Fatalf("Pick(140) = %d fresh=%v, want 3", f, fresh)
	}
	in.Offer(4, 150)
	in.Close()
	// Every frame offered is released exactly once.
	seen := map[int]int{}
	for _, f := range released {
		seen[f]++
	}
	for f := 1; f <= 4; f++ {
		if seen[f] != 1 {
			t.Errorf("frame %d released %d times", f, seen[f])
		}
	}
	s := in.Stats
	if s.Offered != 4 || s.Shown != 2 || s.Skipped != 1 || s.Repeats != 1 || s.Empty != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestInputReady(t *testing.T) {
	in := NewInput[int](nil)
	if in.Ready(100) {
		t.Fatal("an empty input is ready")
	}
	in.Offer(1, 150)
	if in.Ready(100) || !in.Ready(150) {
		t.Fatal("ready before its first frame is due, or not once it is")
	}
	in.Pick(150)
	if !in.Ready(0) {
		t.Fatal("an input that showed a frame is not ready")
	}
}

func TestInputAcceptsOutOfOrderOffers(t *testing.T) {
	in := NewInput[int](nil)
	in.Offer(3, 30)
	in.Offer(1, 10)
	in.Offer(2, 20)
	if f, _, _ := in.Pick(25); f != 2 {
		t.Fatalf("got %d, want 2", f)
	}
	if in.Waiting() != 1 {
		t.Fatalf("waiting %d, want 1", in.Waiting())
	}
}

func TestScheduleDrawsAtTheDeadlineAndCountsMisses(t *testing.T) {
	g, _ := NewGrid(25, 1, 0) // 40 ms
	s := NewSchedule(g, 2, 0)
	if s.NextDeadline() != 80_000_000 {
		t.Fatalf("first deadline %d, want 80 ms (two periods of latency)", s.NextDeadline())
	}
	if _, ok := s.Due(79_999_999); ok {
		t.Fatal("a tick was due before its deadline")
	}
	k, ok := s.Due(80_000_000)
	if !ok || k != 0 {
		t.Fatalf("Due(80ms) = %d %v", k, ok)
	}
	// Not committed (the output has not accepted it): still due.
	if k, ok := s.Due(90_000_000); !ok || k != 0 {
		t.Fatalf("an uncommitted tick is no longer due: %d %v", k, ok)
	}
	s.Commit(0)
	if _, ok := s.Due(100_000_000); ok {
		t.Fatal("tick 1 due before its deadline")
	}
	// A stall: the draw of tick 1 could not start until 250 ms, when tick 4's
	// deadline (240 ms) has passed; ticks 1..3 are missed.
	k, ok = s.Due(250_000_000)
	if !ok || k != 4 || s.Missed != 3 {
		t.Fatalf("after a stall Due = %d %v missed %d, want tick 4 and 3 missed", k, ok, s.Missed)
	}
	s.Commit(4)
	if s.Next() != 5 || s.Drawn != 2 {
		t.Fatalf("next %d drawn %d", s.Next(), s.Drawn)
	}
}

func TestScheduleJoinsTheGridWhereItStarts(t *testing.T) {
	g, _ := NewGrid(30, 1, 0)
	s := NewSchedule(g, 2, 1_000_000_000) // starts at 1 s
	if d := s.NextDeadline(); d < 1_000_000_000 || d > 1_000_000_000+g.Period() {
		t.Fatalf("first deadline %d is not the first after the start", d)
	}
}

func TestSwitcherCutLandsOnTheNextTick(t *testing.T) {
	s := NewSwitcher(0)
	if from, _, _, _ := s.At(10); from != 0 {
		t.Fatal("wrong scene on air")
	}
	s.Request(Cut, 3, 0)
	if !s.Pending() {
		t.Fatal("a cut is not pending")
	}
	from, to, _, p := s.At(11)
	if from != 3 || to != 3 || p != 0 || s.OnAir() != 3 {
		t.Fatalf("tick after the cut shows %d→%d p=%v", from, to, p)
	}
}

func TestSwitcherFadeRunsOverItsTicks(t *testing.T) {
	s := NewSwitcher(1)
	s.Request(Fade, 2, 4)
	var ps []float64
	for k := int64(20); k < 24; k++ {
		from, to, kind, p := s.At(k)
		if k < 23 && (from != 1 || to != 2 || kind != Fade) {
			t.Fatalf("tick %d: %d→%d %v", k, from, to, kind)
		}
		ps = append(ps, p)
	}
	want := []float64{0.25, 0.5, 0.75, 0}
	for i := range want {
		if ps[i] != want[i] {
			t.Fatalf("progress %v, want %v", ps, want)
		}
	}
	if s.OnAir() != 2 || s.Cuts != 1 {
		t.Fatalf("after the fade on air %d cuts %d", s.OnAir(), s.Cuts)
	}
	// A cut during a wipe completes the wipe, then cuts.
	s.Request(Wipe, 0, 10)
	s.At(30)
	s.Request(Cut, 1, 0)
	if from, _, _, _ := s.At(31); from != 1 {
		t.Fatalf("cut during a wipe shows %d", from)
	}
	if _, err := ParseKind("dissolve"); err != nil {
		t.Error(err)
	}
	if _, err := ParseKind("spin"); err == nil {
		t.Error("unknown transition accepted")
	}
}

func TestHistogramQuarters(t *testing.T) {
	var h Histogram
	p := int64(40_000_000)
	for _, d := range []int64{0, 9_999_999, 10_000_000, 39_999_999, 40_000_000, 200_000_000, -5} {
		h.Observe(d, p)
	}
	want := [QuarterBuckets]uint64{3, 1, 0, 1, 1, 0, 0, 0, 1}
	if h.Buckets != want {
		t.Fatalf("buckets %v, want %v", h.Buckets, want)
	}
	if h.Over() != 2 || h.MaxNs != 200_000_000 {
		t.Fatalf("over %d max %d", h.Over(), h.MaxNs)
	}
	if BucketLabel(0) != "<0.25" || BucketLabel(8) != ">=2" {
		t.Error(BucketLabel(0), BucketLabel(8))
	}
}

// A switch asked for a tick lands on exactly that tick, however many ticks
// before it was asked; several wait in tick order; one for a tick already
// drawn is refused, saying how late it is.
func TestSwitcherRequestAtLandsOnItsTick(t *testing.T) {
	s := NewSwitcher(0)
	if err := s.RequestAt(Cut, 2, 0, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestAt(Cut, 1, 0, 5); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestAt(Fade, 3, 4, 20); err != nil {
		t.Fatal(err)
	}
	var shown []int
	for k := int64(0); k < 26; k++ {
		from, to, _, p := s.At(k)
		if p > 0 {
			shown = append(shown, from*10+to)
		} else {
			shown = append(shown, from)
		}
	}
	want := []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 23, 23, 23, 3, 3, 3}
	if fmt.Sprint(shown) != fmt.Sprint(want) {
		t.Errorf("ticks show %v, want %v", shown, want)
	}
	err := s.RequestAt(Cut, 0, 0, 22)
	var late *LateError
	if !errors.As(err, &late) || late.Frames() != 4 || late.Next != 26 {
		t.Fatalf("a switch for tick 22 after tick 25 was drawn: %v", err)
	}
	if err := s.RequestAt(Cut, 0, 0, 26); err != nil {
		t.Errorf("tick 26 is still to come: %v", err)
	}
	// A tick passed over (a missed deadline) starts its switch on the next
	// tick drawn.
	if err := s.RequestAt(Cut, 1, 0, 30); err != nil {
		t.Fatal(err)
	}
	if from, _, _, _ := s.At(32); from != 1 {
		t.Errorf("tick 32 after the one asked for, 30, was passed over: shows %d, want 1", from)
	}
}
