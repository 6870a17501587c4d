package runtime

import (
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/internal/testwait"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newLoop(t *testing.T, name string) *EventLoop {
	t.Helper()
	l, err := NewEventLoop(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Stop)
	return l
}

// TestLoopWakesOnlyWhenAsleep: work, timers and re-arms added from the
// loop's own handlers write nothing; work from another goroutine writes the
// eventfd once, and only while the loop sleeps.
func TestLoopWakesOnlyWhenAsleep(t *testing.T) {
	leakCheck(t)
	l := newLoop(t, "wakes")
	s, err := NewSignal()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// From the loop's own thread: a chain of 100 posts, 100 timers and 100 re-arms.
	var rounds atomic.Int32
	finished := make(chan struct{})
	reg, err := l.Watch(s, func(r *Registration) {
		if rounds.Add(1) == 100 {
			close(finished)
			return
		}
		l.Post(func() {})
		l.AddTimer(Now(), func() {})
		r.Rearm()
		s.Notify() // the producer is the handler itself
	})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	testwait.Until(t, testwait.Bound, "the loop to sleep", l.isSleeping)
	s.Notify()
	<-finished
	if w := l.Stats().WakeWrites; w != 0 {
		t.Fatalf("work, timers and re-arms added on the loop's thread wrote the wake eventfd %d times, want 0", w)
	}

	// From another goroutine while the loop is busy: no write either.
	release := make(chan struct{})
	l.Post(func() { <-release })
	testwait.Until(t, testwait.Bound, "the loop to run the blocking item", func() bool { return !l.isSleeping() })
	var ran atomic.Int32
	for i := 0; i < 100; i++ {
		l.Post(func() { ran.Add(1) })
	}
	close(release)
	testwait.Until(t, testwait.Bound, "100 posted items to run", func() bool { return ran.Load() == 100 })
	if w := l.Stats().WakeWrites; w > 1 {
		// The blocking post itself may have found the loop asleep.
		t.Fatalf("posts to a busy loop wrote the wake eventfd %d times, want at most 1", w)
	}

	// From another goroutine while it sleeps: exactly one write per post.
	testwait.Until(t, testwait.Bound, "the loop to sleep", l.isSleeping)
	before := l.Stats().WakeWrites
	done := make(chan struct{})
	l.Post(func() { close(done) })
	<-done
	if w := l.Stats().WakeWrites - before; w != 1 {
		t.Fatalf("one post to a sleeping loop wrote %d times, want 1", w)
	}
}

