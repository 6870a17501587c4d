package control

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/events"
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

// Eventer is a Show with an event stream (GET /events).
type Eventer interface {
	Events() *events.Hub
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
	hello, _ := json.Marshal(events.Event{Seq: after, Type: "hello", Time: time.Now(), Data: ev.EventsHello()})
	if !write(fmt.Appendf(nil, "retry: 2000\nid: %d\nevent: hello\ndata: %s\n\n", after, hello)) {
		return
	}
	keepAlive := time.NewTicker(s.limits.EventKeepAlive)
	defer keepAlive.Stop()
	var buf []events.Event
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
				b, _ = json.Marshal(events.Event{Seq: e.Seq, Type: e.Type, Time: e.Time, Data: map[string]string{"error": err.Error()}})
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
