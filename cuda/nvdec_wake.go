package cuda

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// loopWake is how a decode loop sleeps between rounds: in ppoll(2) on an
// eventfd, a system call. Its thread is locked (LockOSThread), so parking
// on a channel instead would make every wake-up hand a processor of Go's
// from the waking thread to the loop's (two thread switches, and a wait
// for a processor when Go has few: go_procs); from a system call the
// kernel wakes the loop's thread itself, and it takes back any free
// processor on its way out.
//
// A poke while the loop works costs an atomic swap and no system call:
// only a poke that finds the loop asleep (or about to be) writes the
// eventfd. Pokes come from any goroutine, also after the loop has ended
// (frames released to pools); a write never meets the descriptor's close.
// (runtime.Signal is the event loops' eventfd, which writes at every
// notify an earlier read consumed and is waited on in epoll; cuda does not
// import runtime, and a decode loop skips the write while it works.)
type loopWake struct {
	fd     int // -1 until open
	fdMu   sync.RWMutex
	asleep atomic.Bool   // the loop sleeps, or is about to
	poked  atomic.Bool   // a poke the loop has not taken yet
	writes atomic.Uint64 // eventfd writes (pokes that found it asleep)
	sleeps atomic.Uint64 // sleeps that began (not those a poke had cut short)
}

func newLoopWake() *loopWake { return &loopWake{fd: -1} }

// open makes the eventfd (on the loop's thread, when Run starts).
func (w *loopWake) open() error {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("decode loop: eventfd: %w (out of file descriptors? check ulimit -n)", err)
	}
	w.fdMu.Lock()
	w.fd = fd
	w.fdMu.Unlock()
	return nil
}

// close releases the eventfd; pokes after it write nothing.
func (w *loopWake) close() {
	w.fdMu.Lock()
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
	w.fdMu.Unlock()
}

var eventfdOne = [8]byte{1}

// poke makes the loop's next sleep, or the one it is in, return. Make the
// loop's reason to run true first.
func (w *loopWake) poke() {
	if w.poked.Swap(true) {
		return // the loop has yet to take an earlier poke: it will run
	}
	if !w.asleep.Load() {
		return // it works, and looks at poked before it sleeps
	}
	w.fdMu.RLock()
	if w.fd >= 0 {
		w.writes.Add(1)
		unix.Write(w.fd, eventfdOne[:]) // EAGAIN only at the counter's maximum: still readable
	}
	w.fdMu.RUnlock()
}

// sleep returns at a poke (one made since the last sleep returned
// included), or once timeout has passed (timeout < 0: no limit). It is
// the loop's alone.
func (w *loopWake) sleep(timeout time.Duration) {
	w.asleep.Store(true)
	// A poke that saw asleep false set poked before this load: seen here.
	// One that sees asleep true writes the eventfd: ppoll returns.
	if !w.poked.Load() && w.fd >= 0 {
		w.sleeps.Add(1)
		var ts *unix.Timespec
		if timeout >= 0 {
			t := unix.NsecToTimespec(int64(timeout))
			ts = &t
		}
		fds := [1]unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		n, _ := unix.Ppoll(fds[:], ts, nil) // EINTR: a spurious round
		if n > 0 {
			var buf [8]byte
			unix.Read(w.fd, buf[:])
		}
	}
	w.asleep.Store(false)
	w.poked.Swap(false) // reads every poke before it: their conditions hold now
}