// TestLoopTimers checks order, deadlines and cancellation from both sides.
// Added from another goroutine, timers start firing while the rest are
// still being added (the first deadline is 5 ms away, and a busy machine
// may take longer than that to add 300): the order is then checked among
// the timers that were in the heap together.
func TestLoopTimers(t *testing.T) {
	leakCheck(t)
	tests := []struct {
		name   string
		onLoop bool
	}{{"added from another goroutine", false}, {"added on the loop", true}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLoop(t, "timers")
			rng := rand.New(rand.NewSource(1))
			const n = 300
			var mu sync.Mutex
			var order []int   // timers in the order they fired
			var late []int64  // how late each ran
			var firings int64 // len(order), readable without mu
			var wg sync.WaitGroup
			at := make([]int64, n)
			heaped := make([]int64, n) // firings completed once timer i was in the heap
			stopped := map[int]bool{}  // timers whose Stop unscheduled them
			tried := 0
			base := Now() + int64(5*time.Millisecond)
			add := func() {
				var timers []*Timer
				for i := 0; i < n; i++ {
					at[i] = base + rng.Int63n(int64(60*time.Millisecond))
					wg.Add(1)
					timers = append(timers, l.AddTimer(at[i], func() {
						mu.Lock()
						order = append(order, i)
						late = append(late, Now()-at[i])
						firings++
						mu.Unlock()
						wg.Done()
					}))
					mu.Lock()
					heaped[i] = firings
					mu.Unlock()
				}
				for i := 0; i < n; i += 10 {
					tried++
					if timers[i].Stop() {
						stopped[i] = true
						wg.Done()
					}
				}
			}
			if tc.onLoop {
				if err := l.Do(add); err != nil {
					t.Fatal(err)
				}
			} else {
				add()
			}
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			if len(order) != n-len(stopped) {
				t.Fatalf("%d timers fired, want %d (%d of %d cancelled in time)", len(order), n-len(stopped), len(stopped), tried)
			}
			if tc.onLoop && len(stopped) != tried {
				t.Fatalf("timers added and cancelled in one loop handler: %d of %d cancelled, want all", len(stopped), tried)
			}
			pos := make([]int, n)
			for p, i := range order {
				if stopped[i] {
					t.Fatalf("timer %d fired although Stop unscheduled it", i)
				}
				pos[i] = p
			}
			// The loop runs one timer at a time, the earliest due: timer y,
			// taken after the heaped[x]+1-th firing ended (or at all, when
			// the timers were added on the loop, between firings), was taken
			// from a heap holding x, and so x fired first if it was due
			// earlier.
			inHeap := func(p, x int) bool { return int64(p) > heaped[x] || tc.onLoop }
			for p, y := range order {
				for _, x := range order[p+1:] {
					if at[x] < at[y] && inHeap(p, x) {
						t.Fatalf("timer %d (due %d ns later) fired before timer %d, which was in the heap with it: out of deadline order", y, at[y]-at[x], x)
					}
				}
			}
			for i, d := range late {
				if d < 0 {
					t.Fatalf("timer %d ran %d ns before its deadline", order[i], -d)
				}
			}
			st := l.Stats()
			if st.TimersFired != uint64(len(order)) || st.TimerLateNs.Count != uint64(len(order)) {
				t.Fatalf("stats: %d fired, %d lateness samples; want %d", st.TimersFired, st.TimerLateNs.Count, len(order))
			}
		})
	}
}

