package frame

import "sync"

// FreeList is the bookkeeping every frame pool shares (host frames here,
// device frames in package cuda): the frames that came back, how many the
// pool has allocated, its cap, and whether it was closed. The pool makes
// and frees the frames themselves. After warm-up nothing allocates. It is
// safe for concurrent use; the zero value is an empty, uncapped list.
type FreeList[T any] struct {
	mu        sync.Mutex
	free      []T
	allocated int
	max       int // 0: no cap
	closed    bool
	notify    func() // called after a frame comes back
}

// NewFreeList returns a list of at most max frames (0: no cap).
func NewFreeList[T any](max int) *FreeList[T] { return &FreeList[T]{max: max} }

// Get takes a frame that came back (fresh false); or, when none waits,
// counts one more allocated and reports fresh, for the caller to allocate
// (Unget gives the count back if it cannot); or, when a capped list has
// every frame out, reports ok false.
func (l *FreeList[T]) Get() (t T, fresh, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		t = l.free[n-1]
		var zero T
		l.free[n-1] = zero
		l.free = l.free[:n-1]
		return t, false, true
	}
	if l.max > 0 && l.allocated >= l.max {
		return t, false, false
	}
	l.allocated++
	return t, true, true
}

// Unget gives back the count of a fresh Get whose allocation failed.
func (l *FreeList[T]) Unget() {
	l.mu.Lock()
	l.allocated--
	l.mu.Unlock()
}

// Put hands a frame back. It reports false once the list is closed: the
// frame is no longer counted, and the caller frees it.
func (l *FreeList[T]) Put(t T) bool {
	l.mu.Lock()
	if l.closed {
		l.allocated--
		l.mu.Unlock()
		return false
	}
	l.free = append(l.free, t)
	notify := l.notify
	l.mu.Unlock()
	if notify != nil {
		notify()
	}
	return true
}

// Close marks the list closed and returns the frames waiting in it (no
// longer counted), for the caller to free; frames still out come back to
// Put, which refuses them.
func (l *FreeList[T]) Close() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	free := l.free
	l.free, l.closed = nil, true
	l.allocated -= len(free)
	return free
}

// Closed reports whether Close was called.
func (l *FreeList[T]) Closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// SetNotify makes Put call fn (on the putting goroutine, without holding
// the list's lock) each time a frame comes back.
func (l *FreeList[T]) SetNotify(fn func()) {
	l.mu.Lock()
	l.notify = fn
	l.mu.Unlock()
}

// Allocated is how many frames the pool has allocated and not let go.
func (l *FreeList[T]) Allocated() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.allocated
}

// Free is how many frames wait in the list.
func (l *FreeList[T]) Free() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.free)
}

// Available is how many frames Get can hand out now: those waiting and
// those a capped list may still allocate.
func (l *FreeList[T]) Available() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max <= 0 {
		return int(^uint(0) >> 1)
	}
	return len(l.free) + l.max - l.allocated
}
