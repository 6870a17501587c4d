package runtime

// Edge: a bounded queue between two nodes.
//
// Invariants:
//   - At most Capacity items are queued; items leave in the order they came.
//   - enqueued_total = dequeued_total + occupied, always (read under the
//     lock); drops counts items refused by a full drop-policy edge and is
//     never touched on a block-policy edge.
//   - Every accepted Put notifies Produced once (and marks the edge's input
//     in an attached ReadySet); every Get that takes an item notifies
//     Consumed once. Both are coalesced Signals: a burst
//     costs one eventfd write per read by the other side.
//   - Close wakes every waiter; a closed edge refuses Put and still gives
//     out what it holds. Release (after every user has stopped) frees the
//     two eventfds.
//   - An edge outlives the nodes at its ends: restarting a group keeps the
//     frames its edges hold.

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Policy is what Put does on a full edge.
type Policy int

const (
	// Block waits for room.
	Block Policy = iota
	// Drop refuses the new item and counts it.
	Drop
)

func (p Policy) String() string {
	if p == Drop {
		return "drop"
	}
	return "block"
}

// ParsePolicy reads a plan edge's policy: "block" (or empty) or "drop".
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "", "block":
		return Block, nil
	case "drop":
		return Drop, nil
	}
	return Block, fmt.Errorf("edge policy %q: want \"block\" or \"drop\"", s)
}

// ErrCancelled is returned by a Put whose cancel function said to give up.
var ErrCancelled = errors.New("cancelled")

// Timestamped items report their timestamp, kept as the edge's last
// timestamp. Items that do not implement it leave it at 0.
type Timestamped interface{ Timestamp() int64 }

// EdgeConfig describes an edge; Capacity must be at least 1.
type EdgeConfig struct {
	From, To string
	Capacity int
	Policy   Policy
}

// Edge is a bounded FIFO of T between two nodes.
type Edge[T any] struct {
	cfg      EdgeConfig
	name     string
	produced *Signal
	consumed *Signal

	mu     sync.Mutex
	buf    []T
	head   int
	n      int
	closed bool

	enqueued atomic.Uint64
	dequeued atomic.Uint64
	drops    atomic.Uint64
	lastPut  atomic.Int64
	lastTS   atomic.Int64
	ready    atomic.Pointer[readyLink]
}

// Attach makes every accepted Put mark input i of set (as well as notify
// Produced); nil detaches. If items are queued already, i is marked now.
func (e *Edge[T]) Attach(set *ReadySet, i int) {
	if set == nil {
		e.ready.Store(nil)
		return
	}
	e.ready.Store(&readyLink{set: set, i: i})
	if e.Len() > 0 {
		set.Mark(i)
	}
}

// NewEdge makes an edge.
func NewEdge[T any](cfg EdgeConfig) (*Edge[T], error) {
	name := cfg.From + " -> " + cfg.To
	if cfg.Capacity < 1 {
		return nil, fmt.Errorf("edge %s: capacity %d: must be at least 1", name, cfg.Capacity)
	}
	p, err := NewSignal()
	if err != nil {
		return nil, fmt.Errorf("edge %s: %w", name, err)
	}
	c, err := NewSignal()
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("edge %s: %w", name, err)
	}
	return &Edge[T]{cfg: cfg, name: name, produced: p, consumed: c, buf: make([]T, cfg.Capacity)}, nil
}

// Name is "FROM -> TO".
func (e *Edge[T]) Name() string { return e.name }

// Config is the edge's configuration.
func (e *Edge[T]) Config() EdgeConfig { return e.cfg }

// Produced is notified after each accepted Put: wait on it (Signal.Wait, a
// MultiWait, EventLoop.Watch) to learn that items arrived.
func (e *Edge[T]) Produced() *Signal { return e.produced }

// Consumed is notified after each Get that took an item: wait on it to
// learn that there is room.
func (e *Edge[T]) Consumed() *Signal { return e.consumed }

// TryPut queues v if there is room and reports whether it did. It never
// counts a drop: a loop node that must not block uses it and waits on
// Consumed for room.
func (e *Edge[T]) TryPut(v T) (bool, error) {
	_, _, ok, err := e.put(v, false)
	return ok, err
}

// PutNewest queues v; on a full edge it first takes the oldest item out
// and returns it (the caller releases it), counting a drop. It is for a
// producer whose consumer has not started yet (Taken is false): the edge
// then holds the newest items, not the first ones, when the consumer
// starts. Taking the oldest out does not count as the consumer's take.
func (e *Edge[T]) PutNewest(v T) (old T, replaced bool, err error) {
	old, replaced, _, err = e.put(v, true)
	return old, replaced, err
}

// put queues v; on a full edge it gives up (evict false) or takes the
// oldest item out for v, counting a drop (evict true).
func (e *Edge[T]) put(v T, evict bool) (old T, replaced, ok bool, err error) {
	// Read v's timestamp before v is queued: once it is, its consumer owns
	// it and may be changing it.
	ts, stamped := any(v).(Timestamped)
	var at int64
	if stamped {
		at = ts.Timestamp()
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return old, false, false, fmt.Errorf("edge %s: put: %w", e.name, ErrClosed)
	}
	if e.n == len(e.buf) {
		if !evict {
			e.mu.Unlock()
			return old, false, false, nil
		}
		var zero T
		old, replaced = e.buf[e.head], true
		e.buf[e.head] = zero
		e.head = (e.head + 1) % len(e.buf)
		e.n--
		e.drops.Add(1)
	}
	e.buf[(e.head+e.n)%len(e.buf)] = v
	e.n++
	e.enqueued.Add(1)
	e.mu.Unlock()
	e.lastPut.Store(Now())
	if stamped {
		e.lastTS.Store(at)
	}
	if rl := e.ready.Load(); rl != nil {
		rl.set.Mark(rl.i)
	}
	e.produced.Notify()
	return old, replaced, true, nil
}

