package runtime

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestNowIsClockMonotonic: Now reads the clock the timerfds are armed on.
func TestNowIsClockMonotonic(t *testing.T) {
	for i := 0; i < 5; i++ {
		var ts unix.Timespec
		before := Now()
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		after := Now()
		if k := ts.Nano(); k < before-int64(time.Millisecond) || k > after+int64(time.Millisecond) {
			t.Fatalf("CLOCK_MONOTONIC %d outside Now's [%d, %d] by more than 1 ms", k, before, after)
		}
		if after < before {
			t.Fatalf("Now went backwards: %d then %d", before, after)
		}
	}
}

func TestTimeBaseConversions(t *testing.T) {
	tests := []struct {
		name string
		tb   string
		n    int64
		ns   int64 // floor
		ceil int64
	}{
		{"120k one frame at 30", "1/120000", 4000, 33_333_333, 33_333_334},
		{"120k a day of 30 fps frames, no drift", "1/120000", 4000 * 30 * 86400, 86400_000_000_000, 86400_000_000_000},
		{"ntsc tick", "1001/30000", 1, 33_366_666, 33_366_667},
		{"ntsc a million ticks", "1001/30000", 1_000_000, 33_366_666_666_666, 33_366_666_666_667},
		{"negative", "1/120000", -4000, -33_333_334, -33_333_333},
		{"ms", "1/1000", 5, 5_000_000, 5_000_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := ParseTimeBase(tc.tb)
			if err != nil {
				t.Fatal(err)
			}
			if got := tb.ToNanos(tc.n); got != tc.ns {
				t.Errorf("ToNanos(%d) = %d, want %d", tc.n, got, tc.ns)
			}
			if got := tb.ToNanosCeil(tc.n); got != tc.ceil {
				t.Errorf("ToNanosCeil(%d) = %d, want %d", tc.n, got, tc.ceil)
			}
			if got := tb.FromNanos(tb.ToNanosCeil(tc.n)); got != tc.n {
				t.Errorf("FromNanos(ToNanosCeil(%d)) = %d", tc.n, got)
			}
		})
	}
	p, _ := FramePeriod("30000/1001")
	if ticks, exact := Base120k.Ticks(p); ticks != 4004 || !exact {
		t.Fatalf("a 29.97 fps tick is %d units of 1/120000 (exact %v), want 4004", ticks, exact)
	}
	if got := p.Convert(3, Base120k); got != 12012 {
		t.Fatalf("3 ntsc ticks = %d/120000, want 12012", got)
	}
	for _, bad := range []string{"0/1", "1/0", "x", "-1/5"} {
		if _, err := ParseTimeBase(bad); err == nil {
			t.Errorf("time base %q accepted", bad)
		}
	}
}

func TestPacerConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  PacerConfig
		ok   bool
	}{
		{"time base", PacerConfig{TimeBase: Base120k}, true},
		{"tick period", PacerConfig{TickPeriod: TimeBase{1, 30}}, true},
		{"both", PacerConfig{TimeBase: Base120k, TickPeriod: TimeBase{1, 30}}, false},
		{"neither", PacerConfig{}, false},
	}
	for _, tc := range tests {
		if _, err := NewPacer(tc.cfg); (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// TestPacerResync: a manual clock, timestamps that jump.
func TestPacerResync(t *testing.T) {
	var now int64 = 1_000_000_000
	p, _ := NewPacer(PacerConfig{TimeBase: Base120k, Clock: func() int64 { return now }})
	steps := []struct {
		name    string
		advance int64 // clock advance before Release, ns
		pts     int64
		want    int64 // release relative to the first anchor
		resyncs uint64
	}{
		{"anchor", 0, 120000, 0, 0},
		{"next frame", 0, 124000, 33_333_334, 0},
		{"ten frames on", 330_000_000, 160000, 333_333_334, 0},
		{"looped file restarts at 0", 10_000_000, 0, 340_000_000, 1},
		{"continues from the new anchor", 0, 4000, 373_333_334, 1},
		{"stall of 3 s", 3_000_000_000, 8000, 3_340_000_000, 2},
	}
	start := now
	for _, s := range steps {
		now += s.advance
		if got := p.Release(s.pts) - start; got != s.want {
			t.Fatalf("%s: release at +%d ns, want +%d", s.name, got, s.want)
		}
		if r := p.Stats().Resyncs; r != s.resyncs {
			t.Fatalf("%s: %d resyncs, want %d", s.name, r, s.resyncs)
		}
	}
}

func TestPacerGrid(t *testing.T) {
	var now int64
	period := TimeBase{1001, 30000}
	tests := []struct {
		name  string
		start int64
		want  int64
	}{
		{"before the origin", 500, 1000},
		{"on a tick", 1000 + 33_366_667, 1000 + 33_366_667},
		{"between ticks", 1000 + 40_000_000, 1000 + 66_733_334},
		{"a million ticks on", 1000 + 33_366_666_666_666 + 5, 1000 + 33_366_700_033_334},
	}
	for _, tc := range tests {
		now = tc.start
		p, _ := NewPacer(PacerConfig{TickPeriod: period, AlignPeriod: period, AlignOriginNs: 1000, Clock: func() int64 { return now }})
		if got := p.Release(7); got != tc.want {
			t.Errorf("%s: anchored at %d, want %d", tc.name, got, tc.want)
		}
		if got := p.Release(8) - p.Release(7); got < 33_366_666 || got > 33_366_667 {
			t.Errorf("%s: next tick %d ns later", tc.name, got)
		}
	}
}

// TestPacerNoSpin: at 30 fps in 1/120000 s units on a clock that reads whole
// milliseconds (or whole tenths of a second), a timer armed at a release
// time finds it due: one wake-up per frame, however late the loop runs. The
// mutation (due only once the clock shows it) spins whenever a timer fires
// inside the quantum its release falls in. On the millisecond clock that
// needs the loop to be on time to well under a millisecond, which a busy
// machine does not promise; on the tenth-of-a-second clock, two releases in
// three fall 33 or 67 ms before the clock shows them, and the mutation is
// caught unless every one of ten such timers is that late.
func TestPacerNoSpin(t *testing.T) {
	leakCheck(t)
	clock := func(q int64) func() int64 { return func() int64 { n := Now(); return n - n%q } }
	tests := []struct {
		name      string
		quantum   int64
		strict    bool
		wantEarly bool
	}{
		{"release inside the current millisecond is due", 1_000_000, false, false},
		{"release inside the current tenth of a second is due", 100_000_000, false, false},
		{"mutation: due only once the clock shows it", 100_000_000, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLoop(t, "pace")
			p, _ := NewPacer(PacerConfig{TimeBase: Base120k, QuantumNs: tc.quantum, Clock: clock(tc.quantum)})
			p.strictDue = tc.strict
			const frames = 15
			done := make(chan struct{})
			var emitted int
			l.Do(func() {
				p.Run(l, 0, func(pts int64) (int64, bool) {
					return pts + 4000, pts+4000 < frames*4000
				}, func(int64) {
					if emitted++; emitted == frames {
						close(done)
					}
				})
			})
			stuck := time.NewTimer(eventBound)
			defer stuck.Stop()
			select {
			case <-done:
			case <-l.Done():
				t.Fatal("the loop stopped")
			case <-stuck.C:
				t.Fatalf("15 frames at 30 fps did not come in %v", eventBound)
			}
			st, ls := p.Stats(), l.Stats()
			if (st.Early > 0) != tc.wantEarly {
				t.Fatalf("%d early wake-ups for %d frames (timer ran %d times)", st.Early, st.Released, ls.TimersFired)
			}
			// One timer run a frame, exactly. Wake-ups are one a frame too,
			// plus the odd one when a signal (the Go runtime's preemption,
			// the GC) interrupts epoll_wait, as it does on a busy machine: a
			// spin through epoll would show as hundreds.
			if !tc.wantEarly {
				if ls.TimersFired != frames || ls.Wakeups > 2*frames {
					t.Fatalf("%d frames took %d timer runs and %d wake-ups, want one each", frames, ls.TimersFired, ls.Wakeups)
				}
			}
			t.Logf("%d frames: %d timer runs, %d wake-ups, %d early", st.Released, ls.TimersFired, ls.Wakeups, st.Early)
		})
	}
}

func TestSmoother(t *testing.T) {
	period := TimeBase{1, 30}
	const T = 33_333_333
	tests := []struct {
		name        string
		arrivals    func(i int) int64
		frames      int
		wantResyncs bool
		maxLagNs    int64     // |real time - stamped time| at the end
		wantEarly   [2]uint64 // frames refused: too early for their slot
		wantGaps    [2]uint64
	}{
		{"jitter of 8 ms around 30 fps", func(i int) int64 {
			return int64(i)*T + int64((i*7919)%17-8)*1_000_000
		}, 300, false, 20_000_000, [2]uint64{0, 0}, [2]uint64{0, 0}},
		{"jitter of 8 ms around 30 fps, the first frame late", func(i int) int64 {
			return int64(i)*T + int64(8-(i*7919)%17)*1_000_000
		}, 300, false, 20_000_000, [2]uint64{0, 0}, [2]uint64{0, 0}},
		{"a source painting at 25 fps", func(i int) int64 { return int64(i) * 40_000_000 }, 250, true, 2 * T, [2]uint64{0, 0}, [2]uint64{49, 50}},
		{"a one second pause", func(i int) int64 {
			if i >= 100 {
				return int64(i)*T + 1_000_000_000
			}
			return int64(i) * T
		}, 200, true, 2 * T, [2]uint64{0, 0}, [2]uint64{30, 30}},
		// Issue 27: 60 fps into 30 stamped every frame a slot later, so
		// the stamps ran ahead of real time without bound (12 s late after
		// 24 s). Half the frames are dropped, none is stamped ahead.
		{"a source painting at 60 fps", func(i int) int64 { return int64(i) * T / 2 }, 600, false, T / 2, [2]uint64{299, 300}, [2]uint64{0, 0}},
		{"a source painting at 33 fps", func(i int) int64 { return int64(i) * 1e9 / 33 }, 330, false, T / 2, [2]uint64{29, 30}, [2]uint64{0, 0}},
		{"a burst of 100 frames at once", func(i int) int64 {
			if i < 50 {
				return int64(i) * T
			}
			return 50 * T
		}, 150, false, T / 2, [2]uint64{99, 99}, [2]uint64{0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSmoother(Base120k, period, T)
			if err != nil {
				t.Fatal(err)
			}
			base := int64(5_000_000_000)
			first := tc.arrivals(0)
			prev := int64(-1)
			var last int64
			var early uint64
			for i := 0; i < tc.frames; i++ {
				due := s.Due()
				pts, keep := s.Stamp(base + tc.arrivals(i))
				if keep != (base+tc.arrivals(i) >= due) {
					t.Fatalf("frame %d arrived at %d, due %d: keep %v", i, base+tc.arrivals(i), due, keep)
				}
				if !keep {
					early++
					continue
				}
				if pts <= prev {
					t.Fatalf("frame %d stamped %d after %d: timestamps must grow", i, pts, prev)
				}
				if s.Resyncs() == 0 && early == 0 && prev >= 0 && pts != prev+4000 {
					t.Fatalf("frame %d stamped %d, want previous slot + 1 (%d)", i, pts, prev+4000)
				}
				// A frame is never stamped more than MaxLead after it arrived.
				if lead := first + Base120k.ToNanos(pts) - tc.arrivals(i); lead > T/2 {
					t.Fatalf("frame %d stamped %d ns after its arrival, more than half a period", i, lead)
				}
				prev, last = pts, tc.arrivals(i)
			}
			if (s.Resyncs() > 0) != tc.wantResyncs {
				t.Fatalf("%d resyncs", s.Resyncs())
			}
			if lag := first + Base120k.ToNanos(prev) - last; lag > tc.maxLagNs || -lag > tc.maxLagNs {
				t.Fatalf("stamped time is %d ns off real time after %d frames", lag, tc.frames)
			}
			if e := early; e < tc.wantEarly[0] || e > tc.wantEarly[1] {
				t.Errorf("%d frames dropped early, want %d to %d", e, tc.wantEarly[0], tc.wantEarly[1])
			}
			if g := s.Gaps(); g < tc.wantGaps[0] || g > tc.wantGaps[1] {
				t.Errorf("%d slots without a frame, want %d to %d", g, tc.wantGaps[0], tc.wantGaps[1])
			}
		})
	}
	if _, err := NewSmoother(Base120k, period, 0); err == nil {
		t.Fatal("threshold 0 accepted")
	}
}
