package runtime

// Signal: an eventfd written only when the last write was read.
//
// Invariants:
//   - pending is true from the Notify that wrote the eventfd until a reader
//     has read the eventfd back to zero and cleared pending, in that order.
//     While pending is true no other Notify writes: a burst of Notify calls
//     costs one write(2), however many producers.
//   - Every reader (Signal.Wait, MultiWait, the event loop's watch) reads the
//     descriptor first, then clears pending, then checks its own condition
//     again. (The loop watches edge-triggered: taking the edge from epoll is
//     its read, and the counter is never read back.) Clearing before reading could swallow a write made in between
//     and leave pending true with nothing to read: every later Notify would
//     then be skipped, a lost wake-up forever. TestSignalMutation shows it.
//   - A producer makes its condition true before calling Notify; a reader
//     that finds its condition false after clearing will be woken by the
//     next Notify.

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// ErrClosed is returned by operations on a closed signal, edge or loop.
var ErrClosed = errors.New("closed")

// Signal is a coalesced wake-up between goroutines and threads, backed by a
// non-blocking eventfd so that an epoll set (an EventLoop or a MultiWait)
// can wait on it.
type Signal struct {
	fd      int
	fdMu    sync.RWMutex // a write never meets a Close: the number may be reused
	pending atomic.Bool
	closed  atomic.Bool
	writes  atomic.Uint64 // eventfd writes made
	reads   atomic.Uint64 // eventfd reads that consumed a write
}

// Test hooks that break the protocol on purpose (mutation checks). Never set
// outside tests.
var (
	testHookClearBeforeRead bool   // clear pending before reading the eventfd
	testHookBetweenSteps    func() // runs between the two steps of consume
)

// NewSignal creates a signal with its own eventfd.
func NewSignal() (*Signal, error) {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("signal: eventfd: %w (is the process out of file descriptors? check ulimit -n)", err)
	}
	return &Signal{fd: fd}, nil
}

// Fd is the eventfd, for registration in an epoll set.
func (s *Signal) Fd() int { return s.fd }

var one = [8]byte{1, 0, 0, 0, 0, 0, 0, 0}

// Notify wakes a reader, writing the eventfd only if the last write was read.
// Safe from any goroutine; make the reader's condition true first.
func (s *Signal) Notify() {
	if !s.pending.CompareAndSwap(false, true) {
		return
	}
	s.fdMu.RLock()
	if !s.closed.Load() {
		s.writes.Add(1)
		unix.Write(s.fd, one[:]) // EAGAIN only if the counter is at its maximum: still readable
	}
	s.fdMu.RUnlock()
}

// consume is the reader's half: read the eventfd, then clear pending. It
// reports whether a write was consumed. The caller then checks its condition.
func (s *Signal) consume() bool {
	var buf [8]byte
	if testHookClearBeforeRead {
		s.pending.Store(false)
		if testHookBetweenSteps != nil {
			testHookBetweenSteps()
		}
		n, _ := unix.Read(s.fd, buf[:])
		if n == 8 {
			s.reads.Add(1)
		}
		return n == 8
	}
	n, _ := unix.Read(s.fd, buf[:])
	if testHookBetweenSteps != nil {
		testHookBetweenSteps()
	}
	s.pending.Store(false)
	if n == 8 {
		s.reads.Add(1)
	}
	return n == 8
}

// clear is the edge-triggered reader's half (an EventLoop watch): taking
// the edge from epoll was the read, so only the flag is cleared. The
// eventfd's counter is left to grow; every later write is a new edge.
func (s *Signal) clear() {
	if s.pending.Swap(false) {
		s.reads.Add(1)
	}
}

// Wait blocks until cond is true or the timeout passes (timeout < 0: no
// limit), and reports whether cond became true. It checks cond first, and
// again after every wake-up, so a Notify made at any point after cond turned
// true is never lost. Only one goroutine should Wait on a signal at a time.
func (s *Signal) Wait(cond func() bool, timeout time.Duration) bool {
	var deadline int64
	if timeout >= 0 {
		deadline = Now() + int64(timeout)
	}
	fds := []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}}
	for {
		if cond() {
			return true
		}
		if s.closed.Load() {
			return cond()
		}
		ms := -1
		if timeout >= 0 {
			left := deadline - Now()
			if left <= 0 {
				return cond()
			}
			ms = int((left + 999_999) / 1_000_000)
		}
		n, err := unix.Poll(fds, ms)
		if err != nil && err != unix.EINTR {
			return cond()
		}
		if n > 0 {
			s.consume()
		}
	}
}

// Writes is how many times Notify wrote the eventfd; Reads how many of those
// writes a reader consumed.
func (s *Signal) Writes() uint64 { return s.writes.Load() }

// Reads is how many eventfd writes readers consumed.
func (s *Signal) Reads() uint64 { return s.reads.Load() }

// Close releases the eventfd. Unregister the signal from loops and
// MultiWaits first. A Notify racing with Close either writes before the
// descriptor closes or does nothing; never to a reused number.
func (s *Signal) Close() error {
	s.fdMu.Lock()
	defer s.fdMu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	return unix.Close(s.fd)
}