// Put queues v following the edge's policy. On a full drop edge it refuses
// v, counts the drop and returns (false, nil): the caller still owns v. On a
// full block edge it waits for room; cancel (may be nil) is checked at each
// wake-up and ends the wait with ErrCancelled. A closed edge returns
// ErrClosed.
func (e *Edge[T]) Put(v T, cancel func() bool) (bool, error) {
	for {
		ok, err := e.TryPut(v)
		if ok || err != nil {
			return ok, err
		}
		if e.cfg.Policy == Drop {
			e.drops.Add(1)
			return false, nil
		}
		e.consumed.Wait(func() bool {
			return e.hasRoom() || (cancel != nil && cancel())
		}, -1)
		if cancel != nil && cancel() && !e.hasRoom() {
			return false, fmt.Errorf("edge %s: put: %w", e.name, ErrCancelled)
		}
	}
}

// Taken reports whether the consumer has taken an item yet. An edge whose
// consumer has not is still waiting for that node's group to start: what it
// refuses then was never due downstream.
func (e *Edge[T]) Taken() bool { return e.dequeued.Load() > 0 }

func (e *Edge[T]) hasRoom() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed || e.n < len(e.buf)
}

// Get takes the oldest item, if any. A closed edge still gives out what it
// holds.
func (e *Edge[T]) Get() (T, bool) {
	var zero T
	e.mu.Lock()
	if e.n == 0 {
		e.mu.Unlock()
		return zero, false
	}
	v := e.buf[e.head]
	e.buf[e.head] = zero
	e.head = (e.head + 1) % len(e.buf)
	e.n--
	e.dequeued.Add(1)
	e.mu.Unlock()
	e.consumed.Notify()
	return v, true
}

// Take waits up to timeout (< 0: no limit) for an item. It reports false on
// timeout, or when the edge is closed and empty, or when cancel says so.
func (e *Edge[T]) Take(timeout time.Duration, cancel func() bool) (T, bool) {
	for {
		if v, ok := e.Get(); ok {
			return v, true
		}
		var zero T
		if e.isClosed() || (cancel != nil && cancel()) {
			return zero, false
		}
		if !e.produced.Wait(func() bool {
			return e.Len() > 0 || e.isClosed() || (cancel != nil && cancel())
		}, timeout) {
			return zero, false
		}
	}
}

// Len is the number of items queued.
func (e *Edge[T]) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

func (e *Edge[T]) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// Close refuses further puts and wakes every waiter on either side.
func (e *Edge[T]) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.produced.Notify()
	e.consumed.Notify()
}

// Drain takes every queued item (for a caller that releases buffers).
func (e *Edge[T]) Drain() []T {
	var out []T
	for {
		v, ok := e.Get()
		if !ok {
			return out
		}
		out = append(out, v)
	}
}

// Release frees the edge's descriptors. Call it once nothing uses the edge.
func (e *Edge[T]) Release() {
	e.Close()
	e.produced.Close()
	e.consumed.Close()
}

// EdgeStats is an edge's counters, ready for JSON.
type EdgeStats struct {
	Name          string `json:"name"`
	From          string `json:"from"`
	To            string `json:"to"`
	Capacity      int    `json:"capacity"`
	Policy        string `json:"policy"`
	Occupied      int    `json:"occupied"`
	EnqueuedTotal uint64 `json:"enqueued_total"`
	DequeuedTotal uint64 `json:"dequeued_total"`
	Drops         uint64 `json:"drops"`
	// LastEnqueueNs is the monotonic time of the last accepted put; 0: none yet.
	LastEnqueueNs int64 `json:"last_enqueue_ns"`
	// LastTimestamp is the last accepted item's own timestamp (Timestamped),
	// in the item's own unit: for frames, a source's frame number before its
	// pacer, monotonic ns after it, a bus's tick number after a compositor.
	LastTimestamp  int64  `json:"last_timestamp"`
	ProducedWrites uint64 `json:"produced_writes"` // eventfd writes on the produced signal
	ConsumedWrites uint64 `json:"consumed_writes"`
}

// Stats reads the edge's counters; occupied, enqueued and dequeued are read
// together, so enqueued = dequeued + occupied.
func (e *Edge[T]) Stats() EdgeStats {
	e.mu.Lock()
	occ, enq, deq := e.n, e.enqueued.Load(), e.dequeued.Load()
	e.mu.Unlock()
	return EdgeStats{
		Name: e.name, From: e.cfg.From, To: e.cfg.To, Capacity: e.cfg.Capacity, Policy: e.cfg.Policy.String(),
		Occupied: occ, EnqueuedTotal: enq, DequeuedTotal: deq, Drops: e.drops.Load(),
		LastEnqueueNs: e.lastPut.Load(), LastTimestamp: e.lastTS.Load(),
		ProducedWrites: e.produced.Writes(), ConsumedWrites: e.consumed.Writes(),
	}
}
