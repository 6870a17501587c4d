package runtime

import (
	"sync"
	"testing"
)

// TestReadySetLosesNothing: many producers over many edges, one consumer
// that waits on the set's one signal and takes only the marked inputs.
func TestReadySetLosesNothing(t *testing.T) {
	leakCheck(t)
	const inputs, per = 100, 200
	set, err := NewReadySet(inputs)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	edges := make([]*Edge[int], inputs)
	for i := range edges {
		edges[i], _ = NewEdge[int](EdgeConfig{From: "src", To: "comp", Capacity: per, Policy: Block})
		defer edges[i].Release()
		edges[i].Attach(set, i)
	}
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for k := 0; k < per; k++ {
				for i := p; i < inputs; i += 4 {
					edges[i].Put(k, nil)
				}
			}
		}(p)
	}
	mw, err := NewMultiWait(set.Signal())
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Close()
	got := 0
	var ready []int
	looks, wasted := 0, 0
	for got < inputs*per {
		fired, err := mw.Wait(Now() + 5e9)
		if err != nil {
			t.Fatal(err)
		}
		if len(fired) == 0 {
			// 5 s without a wake-up while items are outstanding: lost
			t.Fatalf("no wake-up in 5 s after %d of %d items", got, inputs*per)
		}
		// A wake-up may find nothing new: a Mark made just before the
		// previous Take wrote the signal after it was read. That costs a
		// look, never an item.
		ready = set.Take(ready[:0])
		looks++
		for _, i := range ready {
			n := 0
			for {
				if _, ok := edges[i].Get(); !ok {
					break
				}
				n++
			}
			got += n
			if n == 0 {
				wasted++
			}
		}
	}
	wg.Wait()
	if w := set.Signal().Writes(); w > uint64(looks)+1 {
		t.Fatalf("%d signal writes for %d looks: the set's signal is not coalesced", w, looks)
	}
	t.Logf("%d items over %d inputs: %d looks, %d signal writes, %d marked inputs found empty", got, inputs, looks, set.Signal().Writes(), wasted)
}
