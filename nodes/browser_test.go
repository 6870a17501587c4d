package nodes

import "testing"

// TestBrowserReturnQueue: three of nine frames are the return queue; a
// shorter queue keeps three for the mixer first, so three or fewer has none
// (seed 003).
func TestBrowserReturnQueue(t *testing.T) {
	want := map[int]int{1: 0, 2: 0, 3: 0, 4: 1, 5: 2, 6: 3, 7: 3, 8: 3, 9: 3}
	for q, rq := range want {
		if got := BrowserReturnQueue(q); got != rq {
			t.Errorf("browser_frame_queue %d: return queue %d, want %d", q, got, rq)
		}
	}
}
