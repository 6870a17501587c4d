package events

import "testing"

// TestPublishNeverWaits: with the hub's goroutine stopped (as if it were
// starved), Publish still returns at once, and counts what it dropped.
func TestPublishNeverWaits(t *testing.T) {
	h := NewHub()
	h.Close()
	for i := 0; i < 10000; i++ {
		h.Publish("switch", i)
	}
	if h.Dropped() != 10000-uint64(cap(h.in)) {
		t.Errorf("dropped %d of 10000 with a buffer of %d", h.Dropped(), cap(h.in))
	}
}
