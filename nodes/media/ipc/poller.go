package ipc

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/onairhq/onair/internal/panics"
)

// Poller serves several receivers on one thread: one poll(2) over every
// receiver's descriptors, each receiver's messages handled as its own Serve
// would. A show's browser sources share one instead of holding a thread
// each. A receiver given to a Poller is not Served otherwise; its Close
// takes it off the Poller (and returns once it has), as it ends a Serve.
type Poller struct {
	wakeFd int

	mu      sync.Mutex
	entries []pollEntry
	closing bool
	done    chan struct{}
}

type pollEntry struct {
	r       *Receiver
	deliver func(*Frame)
	sb      *serveBuffers
}

// NewPoller makes a poller; Run serves its receivers.
func NewPoller() (*Poller, error) {
	w, err := newWake()
	if err != nil {
		return nil, fmt.Errorf("poller: eventfd: %w", err)
	}
	return &Poller{wakeFd: w, done: make(chan struct{})}, nil
}

// Serve has the poller serve r, calling deliver (on the poller's thread)
// for each frame that arrives, as Receiver.Serve does. It is refused for a
// receiver that is served already or closed.
func (p *Poller) Serve(r *Receiver, deliver func(*Frame)) error {
	r.mu.Lock()
	if r.closing || r.serving {
		r.mu.Unlock()
		return fmt.Errorf("socket %s: served already, or closed", r.cfg.Path)
	}
	r.serving = true
	r.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		r.mu.Lock()
		r.serving = false
		r.mu.Unlock()
		return fmt.Errorf("socket %s: the poller is closed", r.cfg.Path)
	}
	p.entries = append(p.entries, pollEntry{r: r, deliver: deliver, sb: &serveBuffers{}})
	wake(p.wakeFd)
	return nil
}

// Run serves the receivers until Close, on the calling goroutine (a
// thread while it waits in poll). A receiver whose Close was called is
// shut down here and dropped; Run returns once Close was called and every
// receiver it served is closed, having shut them down.
func (p *Poller) Run() error {
	defer close(p.done)
	// Reused every round: a frame's wake-up allocates nothing here.
	var pfds []unix.PollFd
	var sets []pollSet
	var entries []pollEntry
	var conns []*conn
	for {
		p.mu.Lock()
		entries = append(entries[:0], p.entries...)
		closing := p.closing
		p.mu.Unlock()
		pfds = append(pfds[:0], unix.PollFd{Fd: int32(p.wakeFd), Events: unix.POLLIN})
		sets, conns = sets[:0], conns[:0]
		for _, e := range entries {
			start, cstart := len(pfds), len(conns)
			var gone bool
			if pfds, conns, gone = e.r.pollSet(pfds, conns); gone || closing {
				p.finish(e.r)
				continue
			}
			sets = append(sets, pollSet{e: e, from: start, to: len(pfds), cfrom: cstart, cto: len(conns)})
		}
		if closing {
			return nil
		}
		if _, err := unix.Poll(pfds, -1); err != nil && err != unix.EINTR {
			// Nothing can be served: every receiver is shut down (its
			// producer gets its buffers back), so that no Close waits.
			p.mu.Lock()
			p.closing = true
			left := append([]pollEntry(nil), p.entries...)
			p.mu.Unlock()
			for _, e := range left {
				p.finish(e.r)
			}
			return fmt.Errorf("poller: poll: %w", err)
		}
		if pfds[0].Revents != 0 {
			drainWake(p.wakeFd)
		}
		for _, s := range sets {
			p.dispatch(s, pfds, conns)
		}
	}
}

// dispatch serves one receiver's round; a panic in it shuts that receiver
// down (its producer gets its buffers back) and is reported to its owner.
func (p *Poller) dispatch(s pollSet, pfds []unix.PollFd, conns []*conn) {
	r := s.e.r
	defer func() {
		if v := recover(); v != nil {
			err := panics.From("serving socket "+r.cfg.Path, v, r.log)
			p.finish(r)
			if r.cfg.OnPanic != nil {
				r.cfg.OnPanic(err)
			}
		}
	}()
	r.dispatch(pfds[s.from:s.to], conns[s.cfrom:s.cto], s.e.sb, s.e.deliver)
}

type pollSet struct {
	e          pollEntry
	from, to   int // its descriptors in pfds
	cfrom, cto int // its connections in conns
}

// finish shuts a closed receiver down and drops it, on the poller's thread.
func (p *Poller) finish(r *Receiver) {
	p.mu.Lock()
	for i, e := range p.entries {
		if e.r == r {
			p.entries = append(p.entries[:i], p.entries[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	r.shutdown()
	close(r.served)
}

// Close stops Run: every receiver still served is closed (each connection
// retired, every buffer back) and Run returns. It returns once Run has, and
// frees the poller's descriptor; call it after Run started, once.
func (p *Poller) Close() {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	wake(p.wakeFd)
	<-p.done
	unix.Close(p.wakeFd)
}
