package runtime

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSignalCoalescesWrites(t *testing.T) {
	leakCheck(t)
	s, err := NewSignal()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 1000; i++ {
		s.Notify()
	}
	if got := s.Writes(); got != 1 {
		t.Fatalf("1000 notifies before any read: %d eventfd writes, want 1", got)
	}
	if !s.consume() {
		t.Fatal("the reader found nothing to read after a write")
	}
	if s.consume() {
		t.Fatal("a second read found a write: the counter was not read to zero")
	}
	s.Notify()
	if got := s.Writes(); got != 2 {
		t.Fatalf("after the read, a notify wrote %d times in all, want 2", got)
	}
}

// TestSignalNoLostWakeups runs producers against a reader that waits for a
// counter; every item must be seen, however the notifies interleave.
func TestSignalNoLostWakeups(t *testing.T) {
	leakCheck(t)
	tests := []struct {
		name      string
		producers int
		items     int
	}{
		{"one producer", 1, 20000},
		{"four producers", 4, 5000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSignal()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var produced atomic.Int64
			var wg sync.WaitGroup
			for p := 0; p < tc.producers; p++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < tc.items; i++ {
						produced.Add(1)
						s.Notify()
					}
				}()
			}
			total := int64(tc.producers * tc.items)
			var seen int64
			for seen < total {
				if !s.Wait(func() bool { return produced.Load() > seen }, 5*time.Second) {
					t.Fatalf("lost wake-up: reader saw %d of %d items and no notify came in 5s", seen, total)
				}
				seen = produced.Load()
			}
			wg.Wait()
			if w := s.Writes(); w > uint64(total) {
				t.Fatalf("%d writes for %d notifies", w, total)
			}
			t.Logf("%d notifies, %d eventfd writes", total, s.Writes())
		})
	}
}

// lostWakeupAfterRace plays the interleaving that breaks a badly ordered
// reader: a Notify lands between the reader's two steps. It then blocks a
// waiter, makes its condition true with one Notify, and reports whether that
// Notify reached the waiter (wrote the eventfd and the waiter read it). The
// waiter gives up after timeout: a wake-up that is never coming (the
// mutation) shows in the write count however long it waits, and one that
// is coming (the protocol) may come late on a busy machine.
func lostWakeupAfterRace(t *testing.T, timeout time.Duration) (woke bool) {
	s, err := NewSignal()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Notify()
	testHookBetweenSteps = s.Notify
	s.consume()
	testHookBetweenSteps = nil
	s.Wait(func() bool { return true }, 0) // a reader that finds its condition true at once

	var ready atomic.Bool
	writes := s.Writes()
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(20 * time.Millisecond)
		ready.Store(true)
		s.Notify()
	}()
	ok := s.Wait(ready.Load, timeout)
	<-done
	return ok && s.Writes() == writes+1
}

// TestSignalMutation breaks the reader's order on purpose (clear the flag,
// then read) and shows that the lost wake-up check then fails: the check
// does catch the bug it exists for.
func TestSignalMutation(t *testing.T) {
	tests := []struct {
		name            string
		clearBeforeRead bool
		wantWoke        bool
		timeout         time.Duration
	}{
		{"read then clear (the protocol)", false, true, eventBound},
		{"mutation: clear then read", true, false, 500 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testHookClearBeforeRead = tc.clearBeforeRead
			defer func() { testHookClearBeforeRead = false }()
			if got := lostWakeupAfterRace(t, tc.timeout); got != tc.wantWoke {
				t.Fatalf("waiter woke = %v, want %v", got, tc.wantWoke)
			}
		})
	}
}

// TestSignalRearmedByEachReader: after each kind of reader consumes a
// notification, the next Notify writes again (the flag was cleared), and the
// reader sees it.
func TestSignalRearmedByEachReader(t *testing.T) {
	leakCheck(t)
	loop, err := NewEventLoop("readers")
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Stop()
	type reader struct {
		name string
		// read waits for one notification and returns once it was consumed.
		read func(t *testing.T, s *Signal)
	}
	readers := []reader{
		{"Signal.Wait", func(t *testing.T, s *Signal) {
			n := s.Reads()
			if !s.Wait(func() bool { return s.Reads() > n }, 5*time.Second) {
				t.Fatal("Wait saw no notification")
			}
		}},
		{"MultiWait", func(t *testing.T, s *Signal) {
			other, _ := NewSignal()
			defer other.Close()
			mw, err := NewMultiWait(other, s)
			if err != nil {
				t.Fatal(err)
			}
			defer mw.Close()
			fired, err := mw.Wait(Now() + int64(5*time.Second))
			if err != nil || len(fired) != 1 || fired[0] != 1 {
				t.Fatalf("MultiWait fired %v, %v; want [1]", fired, err)
			}
		}},
		{"EventLoop.Watch", func(t *testing.T, s *Signal) {
			done := make(chan struct{})
			_, err := loop.Watch(s, func(r *Registration) { r.Unregister(); close(done) })
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("loop watch saw no notification")
			}
		}},
	}
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			s, err := NewSignal()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for round := 1; round <= 3; round++ {
				s.Notify()
				s.Notify()
				rd.read(t, s)
				if s.Writes() != uint64(round) || s.Reads() != uint64(round) {
					t.Fatalf("round %d: %d writes, %d reads; want %d each", round, s.Writes(), s.Reads(), round)
				}
			}
		})
	}
}
