package runtime

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onairhq/onair/internal/testwait"
)

type stamped struct{ ts int64 }

func (s *stamped) Timestamp() int64 { return s.ts }

func TestEdgePolicies(t *testing.T) {
	leakCheck(t)
	tests := []struct {
		name      string
		policy    Policy
		capacity  int
		puts      int
		wantDrops uint64
		wantQueue int
	}{
		{"drop keeps the first items", Drop, 3, 10, 7, 3},
		{"drop with room", Drop, 8, 5, 0, 5},
		{"block with room", Block, 4, 4, 0, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEdge[*stamped](EdgeConfig{From: "a", To: "b", Capacity: tc.capacity, Policy: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Release()
			for i := 0; i < tc.puts; i++ {
				if _, err := e.Put(&stamped{int64(i)}, nil); err != nil {
					t.Fatal(err)
				}
			}
			st := e.Stats()
			if st.Drops != tc.wantDrops || st.Occupied != tc.wantQueue {
				t.Fatalf("drops %d, occupied %d; want %d, %d", st.Drops, st.Occupied, tc.wantDrops, tc.wantQueue)
			}
			if st.LastTimestamp != int64(tc.wantQueue-1) {
				t.Fatalf("last timestamp %d, want %d", st.LastTimestamp, tc.wantQueue-1)
			}
			if st.ProducedWrites != 1 {
				t.Fatalf("%d puts with nobody reading wrote the produced eventfd %d times, want 1", tc.puts, st.ProducedWrites)
			}
			for i := 0; i < tc.wantQueue; i++ {
				v, ok := e.Get()
				if !ok || v.ts != int64(i) {
					t.Fatalf("get %d: %v %v, want item %d (FIFO)", i, v, ok, i)
				}
			}
			st = e.Stats()
			if st.EnqueuedTotal != st.DequeuedTotal+uint64(st.Occupied) || st.EnqueuedTotal+st.Drops != uint64(tc.puts) {
				t.Fatalf("accounting: %+v for %d puts", st, tc.puts)
			}
		})
	}
	if _, err := NewEdge[int](EdgeConfig{From: "a", To: "b"}); err == nil {
		t.Fatal("an edge of capacity 0 was accepted")
	}
	if _, err := ParsePolicy("sometimes"); err == nil {
		t.Fatal(`policy "sometimes" was accepted`)
	}
}

// TestEdgeBlockingHandoff: a fast producer and a slow consumer over a small
// block edge lose nothing and keep order.
func TestEdgeBlockingHandoff(t *testing.T) {
	leakCheck(t)
	e, err := NewEdge[int](EdgeConfig{From: "p", To: "c", Capacity: 2, Policy: Block})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Release()
	const n = 5000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			if ok, err := e.Put(i, nil); !ok || err != nil {
				t.Errorf("put %d: %v %v", i, ok, err)
				return
			}
		}
	}()
	for i := 0; i < n; i++ {
		v, ok := e.Take(5*time.Second, nil)
		if !ok || v != i {
			t.Fatalf("take %d: got %d %v", i, v, ok)
		}
	}
	wg.Wait()
	if st := e.Stats(); st.Drops != 0 || st.DequeuedTotal != n {
		t.Fatalf("stats %+v", st)
	}
}

func TestEdgeCancelAndClose(t *testing.T) {
	leakCheck(t)
	e, _ := NewEdge[int](EdgeConfig{From: "p", To: "c", Capacity: 1, Policy: Block})
	defer e.Release()
	e.Put(1, nil)
	// The waiter asks cancel before it sleeps: once it has asked, it is
	// waiting (or about to), and the wake-up below must end that wait.
	var stop, asked atomic.Bool
	cancel := func() bool { asked.Store(true); return stop.Load() }
	res := make(chan error, 1)
	go func() { _, err := e.Put(2, cancel); res <- err }()
	testwait.Until(t, testwait.Bound, "the blocked put to check cancel", asked.Load)
	stop.Store(true)
	e.Consumed().Notify() // what the executor does to wake a stopping node
	if err := <-res; !errors.Is(err, ErrCancelled) {
		t.Fatalf("cancelled put returned %v, want ErrCancelled", err)
	}
	got := make(chan bool, 1)
	e.Get()
	var waiting atomic.Bool
	go func() { _, ok := e.Take(-1, func() bool { waiting.Store(true); return false }); got <- ok }()
	testwait.Until(t, testwait.Bound, "the take to wait on the empty edge", waiting.Load)
	e.Close()
	if <-got {
		t.Fatal("take on a closed empty edge returned an item")
	}
	if _, err := e.Put(3, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("put on a closed edge: %v, want ErrClosed", err)
	}
}

// TestEdgeLeavesAQueuedItemAlone: once an item is queued it is the
// consumer's, which may take it and change it at once (the realtime pacer
// restamps every frame it takes); the edge reads nothing of it after the
// hand-over, and reports the timestamp the producer put. Under -race (make
// test runs runtime/ so) a read after the hand-over is reported whatever
// the interleaving.
func TestEdgeLeavesAQueuedItemAlone(t *testing.T) {
	leakCheck(t)
	e, _ := NewEdge[*tframe](EdgeConfig{From: "p", To: "c", Capacity: 1, Policy: Block})
	defer e.Release()
	const n = 1000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < n; i++ {
			f, ok := e.Take(-1, nil)
			if !ok {
				return
			}
			f.pts = -f.pts // restamped by the consumer
		}
	}()
	for i := 1; i <= n; i++ {
		if _, err := e.Put(&tframe{pts: int64(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if st := e.Stats(); st.LastTimestamp != n || st.DequeuedTotal != n {
		t.Fatalf("last timestamp %d after %d items taken, want %d (what the producer put)", st.LastTimestamp, st.DequeuedTotal, n)
	}
}

// PutNewest, for a consumer that has not started: a full edge gives up its
// oldest item for the new one (returned, counted as a drop), keeps its
// order, and the consumer's first take is still its first (Taken).
func TestEdgePutNewestKeepsTheNewest(t *testing.T) {
	leakCheck(t)
	e, err := NewEdge[int](EdgeConfig{From: "a", To: "b", Capacity: 3, Policy: Drop})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Release()
	var out []int
	for i := range 10 {
		old, replaced, err := e.PutNewest(i)
		if err != nil {
			t.Fatal(err)
		}
		if replaced {
			out = append(out, old)
		}
	}
	if want := []int{0, 1, 2, 3, 4, 5, 6}; len(out) != len(want) || out[0] != 0 || out[6] != 6 {
		t.Errorf("gave up %v, want %v", out, want)
	}
	if e.Taken() {
		t.Error("giving up the oldest counted as the consumer's take")
	}
	if d := e.Stats().Drops; d != 7 {
		t.Errorf("%d drops counted, want 7", d)
	}
	for _, want := range []int{7, 8, 9} {
		if v, ok := e.Get(); !ok || v != want {
			t.Fatalf("took %d (%v), want %d", v, ok, want)
		}
	}
	e.Close()
	if _, _, err := e.PutNewest(1); !errors.Is(err, ErrClosed) {
		t.Errorf("PutNewest on a closed edge: %v, want ErrClosed", err)
	}
}
