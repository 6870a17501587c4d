package control

import (
	"fmt"
	"net/http"
	"strings"
)

// Readier is a Show that says whether it is on air: GET /readyz answers
// 200 when Ready returns nil, else 503 with its error.
type Readier interface {
	// Ready is nil when every bus is on air (primed and drawing), else
	// why not.
	Ready() error
}

// ServeProbes starts serving before the show is on air: GET /healthz
// answers 200 and GET /readyz 503 ("starting"), every other route 503,
// until Serve hands over the show. Close stops it either way.
func (s *Server) ServeProbes() {
	if s.srv != nil {
		return
	}
	s.probing = true
	s.start()
}

// healthzHandler is GET /healthz: the process serves (a liveness probe).
func (s *Server) healthzHandler(w http.ResponseWriter, r *http.Request) {
	writeProbe(w, r, http.StatusOK, "alive")
}

// readyzHandler is GET /readyz: 200 when every bus of the show is on
// air, 503 and the reason otherwise (a readiness probe).
func (s *Server) readyzHandler(w http.ResponseWriter, r *http.Request) {
	if !s.onAir.Load() {
		writeProbe(w, r, http.StatusServiceUnavailable, "starting: the show is not on air yet")
		return
	}
	rd, ok := s.show.(Readier)
	if !ok {
		writeProbe(w, r, http.StatusOK, "on air")
		return
	}
	if err := rd.Ready(); err != nil {
		writeProbe(w, r, http.StatusServiceUnavailable, "not ready: "+err.Error())
		return
	}
	writeProbe(w, r, http.StatusOK, "on air")
}

// writeProbe answers a probe: JSON {"ok": BOOL, "status": TEXT}, or the
// status as one line of text when the client asks for text/plain.
func writeProbe(w http.ResponseWriter, r *http.Request, code int, status string) {
	w.Header().Set("Cache-Control", "no-store")
	if strings.Contains(r.Header.Get("Accept"), "text/plain") {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		fmt.Fprintln(w, status)
		return
	}
	writeJSON(w, code, map[string]any{"ok": code == http.StatusOK, "status": status})
}

// untilOnAir answers 503 for every route but the probes until Serve has
// the show (ServeProbes serves before that).
func (s *Server) untilOnAir(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.probing && !s.onAir.Load() && r.URL.Path != "/healthz" && r.URL.Path != "/readyz" {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, "the show is starting and not on air yet; try again in a moment (GET /readyz says when it is)")
			return
		}
		next.ServeHTTP(w, r)
	})
}
