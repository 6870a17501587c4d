package runtime

// EventLoop: one epoll set on one locked OS thread.
//
// Invariants:
//   - Everything a loop runs (fd handlers, signal watches, timers, posted
//     work) runs on its own goroutine, locked to one OS thread for the loop's
//     whole life; handlers never run concurrently with each other.
//   - Registrations are one-shot (EPOLLONESHOT): after its handler runs a
//     registration stays silent until the handler (or anyone) calls Rearm.
//     epoll holds the waits; nothing is rebuilt per pass.
//   - A registration is named in epoll by a token (slot, generation), never
//     by its descriptor number, so an event for a closed and reused
//     descriptor number never reaches the handler of the old registration.
//   - A wait, work item or timer added while the loop is not asleep (from
//     its own handlers, or from anyone while it is busy) writes nothing: the
//     loop looks at its queues before it sleeps, under the same mutex the
//     adder holds. Added while it sleeps, work costs one coalesced eventfd
//     write (a Signal), and a timer no write at all unless it is due before
//     the armed deadline, in which case the adder re-arms the timerfd.
//   - Timers live in a min-heap; the one timerfd (CLOCK_MONOTONIC, absolute)
//     is armed to the earliest deadline before the loop sleeps.
//   - A panic in anything the loop runs is recovered there: logged with its
//     stack and counted (package panics), and the loop goes on. A node's
//     handlers recover their own first, and fail their node.
//   - Stop returns after the goroutine has exited and the loop's three
//     descriptors (epoll, wake eventfd, timerfd) are closed; the OS thread
//     exits with it.

import (
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
	goruntime "runtime"

	"github.com/onairhq/onair/internal/panics"
)

const (
	tokenWake  = -1
	tokenTimer = -2
)

// EventLoop runs handlers, timers and work on one OS thread.
type EventLoop struct {
	name  string
	where string // "work on loop NAME", for a panic recovered there
	epfd  int
	tfd   int
	wake  *Signal
	tid   atomic.Int32
	done  chan struct{}
	start chan error

	mu       sync.Mutex
	sleeping bool
	stopping bool
	work     []func()
	timers   timerHeap
	armed    int64 // deadline the timerfd is armed to; 0: disarmed
	regs     []*Registration
	free     []int32
	ready    []*Registration // watches re-armed with an event pending
	fdOwner  map[int]*Registration

	stats loopCounters
}

type loopCounters struct {
	wakeups     atomic.Uint64
	handlers    atomic.Uint64
	timersFired atomic.Uint64
	workItems   atomic.Uint64
	handlerNs   Histogram
	timerLateNs Histogram
}

// NewEventLoop starts a loop named name (e.g. "default", "pacing_0") on a new
// locked OS thread and returns once it runs.
func NewEventLoop(name string) (*EventLoop, error) {
	if clockOffset < 0 {
		return nil, fmt.Errorf("event loop %q: CLOCK_MONOTONIC is unavailable; the runtime needs Linux", name)
	}
	l := &EventLoop{name: name, where: "work on loop " + name, done: make(chan struct{}), start: make(chan error, 1), fdOwner: map[int]*Registration{}}
	var err error
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("event loop %q: epoll_create1: %w", name, err)
	}
	if l.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		unix.Close(l.epfd)
		return nil, fmt.Errorf("event loop %q: timerfd_create: %w", name, err)
	}
	if l.wake, err = NewSignal(); err != nil {
		unix.Close(l.epfd)
		unix.Close(l.tfd)
		return nil, fmt.Errorf("event loop %q: %w", name, err)
	}
	for _, r := range []struct {
		fd  int
		tok int32
	}{{l.wake.fd, tokenWake}, {l.tfd, tokenTimer}} {
		// Edge-triggered and never read back: each write or expiry is a new
		// edge, so neither costs the loop a read(2).
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: r.tok}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, r.fd, &ev); err != nil {
			l.closeFds()
			return nil, fmt.Errorf("event loop %q: epoll_ctl: %w", name, err)
		}
	}
	go l.run()
	if err := <-l.start; err != nil {
		<-l.done
		return nil, err
	}
	return l, nil
}

// Name is the loop's name.
func (l *EventLoop) Name() string { return l.name }

