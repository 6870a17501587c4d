package cuda

import (
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/internal/testwait"
)

// A decode loop's sleep: pokes while it works cost no system call and are
// not lost, a poke wakes it from its sleep with one eventfd write, a
// timeout ends a sleep nobody pokes, and pokes after the loop has ended
// write nothing.
func TestLoopWake(t *testing.T) {
	w := newLoopWake()
	if err := w.open(); err != nil {
		t.Fatal(err)
	}

	// Poked while working: the next sleep returns at once, no write.
	for range 5 {
		w.poke()
	}
	w.sleep(-1)
	if got := w.writes.Load(); got != 0 {
		t.Fatalf("pokes while the loop worked wrote the eventfd %d times, want 0", got)
	}
	if got := w.sleeps.Load(); got != 0 {
		t.Fatalf("a sleep after pokes went to sleep (%d), want it to return at once", got)
	}

	// Asleep: one poke wakes it, others before it runs again coalesce.
	woke := make(chan struct{})
	go func() {
		w.sleep(-1)
		close(woke)
	}()
	testwait.Until(t, testwait.Bound, "the loop asleep", func() bool { return w.sleeps.Load() == 1 })
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); w.poke() }()
	}
	wg.Wait()
	testwait.Until(t, testwait.Bound, "the poked loop awake", func() bool { return closed(woke) })
	if got := w.writes.Load(); got != 1 {
		t.Errorf("8 pokes of a sleeping loop wrote %d times, want 1", got)
	}

	// Nobody pokes: the timeout ends the sleep. (A poke of the eight may
	// have come after the loop woke: its next sleep returns at once.)
	w.sleep(time.Millisecond)
	before := w.sleeps.Load()
	w.sleep(time.Millisecond)
	if got := w.sleeps.Load(); got != before+1 {
		t.Errorf("sleeps %d after a timed sleep, want %d", got, before+1)
	}

	// The loop has ended: pokes write nothing, to no descriptor.
	w.close()
	w.asleep.Store(true) // as if a poke raced the loop's last sleep
	w.poke()
	if got := w.writes.Load(); got != 1 {
		t.Errorf("a poke after close wrote (%d writes), want none", got)
	}
}

// A poke racing the loop's way into its sleep is never lost: many rounds of
// sleep and poke from another goroutine, each poke made after the round's
// work was published, end every sleep.
func TestLoopWakeRace(t *testing.T) {
	w := newLoopWake()
	if err := w.open(); err != nil {
		t.Fatal(err)
	}
	defer w.close()
	var mu sync.Mutex
	work := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for taken := 0; taken < 2000; {
			mu.Lock()
			taken += work
			work = 0
			mu.Unlock()
			if taken < 2000 {
				w.sleep(-1)
			}
		}
	}()
	for range 2000 {
		mu.Lock()
		work++
		mu.Unlock()
		w.poke()
	}
	testwait.Until(t, testwait.Bound, "every poke taken (a lost one leaves the loop asleep with work waiting)", func() bool { return closed(done) })
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
