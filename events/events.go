// Package events is the hub of a show's events: what happened on air
// (switches, tally, source errors, missed deadlines), kept in a ring for
// the clients that watch. The backends publish to it; control streams it
// over GET /events. It imports nothing of onair.
package events

import (
	"sync"
	"sync/atomic"
	"time"
)

// Event is one thing that happened on air. Type names it ("switch",
// "on_air", "preview", "tally", "source_error", "source_ok",
// "missed_deadline"); Data is its JSON payload.
type Event struct {
	Seq  uint64    `json:"seq"`
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Timecode is the show's timecode when the event was published (the
	// tick presented then); an event about a tick also has that tick's in
	// its data.
	Timecode string `json:"timecode,omitempty"`
	Data     any    `json:"data,omitempty"`
}

// EventRing is how many recent events a Hub keeps for clients that fall
// behind or reconnect with Last-Event-ID.
const EventRing = 1024

// Hub takes a show's events and keeps the most recent for the /events
// stream's clients. Publish never blocks: it hands the event to the hub's
// goroutine through a buffered channel and counts the event as dropped
// when that is full (nobody on air waits for an operator's screen). Each
// client reads the ring at its own pace; one that falls more than
// EventRing events behind is told how many it lost.
type Hub struct {
	timecode func() string // nil: events carry none
	in       chan Event
	dropped  atomic.Uint64
	stop     chan struct{}
	done     chan struct{}

	mu   sync.Mutex
	ring [EventRing]Event
	last uint64        // Seq of the newest event; 0: none yet
	wake chan struct{} // closed when an event arrives, then replaced
}

// NewHub starts a hub whose events carry no timecode; Close stops it.
func NewHub() *Hub { return NewTimecodeHub(nil) }

// NewTimecodeHub starts a hub that stamps every event with timecode(), the
// show's timecode now; Close stops it.
func NewTimecodeHub(timecode func() string) *Hub {
	h := &Hub{timecode: timecode, in: make(chan Event, 4096), stop: make(chan struct{}), done: make(chan struct{}), wake: make(chan struct{})}
	go h.run()
	return h
}

func (h *Hub) run() {
	defer close(h.done)
	for {
		select {
		case e := <-h.in:
			h.mu.Lock()
			h.last++
			e.Seq = h.last
			h.ring[e.Seq%EventRing] = e
			close(h.wake)
			h.wake = make(chan struct{})
			h.mu.Unlock()
		case <-h.stop:
			return
		}
	}
}

// Close stops the hub's goroutine; later events are dropped.
func (h *Hub) Close() {
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
	<-h.done
}

// Publish hands an event to the hub without waiting.
func (h *Hub) Publish(typ string, data any) {
	select {
	case h.in <- h.event(typ, data):
	default:
		h.dropped.Add(1)
	}
}

func (h *Hub) event(typ string, data any) Event {
	e := Event{Type: typ, Time: time.Now(), Data: data}
	if h.timecode != nil {
		e.Timecode = h.timecode()
	}
	return e
}

// Dropped is how many events Publish could not hand over.
func (h *Hub) Dropped() uint64 { return h.dropped.Load() }

// Last is the Seq of the newest event (0 before the first).
func (h *Hub) Last() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// Since appends to buf the events after seq after, oldest first, and
// returns them with how many were lost (no longer in the ring) and a
// channel closed when a newer event arrives.
func (h *Hub) Since(after uint64, buf []Event) (events []Event, lost uint64, wake <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if after > h.last {
		after = h.last
	}
	if h.last-after > EventRing {
		lost = h.last - after - EventRing
		after = h.last - EventRing
	}
	for s := after + 1; s <= h.last; s++ {
		buf = append(buf, h.ring[s%EventRing])
	}
	return buf, lost, h.wake
}