// Tid is the loop's OS thread id.
func (l *EventLoop) Tid() int { return int(l.tid.Load()) }

// OnLoop reports whether the caller runs on the loop's own thread (a
// goroutine locked to it: the loop's handlers).
func (l *EventLoop) OnLoop() bool { return unix.Gettid() == int(l.tid.Load()) }

func (l *EventLoop) closeFds() {
	unix.Close(l.epfd)
	unix.Close(l.tfd)
	l.wake.Close()
}

// wakeLocked wakes the loop if it sleeps; l.mu is held.
func (l *EventLoop) wakeLocked() {
	if l.sleeping {
		l.wake.Notify()
	}
}

// Post runs fn on the loop's thread, after the handler running now. It
// returns ErrClosed once the loop is stopping.
func (l *EventLoop) Post(fn func()) error {
	l.mu.Lock()
	if l.stopping {
		l.mu.Unlock()
		return fmt.Errorf("event loop %q: post: %w", l.name, ErrClosed)
	}
	l.work = append(l.work, fn)
	l.wakeLocked()
	l.mu.Unlock()
	return nil
}

// Do runs fn on the loop's thread and waits for it; called from the loop's
// own thread it runs fn at once.
func (l *EventLoop) Do(fn func()) error {
	if l.OnLoop() {
		fn()
		return nil
	}
	ch := make(chan struct{})
	if err := l.Post(func() { defer close(ch); fn() }); err != nil {
		return err
	}
	select {
	case <-ch:
		return nil
	case <-l.done:
		select {
		case <-ch:
			return nil
		default:
			return fmt.Errorf("event loop %q: stopped before the work ran: %w", l.name, ErrClosed)
		}
	}
}

// Stop stops the loop and waits until its goroutine has exited and its
// descriptors are closed. Work posted before Stop runs first; timers and
// registrations are dropped (their owners' descriptors stay open).
func (l *EventLoop) Stop() {
	l.mu.Lock()
	if !l.stopping {
		l.stopping = true
		l.wake.Notify()
	}
	l.mu.Unlock()
	<-l.done
}

// Done is closed when the loop has stopped.
func (l *EventLoop) Done() <-chan struct{} { return l.done }

func (l *EventLoop) run() {
	goruntime.LockOSThread() // never unlocked: the thread exits with the loop
	defer close(l.done)
	defer l.closeFds()
	l.tid.Store(int32(unix.Gettid()))
	// Timers fire on time: no slack (the default is 50 µs).
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	name := []byte(ThreadName(l.name))
	if len(name) > 15 {
		name = name[:15]
	}
	name = append(name, 0)
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafePointer(&name[0])), 0, 0, 0)
	l.start <- nil

	events := make([]unix.EpollEvent, 256)
	var batch []func()
	var readyBatch []*Registration
	for {
		// Posted work, re-armed watches with pending events, due timers.
		l.mu.Lock()
		batch, l.work = l.work, batch[:0]
		readyBatch, l.ready = l.ready, readyBatch[:0]
		l.mu.Unlock()
		t := Now()
		for i, fn := range batch {
			l.runWork(fn)
			t = l.handled(t)
			l.stats.workItems.Add(1)
			batch[i] = nil
		}
		for i, r := range readyBatch {
			l.mu.Lock()
			r.queued = false
			evs, run := r.take(0)
			l.mu.Unlock()
			if run {
				l.dispatch(r, evs, t)
				t = Now()
			}
			readyBatch[i] = nil
		}
		l.runTimers()

		// Prepare to sleep: nothing left to do, timerfd armed to the earliest.
		l.mu.Lock()
		if len(l.work) > 0 || len(l.ready) > 0 {
			l.mu.Unlock()
			continue
		}
		if l.stopping {
			l.mu.Unlock()
			return
		}
		if len(l.timers) > 0 {
			at := l.timers[0].at
			if at <= Now() {
				l.mu.Unlock()
				continue
			}
			if l.armed != at {
				l.arm(at)
			}
		}
		l.sleeping = true
		l.mu.Unlock()

		n, err := unix.EpollWait(l.epfd, events, -1)

		l.mu.Lock()
		l.sleeping = false
		l.mu.Unlock()
		l.stats.wakeups.Add(1)
		if err != nil {
			continue // EINTR
		}
		t = Now()
		for i := 0; i < n; i++ {
			ev := events[i]
			switch ev.Fd {
			case tokenWake:
				l.wake.clear()
			case tokenTimer:
				l.mu.Lock()
				l.armed = 0 // expired; re-armed before the next sleep
				l.mu.Unlock()
			default:
				l.mu.Lock()
				var r *Registration
				if int(ev.Fd) < len(l.regs) {
					r = l.regs[ev.Fd]
				}
				run := false
				evs := ev.Events
				if r != nil && r.gen == ev.Pad && r.active.Load() {
					evs, run = r.take(ev.Events)
				}
				l.mu.Unlock()
				if run {
					l.dispatch(r, evs, t)
					t = Now()
				}
			}
		}
	}
}

