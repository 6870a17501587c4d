package frame

import "testing"

// A capped list hands out what came back first, allocates up to its cap,
// gives a failed allocation's count back, wakes its notify on each return,
// and after Close refuses what comes back (the pool frees it).
func TestFreeListCountsAndRefusesAfterClose(t *testing.T) {
	l := NewFreeList[int](2)
	notified := 0
	l.SetNotify(func() { notified++ })
	if _, fresh, ok := l.Get(); !fresh || !ok {
		t.Fatalf("first Get: fresh %v ok %v, want a slot to allocate", fresh, ok)
	}
	if _, fresh, ok := l.Get(); !fresh || !ok {
		t.Fatalf("second Get: fresh %v ok %v", fresh, ok)
	}
	if _, _, ok := l.Get(); ok || l.Available() != 0 {
		t.Fatalf("a third Get of a list capped at 2: ok %v, %d available", ok, l.Available())
	}
	l.Unget() // the second allocation failed
	if l.Allocated() != 1 || l.Available() != 1 {
		t.Fatalf("after Unget: %d allocated, %d available", l.Allocated(), l.Available())
	}
	if !l.Put(7) || notified != 1 || l.Free() != 1 {
		t.Fatalf("Put: notified %d, %d free", notified, l.Free())
	}
	if v, fresh, ok := l.Get(); v != 7 || fresh || !ok {
		t.Fatalf("Get after Put: %d fresh %v ok %v, want 7 back", v, fresh, ok)
	}
	l.Put(7)
	if free := l.Close(); len(free) != 1 || free[0] != 7 || l.Allocated() != 0 || !l.Closed() {
		t.Fatalf("Close returned %v, %d allocated", free, l.Allocated())
	}
	l.Get() // a Get after Close still counts an allocation...
	if l.Put(8) || l.Allocated() != 0 || notified != 2 {
		t.Fatalf("a Put after Close: %d allocated, notified %d; want it refused", l.Allocated(), notified)
	}
}