// TestLoopEarlierTimerFromAnotherGoroutine: a sleeping loop armed far ahead
// takes an earlier timer without a wake-up write.
func TestLoopEarlierTimerFromAnotherGoroutine(t *testing.T) {
	leakCheck(t)
	l := newLoop(t, "rearm")
	far := l.AddTimer(Now()+int64(time.Hour), func() {})
	defer far.Stop()
	testwait.Until(t, testwait.Bound, "the loop to sleep", l.isSleeping)
	done := make(chan int64, 1)
	at := Now() + int64(20*time.Millisecond)
	l.AddTimer(at, func() { done <- Now() })
	select {
	case got := <-done:
		if got < at {
			t.Fatalf("fired %d ns early", at-got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an earlier timer added while the loop slept never fired")
	}
	if w := l.Stats().WakeWrites; w != 0 {
		t.Fatalf("adding a timer wrote the wake eventfd %d times, want 0 (re-arm the timerfd instead)", w)
	}
}

// TestLoopOneShot: a watch fires once until re-armed, and a notification
// that came while disarmed fires at the re-arm.
func TestLoopOneShot(t *testing.T) {
	leakCheck(t)
	l := newLoop(t, "oneshot")
	s, _ := NewSignal()
	defer s.Close()
	var calls atomic.Int32
	reg, err := l.Watch(s, func(*Registration) { calls.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	s.Notify()
	testwait.Until(t, testwait.Bound, "the first call", func() bool { return calls.Load() == 1 })
	// A second signal notified after it proves the loop has looked: one
	// epoll_wait reports every descriptor ready by then, and work posted
	// after that wake-up runs only once its dispatch is over.
	probe, _ := NewSignal()
	defer probe.Close()
	var probed atomic.Int32
	preg, err := l.Watch(probe, func(r *Registration) { probed.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer preg.Unregister()
	s.Notify() // consumed flag was cleared: writes, but the registration is disarmed
	probe.Notify()
	testwait.Until(t, testwait.Bound, "the loop's wake-up for the probe", func() bool { return probed.Load() == 1 })
	if err := l.Do(func() {}); err != nil {
		t.Fatal(err)
	}
	if c := calls.Load(); c != 1 {
		t.Fatalf("a disarmed registration ran %d times, want 1", c)
	}
	if err := reg.Rearm(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, testwait.Bound, "the pending notification after the re-arm", func() bool { return calls.Load() == 2 })
}

// TestLoopReusedDescriptor: an old registration whose descriptor was closed
// and whose number now belongs to a new one neither fires for the new one
// nor removes it when unregistered.
func TestLoopReusedDescriptor(t *testing.T) {
	leakCheck(t)
	l := newLoop(t, "reuse")
	a, _ := NewSignal()
	var aCalls, bCalls atomic.Int32
	ra, err := l.Watch(a, func(*Registration) { aCalls.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	oldFd := a.Fd()
	a.Close()
	b, _ := NewSignal()
	defer b.Close()
	if b.Fd() != oldFd {
		t.Logf("descriptor %d was not reused (got %d); the check still runs", oldFd, b.Fd())
	}
	rb, err := l.Watch(b, func(r *Registration) { bCalls.Add(1); r.Rearm() })
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Unregister()
	ra.Unregister() // must not remove b's wait
	if err := ra.Rearm(); err == nil {
		t.Fatal("re-arming an unregistered registration succeeded")
	}
	for i := 1; i <= 3; i++ {
		b.Notify()
		testwait.Until(t, testwait.Bound, "b's handler", func() bool { return bCalls.Load() == int32(i) })
	}
	if c := aCalls.Load(); c != 0 {
		t.Fatalf("the closed descriptor's handler ran %d times for its successor", c)
	}
}

// TestLoopStopLeavesNothing: loops with registrations, timers and work stop
// without a goroutine or descriptor left behind.
func TestLoopStopLeavesNothing(t *testing.T) {
	leakCheck(t)
	var sigs []*Signal
	for i := 0; i < 4; i++ {
		l, err := NewEventLoop("stop")
		if err != nil {
			t.Fatal(err)
		}
		s, _ := NewSignal()
		sigs = append(sigs, s)
		if _, err := l.Watch(s, func(r *Registration) { r.Rearm() }); err != nil {
			t.Fatal(err)
		}
		l.AddTimer(Now()+int64(time.Hour), func() {})
		s.Notify()
		l.Post(func() {})
		s2, _ := NewSignal()
		sigs = append(sigs, s2)
		reg, err := l.Watch(s2, func(*Registration) {})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Watch(s2, func(*Registration) {}); err == nil {
			t.Fatal("watching one signal twice on a loop succeeded")
		}
		l.Stop()
		if err := l.Post(func() {}); err == nil {
			t.Fatal("post after stop succeeded")
		}
		if err := reg.Rearm(); err == nil {
			t.Fatal("rearm after stop succeeded")
		}
		reg.Unregister() // must not touch the closed epoll descriptor's number
		l.AddTimer(Now(), func() {})
	}
	for _, s := range sigs {
		s.Close()
	}
}

// TestLoopSurvivesAPanic: a panic in work, a timer or a handler that no
// node's context wraps is recovered on the loop (counted, and logged with
// its stack); the loop goes on running what comes next, and a Do whose
// work panicked returns.
func TestLoopSurvivesAPanic(t *testing.T) {
	leakCheck(t)
	l, err := NewEventLoop("panics")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	before := panics.Recovered()
	if err := l.Do(func() { panic("posted work") }); err != nil {
		t.Fatal(err)
	}
	fired := make(chan struct{})
	l.AddTimer(Now(), func() { panic("a timer") })
	l.AddTimer(Now()+int64(time.Millisecond), func() { close(fired) })
	<-fired
	s, err := NewSignal()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var calls atomic.Int32
	if _, err := l.Watch(s, func(r *Registration) {
		if calls.Add(1) == 1 {
			r.Rearm()
			panic("a handler")
		}
	}); err != nil {
		t.Fatal(err)
	}
	s.Notify()
	testwait.Until(t, testwait.Bound, "the handler to panic", func() bool { return calls.Load() == 1 })
	s.Notify()
	testwait.Until(t, testwait.Bound, "the handler to run again after its panic", func() bool { return calls.Load() == 2 })
	ran := false
	if err := l.Do(func() { ran = true }); err != nil || !ran {
		t.Fatalf("the loop after three panics: ran %v, %v", ran, err)
	}
	if n := panics.Recovered() - before; n != 3 {
		t.Errorf("%d panics counted, want 3", n)
	}
}