// handled records a handler that started at t and returns now.
func (l *EventLoop) handled(t int64) int64 {
	now := Now()
	l.stats.handlerNs.Record(now - t)
	l.stats.handlers.Add(1)
	return now
}

// arm sets the timerfd to at; l.mu is held.
func (l *EventLoop) arm(at int64) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(at)}
	if err := unix.TimerfdSettime(l.tfd, unix.TFD_TIMER_ABSTIME, &spec, nil); err == nil {
		l.armed = at
	}
}

func (l *EventLoop) runTimers() {
	for {
		now := Now()
		l.mu.Lock()
		if len(l.timers) == 0 || l.timers[0].at > now {
			l.mu.Unlock()
			return
		}
		t := l.timers.pop()
		fn := t.fn
		at := t.at
		l.mu.Unlock()
		l.stats.timerLateNs.Record(now - at)
		l.stats.timersFired.Add(1)
		l.runWork(fn)
		l.stats.handlerNs.Record(Now() - now)
		l.stats.handlers.Add(1)
	}
}

// dispatch runs r's handler (started at t); for a watch the loop first
// clears the signal's flag: the handler then checks its condition.
func (l *EventLoop) dispatch(r *Registration, events uint32, t int64) {
	if !r.active.Load() {
		return
	}
	if r.signal != nil {
		r.signal.clear()
	}
	func() {
		defer l.recoverWork()
		r.handler(r, events)
	}()
	l.handled(t)
}

// runWork runs posted work or a timer's function.
func (l *EventLoop) runWork(fn func()) {
	defer l.recoverWork()
	fn()
}

// recoverWork, deferred, keeps the loop going past a panic in what it ran.
func (l *EventLoop) recoverWork() {
	if p := recover(); p != nil {
		panics.From(l.where, p, nil).Log(nil) // no node to fail: slog's default log
	}
}

// LoopStats is one loop's counters, ready for JSON.
type LoopStats struct {
	Name string `json:"name"`
	Tid  int    `json:"tid"`
	// Wakeups counts returns from epoll_wait.
	Wakeups uint64 `json:"wakeups"`
	// WakeWrites counts eventfd writes other goroutines made to wake it.
	WakeWrites uint64 `json:"wake_writes"`
	// Handlers counts fd handlers, timers and work items run.
	Handlers      uint64            `json:"handlers"`
	HandlerNs     HistogramSnapshot `json:"handler_ns"`
	TimersFired   uint64            `json:"timers_fired"`
	TimerLateNs   HistogramSnapshot `json:"timer_late_ns"` // run time minus deadline
	WorkItems     uint64            `json:"work_items"`
	Registrations int               `json:"registrations"`
	TimersPending int               `json:"timers_pending"`
}

// Stats reads the loop's counters.
func (l *EventLoop) Stats() LoopStats {
	l.mu.Lock()
	regs, timers := len(l.fdOwner), len(l.timers)
	l.mu.Unlock()
	return LoopStats{
		Name:          l.name,
		Tid:           l.Tid(),
		Wakeups:       l.stats.wakeups.Load(),
		WakeWrites:    l.wake.Writes(),
		Handlers:      l.stats.handlers.Load(),
		HandlerNs:     l.stats.handlerNs.Snapshot(),
		TimersFired:   l.stats.timersFired.Load(),
		TimerLateNs:   l.stats.timerLateNs.Snapshot(),
		WorkItems:     l.stats.workItems.Load(),
		Registrations: regs,
		TimersPending: timers,
	}
}
