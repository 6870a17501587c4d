package runtime

// Registrations: one-shot waits owned by a loop.
//
// Invariants:
//   - A registration's epoll data is (slot, generation); a slot is reused
//     only with a new generation, so a late event for an old registration
//     is dropped.
//   - fdOwner maps a descriptor number to the registration that added it
//     last. Rearm and Unregister touch epoll only for the owner: after a
//     descriptor is closed and its number reused by a new registration, the
//     old registration's Unregister cannot remove the new one's wait.
//   - Every registration is one-shot: its handler runs once, then not again
//     until Rearm. Two mechanisms give that:
//     Register (any descriptor): EPOLLONESHOT; Rearm is epoll_ctl(MOD),
//     which reports a descriptor that is already ready at once.
//     Watch (a Signal): edge-triggered, never re-armed in the kernel; the
//     one-shot state is a flag under the loop's mutex, and an event that
//     arrives while the registration is disarmed is kept and delivered at
//     Rearm. Taking the event from epoll is the signal's read (its eventfd
//     counter is never read back: every write is a new edge), so a watch
//     costs the loop no system call besides epoll_wait: the loop clears
//     the signal's flag, then the handler checks its condition.
//   - Handlers run on the loop's thread only.

import (
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Registration is a wait on a descriptor in an EventLoop.
type Registration struct {
	loop    *EventLoop
	fd      int
	events  uint32
	slot    int32
	gen     int32
	handler func(r *Registration, events uint32)
	signal  *Signal
	active  atomic.Bool

	// Watch only, under loop.mu:
	armed   bool
	pending uint32 // events that came while disarmed
	queued  bool   // in loop.ready
}

// Register waits for events (unix.EPOLLIN, ...) on fd, one-shot: handler
// runs on the loop's thread once, and again only after r.Rearm().
func (l *EventLoop) Register(fd int, events uint32, handler func(r *Registration, events uint32)) (*Registration, error) {
	return l.register(fd, events, handler, nil)
}

// Watch waits for s to be notified, one-shot: the loop takes the
// notification (clearing the signal's flag), then runs fn on its thread; fn
// checks its condition and calls r.Rearm() to wait again. A notification
// that comes before the Rearm is delivered right after it.
func (l *EventLoop) Watch(s *Signal, fn func(r *Registration)) (*Registration, error) {
	return l.register(s.fd, unix.EPOLLIN, func(r *Registration, _ uint32) { fn(r) }, s)
}

func (l *EventLoop) register(fd int, events uint32, handler func(*Registration, uint32), s *Signal) (*Registration, error) {
	r := &Registration{loop: l, fd: fd, events: events, handler: handler, signal: s, armed: true}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopping {
		return nil, fmt.Errorf("event loop %q: register fd %d: %w", l.name, fd, ErrClosed)
	}
	if n := len(l.free); n > 0 {
		r.slot = l.free[n-1]
		l.free = l.free[:n-1]
	} else {
		r.slot = int32(len(l.regs))
		l.regs = append(l.regs, nil)
	}
	r.gen = genCounter.Add(1) // unique per registration: a reused slot never matches an old event
	ev := unix.EpollEvent{Events: events | unix.EPOLLONESHOT, Fd: r.slot, Pad: r.gen}
	if s != nil {
		ev.Events = events | unix.EPOLLET
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		l.free = append(l.free, r.slot)
		if err == unix.EEXIST {
			return nil, fmt.Errorf("event loop %q: fd %d is already registered; unregister it first", l.name, fd)
		}
		return nil, fmt.Errorf("event loop %q: epoll_ctl add fd %d: %w", l.name, fd, err)
	}
	l.regs[r.slot] = r
	l.fdOwner[fd] = r
	r.active.Store(true)
	return r, nil
}

var genCounter atomic.Int32

// Rearm lets the registration fire once more. If it is already ready (a
// notification came meanwhile), the handler runs on the loop's next pass.
func (r *Registration) Rearm() error {
	if !r.active.Load() {
		return fmt.Errorf("event loop %q: rearm fd %d: registration %w", r.loop.name, r.fd, ErrClosed)
	}
	l := r.loop
	l.mu.Lock()
	if l.stopping {
		l.mu.Unlock()
		return fmt.Errorf("event loop %q: rearm fd %d: loop %w", l.name, r.fd, ErrClosed)
	}
	if l.fdOwner[r.fd] != r {
		l.mu.Unlock()
		return fmt.Errorf("event loop %q: rearm fd %d: the descriptor was closed and its number reused", l.name, r.fd)
	}
	if r.signal != nil {
		if !r.armed {
			r.armed = true
			if r.pending != 0 && !r.queued {
				r.queued = true
				l.ready = append(l.ready, r)
				l.wakeLocked()
			}
		}
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	ev := unix.EpollEvent{Events: r.events | unix.EPOLLONESHOT, Fd: r.slot, Pad: r.gen}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, r.fd, &ev); err != nil {
		return fmt.Errorf("event loop %q: rearm fd %d: %w", l.name, r.fd, err)
	}
	return nil
}

// Unregister removes the wait. Called on the loop's thread, the handler
// never runs after it; from elsewhere a handler already running finishes.
// It is safe after the descriptor was closed (and even reused).
func (r *Registration) Unregister() {
	if !r.active.Swap(false) {
		return
	}
	l := r.loop
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fdOwner[r.fd] == r {
		delete(l.fdOwner, r.fd)
		// A stopping loop's epoll descriptor is closed or about to be: its
		// number may belong to someone else by now.
		if !l.stopping {
			unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, r.fd, nil) // ENOENT/EBADF: closed already
		}
	}
	if int(r.slot) < len(l.regs) && l.regs[r.slot] == r {
		l.regs[r.slot] = nil
		l.free = append(l.free, r.slot)
	}
}

// take decides, under l.mu, whether an event for r runs its handler now:
// a disarmed watch keeps the event for its Rearm.
func (r *Registration) take(events uint32) (uint32, bool) {
	if r.signal == nil {
		return events, true
	}
	if !r.armed {
		r.pending |= events
		return 0, false
	}
	r.armed = false
	events |= r.pending
	r.pending = 0
	return events, true
}
