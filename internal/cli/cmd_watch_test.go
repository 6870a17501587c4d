package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/events"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/metrics"
)

// eventShow is a show that only has events.
type eventShow struct{ hub *events.Hub }

func (s *eventShow) Status() any                                           { return map[string]any{} }
func (s *eventShow) Plan() []byte                                          { return []byte("{}") }
func (s *eventShow) Switch(bus, scene, kind string, d time.Duration) error { return nil }
func (s *eventShow) Collect(func(metrics.Sample))                          {}
func (s *eventShow) Events() *events.Hub                                   { return s.hub }
func (s *eventShow) EventsHello() any {
	return map[string]any{"show": "watched", "backend": "cpu", "frame_rate": "30", "operator": map[string]any{
		"buses": []any{map[string]any{"address": "bus.pgm", "on_air": []any{"scene.a"}, "preview": "scene.b"}},
		"tally": map[string]any{"source.a": map[string]any{"program": true}, "source.b": map[string]any{"preview": true}},
	}}
}

// syncBuffer is a buffer one goroutine writes while another reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStatusWatch: `onair status -watch` prints the show's state, then
// each event as it happens, one line each, until interrupted.
func TestStatusWatch(t *testing.T) {
	show := &eventShow{hub: events.NewHub()}
	defer show.hub.Close()
	srv, err := control.Start(show, control.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	old := watchContext
	watchContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	defer func() { watchContext = old }()

	var out, errs syncBuffer
	done := make(chan int)
	go func() { done <- run([]string{"status", "-watch", "-addr", srv.Addr()}, &out, &errs) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("-watch printed:\n%s\nstderr: %s", out.String(), errs.String())
		}
	})
	waitOutput := func(want string) {
		t.Helper()
		testwait.Until(t, testwait.Bound, fmt.Sprintf("-watch to print %q", want), func() bool { return strings.Contains(out.String(), want) })
	}
	waitOutput("watching watched on the cpu backend")
	waitOutput("bus.pgm          on air: scene.a, preview: scene.b")
	waitOutput("tally            program: source.a; preview: source.b; aux: -")
	show.hub.Publish("switch", map[string]any{"bus": "bus.pgm", "scene": "scene.b", "transition": "fade", "duration_ms": 500})
	show.hub.Publish("on_air", map[string]any{"bus": "bus.pgm", "on_air": []string{"scene.a", "scene.b"}, "tick": 42, "timecode": "01:00:00;00"})
	show.hub.Publish("missed_deadline", map[string]any{"bus": "bus.pgm", "tick": 43, "timecode": "01:00:00;01", "missed": 1, "missed_total": 3})
	show.hub.Publish("source_error", map[string]any{"source": "source.c", "error": "gone\x1b[2J"})
	show.hub.Publish("apply", map[string]any{"changed": []string{"bus.pgm", "scene.c"}})
	waitOutput("bus.pgm          fade to scene.b over 500 ms asked")
	waitOutput("bus.pgm          on air: scene.a → scene.b (tick 42) 01:00:00;00")
	waitOutput("MISSED 1 deadline(s) at tick 43 01:00:00;01, 3 in all")
	waitOutput("source.c         ERROR: gone[2J")
	waitOutput("changed on air: bus.pgm, scene.c")
	cancel()
	select {
	case rc := <-done:
		if rc != 0 {
			t.Errorf("rc=%d: %s", rc, errs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("-watch did not stop when interrupted")
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Error("-watch printed an escape character from the server")
	}

	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi") }))
	defer other.Close()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	rc, _, stderr := runCLI(t, "status", "-watch", "-addr", other.Listener.Addr().String())
	if rc != 1 || !strings.Contains(stderr, "is not an onair show") {
		t.Errorf("-watch against another server: rc=%d %s", rc, stderr)
	}
	if rc, _, stderr := runCLI(t, "status", "-watch", "-json"); rc != 2 || !strings.Contains(stderr, "exclude each other") {
		t.Errorf("-watch -json: rc=%d %s", rc, stderr)
	}
}
