package runtime

// Timers: a min-heap of deadlines per loop.
//
// Invariants:
//   - Each *Timer is in at most one heap position; idx is its index there,
//     or -1 when it is not scheduled. All heap access holds loop.mu.
//   - A timer's callback runs on the loop's thread once per Reset/AddTimer,
//     at or after its deadline; lateness (run time minus deadline) is
//     recorded in the loop's histogram.

// Timer is a one-shot deadline on an EventLoop; Reset schedules it again
// without allocating.
type Timer struct {
	loop *EventLoop
	at   int64
	fn   func()
	idx  int
}

// AddTimer runs fn on the loop's thread at or after the monotonic time at
// (ns, see Now).
func (l *EventLoop) AddTimer(at int64, fn func()) *Timer {
	t := &Timer{loop: l, fn: fn, idx: -1}
	t.Reset(at)
	return t
}

// NewTimer makes an unscheduled timer; Reset schedules it.
func (l *EventLoop) NewTimer(fn func()) *Timer { return &Timer{loop: l, fn: fn, idx: -1} }

// Reset (re)schedules the timer at at, replacing any earlier schedule.
func (t *Timer) Reset(at int64) {
	l := t.loop
	l.mu.Lock()
	if l.stopping {
		l.mu.Unlock()
		return
	}
	t.at = at
	if t.idx >= 0 {
		l.timers.fix(t.idx)
	} else {
		l.timers.push(t)
	}
	// Asleep and armed later than this (or not at all): re-arm, no wake-up.
	if l.sleeping && l.timers[0] == t && (l.armed == 0 || at < l.armed) {
		l.arm(at)
	}
	l.mu.Unlock()
}

// Stop unschedules the timer; it reports whether it was scheduled.
func (t *Timer) Stop() bool {
	l := t.loop
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.idx < 0 {
		return false
	}
	l.timers.remove(t.idx)
	return true
}

// Deadline is the time the timer is (or was last) scheduled for.
func (t *Timer) Deadline() int64 {
	t.loop.mu.Lock()
	defer t.loop.mu.Unlock()
	return t.at
}

type timerHeap []*Timer

func (h timerHeap) less(i, j int) bool { return h[i].at < h[j].at }

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx = i
	h[j].idx = j
}

func (h *timerHeap) push(t *Timer) {
	t.idx = len(*h)
	*h = append(*h, t)
	h.up(t.idx)
}

func (h *timerHeap) pop() *Timer { return h.remove(0) }

func (h *timerHeap) remove(i int) *Timer {
	old := *h
	n := len(old) - 1
	t := old[i]
	if i != n {
		old.swap(i, n)
	}
	old[n] = nil
	*h = old[:n]
	if i != n {
		h.fix(i)
	}
	t.idx = -1
	return t
}

func (h timerHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h timerHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h timerHeap) down(i0 int) bool {
	i, n := i0, len(h)
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if r := j + 1; r < n && h.less(r, j) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}
