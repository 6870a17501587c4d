package runtime

// MultiWait: wait on several signals and learn which fired.
//
// Invariants:
//   - A MultiWait owns one epoll set and one timerfd, for one goroutine.
//     Signals are registered level-triggered with their index as the epoll
//     data, so an index names the signal it was added as, whatever its fd.
//   - Wait consumes each fired signal (read the eventfd, then clear the
//     flag) before it returns, so the caller must look at every input it
//     returns: their conditions are the caller's to check again, and a
//     Notify made after the consume writes again.
//   - A deadline (monotonic ns) arms the timerfd; Wait returns at the
//     deadline with no indices if nothing fired.

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// MultiWait waits for any of a set of signals (an Edge's Produced signal, a
// stop signal, ...) and says which fired, so a compositor takes frames only
// from the inputs that signalled.
type MultiWait struct {
	epfd   int
	tfd    int
	armed  int64
	sigs   []*Signal
	events []unix.EpollEvent
	fired  []int
}

const multiWaitTimer = -1

// NewMultiWait makes a wait over sigs; sigs[i] is reported as index i.
func NewMultiWait(sigs ...*Signal) (*MultiWait, error) {
	m := &MultiWait{epfd: -1, tfd: -1}
	var err error
	if m.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("multi-wait: epoll_create1: %w", err)
	}
	if m.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		m.Close()
		return nil, fmt.Errorf("multi-wait: timerfd_create: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: multiWaitTimer}
	if err := unix.EpollCtl(m.epfd, unix.EPOLL_CTL_ADD, m.tfd, &ev); err != nil {
		m.Close()
		return nil, fmt.Errorf("multi-wait: epoll_ctl timerfd: %w", err)
	}
	for _, s := range sigs {
		if _, err := m.Add(s); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// Add adds a signal and returns its index.
func (m *MultiWait) Add(s *Signal) (int, error) {
	i := len(m.sigs)
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(i)}
	if err := unix.EpollCtl(m.epfd, unix.EPOLL_CTL_ADD, s.fd, &ev); err != nil {
		return -1, fmt.Errorf("multi-wait: add signal %d (fd %d): %w; a signal can be added once", i, s.fd, err)
	}
	m.sigs = append(m.sigs, s)
	m.events = make([]unix.EpollEvent, len(m.sigs)+1)
	return i, nil
}

// Wait blocks until at least one signal fired or the deadline (monotonic ns,
// see Now; 0 for none) passes, and returns the indices of the signals that
// fired, consumed. The slice is reused by the next Wait.
func (m *MultiWait) Wait(deadline int64) ([]int, error) {
	m.fired = m.fired[:0]
	timeout := -1
	if deadline > 0 {
		if deadline <= Now() {
			timeout = 0
		} else if deadline != m.armed {
			spec := unix.ItimerSpec{Value: unix.NsecToTimespec(deadline)}
			if err := unix.TimerfdSettime(m.tfd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
				return nil, fmt.Errorf("multi-wait: timerfd_settime: %w", err)
			}
			m.armed = deadline
		}
	}
	for {
		n, err := unix.EpollWait(m.epfd, m.events, timeout)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("multi-wait: epoll_wait: %w", err)
		}
		timedOut := n == 0
		for _, ev := range m.events[:n] {
			if ev.Fd == multiWaitTimer {
				var buf [8]byte
				if k, _ := unix.Read(m.tfd, buf[:]); k == 8 {
					m.armed = 0
				}
				if deadline > 0 && Now() >= deadline {
					timedOut = true
				}
				continue
			}
			if m.sigs[ev.Fd].consume() {
				m.fired = append(m.fired, int(ev.Fd))
			}
		}
		if len(m.fired) > 0 || timedOut || timeout == 0 {
			return m.fired, nil
		}
	}
}

// Close releases the epoll set and timerfd (not the signals).
func (m *MultiWait) Close() error {
	if m.epfd >= 0 {
		unix.Close(m.epfd)
		m.epfd = -1
	}
	if m.tfd >= 0 {
		unix.Close(m.tfd)
		m.tfd = -1
	}
	return nil
}
