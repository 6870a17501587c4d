package control

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// GET /events is a stream of Server-Sent Events (text/event-stream): one
// event per switch asked for, per switch on air, per preview and tally
// change, per source error and recovery and per missed deadline, as they
// happen.
//
// Why SSE and not a WebSocket: the stream goes one way (the controls are
// POSTs, which already pass the server's JSON and Origin checks); it is
// plain HTTP, so it passes the same guard as every other request (Host,
// token or session cookie) with no second handshake to secure — a
// WebSocket upgrade is not subject to the browser's same-origin rules and
// would need Origin checks of its own; browsers reconnect an EventSource by
// themselves and send Last-Event-ID, from which the server resumes; and the
// standard library serves it, where a WebSocket needs a dependency.

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

// Eventer is a Show with an event stream (GET /events).
type Eventer interface {
	Events() *Hub
	// EventsHello is the state a new client starts from (sent as its
	// first event, "hello"): what every bus shows and every tally.
	EventsHello() any
}

// eventSlots counts the /events clients against Limits.MaxEventClients.
type eventSlots struct{ n atomic.Int64 }

func (s *Server) eventsHandler(w http.ResponseWriter, r *http.Request) {
	ev, ok := s.show.(Eventer)
	if !ok || ev.Events() == nil {
		writeError(w, http.StatusNotFound, "this show has no event stream")
		return
	}
	if n := s.events.n.Add(1); n > int64(s.limits.MaxEventClients) {
		s.events.n.Add(-1)
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("the server already streams events to %d clients, its limit: close another event stream (a browser tab with the page, onair status -watch) and try again", s.limits.MaxEventClients))
		return
	}
	defer s.events.n.Add(-1)
	hub := ev.Events()
	after := hub.Last()
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if v, err := strconv.ParseUint(id, 10, 64); err == nil && v <= after {
			after = v
		}
	}
	rc := http.NewResponseController(w)
	// The stream outlives the server's read and write timeouts: no read
	// deadline (the client sends nothing more; its close ends the request),
	// and a write deadline per write, so a client that stops reading is cut
	// off once the socket's buffer is full for EventWriteTimeout.
	rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(s.limits.EventWriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	hello, _ := json.Marshal(Event{Seq: after, Type: "hello", Time: time.Now(), Data: ev.EventsHello()})
	if !write(fmt.Appendf(nil, "retry: 2000\nid: %d\nevent: hello\ndata: %s\n\n", after, hello)) {
		return
	}
	keepAlive := time.NewTicker(s.limits.EventKeepAlive)
	defer keepAlive.Stop()
	var buf []Event
	var out []byte
	for {
		var lost uint64
		var wake <-chan struct{}
		buf, lost, wake = hub.Since(after, buf[:0])
		out = out[:0]
		if lost > 0 {
			out = fmt.Appendf(out, "event: lost\ndata: {\"type\":\"lost\",\"data\":{\"events\":%d}}\n\n", lost)
		}
		for _, e := range buf {
			b, err := json.Marshal(e)
			if err != nil {
				b, _ = json.Marshal(Event{Seq: e.Seq, Type: e.Type, Time: e.Time, Data: map[string]string{"error": err.Error()}})
			}
			out = fmt.Appendf(out, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, b)
			after = e.Seq
		}
		if len(out) > 0 && !write(out) {
			return
		}
		select {
		case <-wake:
		case <-keepAlive.C:
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
}
