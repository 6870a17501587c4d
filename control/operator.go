package control

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/onairhq/onair/showerr"
)

// The operator's surface: the page at / (a multiviewer with tally and the
// bus controls), POST /buses/{bus}/preview and /take (the preview/program
// workflow), GET /snapshot/{bus or source} (the tiles' JPEGs) and, when the
// server has a token, POST /login and /logout (a session cookie for the
// page, which cannot set an Authorization header on an image or an
// EventSource).

// Operator is a Show with the preview/program workflow.
type Operator interface {
	// SetPreview puts scene on bus's preview (a Program bus).
	SetPreview(bus, scene string) error
	// Take puts bus's preview scene on air with a transition ("cut",
	// "fade", "wipe") lasting d; the scene that was on air goes to preview.
	Take(bus, kind string, d time.Duration) error
}

// Snapshotter is a Show that keeps small JPEG snapshots of its buses and
// sources while someone watches them. Snapshot marks name as watched, asks
// for fps snapshots a second of it while it is (the fastest of those
// watching wins), and returns its latest snapshot and how long before now
// its picture was drawn; showerr.ErrNotFound when there is no such bus or
// source, showerr.ErrNotReady while the first snapshot is being taken,
// showerr.ErrUnused for a source no bus takes (it never has a picture).
type Snapshotter interface {
	Snapshot(name string, fps int) (jpeg []byte, age time.Duration, err error)
}

// A tile's refresh rate, as GET /snapshot/{name}?fps= asks for it.
const (
	DefaultTileFPS = 5
	MaxTileFPS     = 25
)

//go:embed ui
var uiFiles embed.FS

// PreviewRequest is the body of POST /buses/{bus}/preview.
type PreviewRequest struct {
	Scene string `json:"scene"`
}

// TakeRequest is the body of POST /buses/{bus}/take.
type TakeRequest struct {
	Transition string `json:"transition,omitempty"` // cut (the default), fade, wipe
	Duration   string `json:"duration,omitempty"`   // fade and wipe: "500ms"; default 1s
	At         string `json:"at,omitempty"`         // the timecode to take on; "" is the next tick
}

// LoginRequest is the body of POST /login.
type LoginRequest struct {
	Token string `json:"token"`
}

// readBody reads a request body of at most MaxBodyBytes into v (one JSON
// object with known fields), answering the request itself when it cannot;
// example is the body to suggest.
func readBody(w http.ResponseWriter, r *http.Request, v any, example string) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes; send %s", MaxBodyBytes, example))
			return false
		}
		writeError(w, http.StatusBadRequest, "cannot read the request body: "+err.Error())
		return false
	}
	if err := decodeOne(body, v); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("malformed request body: %v; send one JSON object, %s", err, example))
		return false
	}
	return true
}

// showError answers err from the show with its HTTP code.
func showError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, showerr.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, showerr.ErrInvalid):
		code = http.StatusBadRequest
	case errors.Is(err, showerr.ErrConflict):
		code = http.StatusConflict
	case errors.Is(err, showerr.ErrUnused):
		code = http.StatusNotFound
	case errors.Is(err, showerr.ErrNotReady):
		code = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	writeError(w, code, err.Error())
}

// parseDuration reads a transition's duration: "" is 1s for a fade or
// wipe and 0 for a cut. Frames are at the show's rate (FrameRater); a
// show that does not say refuses them.
func (s *Server) parseDuration(kind, text string) (time.Duration, string) {
	var d time.Duration
	if text != "" {
		var num, den int64
		if f, ok := s.show.(FrameRater); ok {
			num, den = f.FrameRate()
		}
		var err error
		if d, err = ParseDuration(text, num, den); err != nil {
			return 0, err.Error()
		}
	} else if kind != "cut" {
		d = time.Second
	}
	if kind == "cut" && d != 0 {
		return 0, "a cut has no duration; use fade or wipe"
	}
	return d, ""
}

func (s *Server) operator(w http.ResponseWriter) (Operator, bool) {
	op, ok := s.show.(Operator)
	if !ok {
		writeError(w, http.StatusNotFound, "this show has no preview/program workflow")
	}
	return op, ok
}

func (s *Server) previewHandler(w http.ResponseWriter, r *http.Request) {
	op, ok := s.operator(w)
	if !ok {
		return
	}
	var req PreviewRequest
	if !readBody(w, r, &req, `{"scene": "scene.NAME"}`) {
		return
	}
	if req.Scene == "" {
		writeError(w, http.StatusBadRequest, `the request names no scene; send {"scene": "scene.NAME"}`)
		return
	}
	bus := r.PathValue("bus")
	if err := op.SetPreview(bus, req.Scene); err != nil {
		showError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"bus": bus, "preview": req.Scene})
}

func (s *Server) takeHandler(w http.ResponseWriter, r *http.Request) {
	op, ok := s.operator(w)
	if !ok {
		return
	}
	var req TakeRequest
	if !readBody(w, r, &req, `{"transition": "fade", "duration": "500ms"}`) {
		return
	}
	kind := req.Transition
	if kind == "" {
		kind = "cut"
	}
	if kind != "cut" && kind != "fade" && kind != "wipe" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("transition %q: use cut, fade or wipe", req.Transition))
		return
	}
	s.switchBus(w, r, kind, req.Duration, req.At, func(ts TimedSwitcher, bus string, d time.Duration) error {
		return ts.TakeAt(bus, kind, d, req.At, origin(r))
	}, func(bus string, d time.Duration) error {
		return op.Take(bus, kind, d)
	}, map[string]any{})
}

// switchBus runs a switch or a take of the request's bus with the
// transition kind over duration: at the timecode at through timed when the
// show switches at timecodes (TimedSwitcher), else at once through now. It
// answers the request: ans with the bus, the transition, the duration and
// at, or the error.
func (s *Server) switchBus(w http.ResponseWriter, r *http.Request, kind, duration, at string, timed func(ts TimedSwitcher, bus string, d time.Duration) error, now func(bus string, d time.Duration) error, ans map[string]any) {
	d, msg := s.parseDuration(kind, duration)
	if msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	bus := r.PathValue("bus")
	var err error
	if ts, ok := s.show.(TimedSwitcher); ok {
		err = timed(ts, bus, d)
	} else if at != "" {
		err = fmt.Errorf("this show cannot switch at a timecode: %w", showerr.ErrInvalid)
	} else {
		err = now(bus, d)
	}
	if err != nil {
		showError(w, err)
		return
	}
	ans["bus"], ans["transition"], ans["duration"] = bus, kind, d.String()
	if at != "" {
		ans["at"] = at
	}
	writeJSON(w, http.StatusOK, ans)
}

func (s *Server) snapshotHandler(w http.ResponseWriter, r *http.Request) {
	sn, ok := s.show.(Snapshotter)
	if !ok {
		writeError(w, http.StatusNotFound, "this show keeps no snapshots")
		return
	}
	fps := DefaultTileFPS
	if q := r.URL.Query().Get("fps"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > MaxTileFPS {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("fps %q: ask for 1 to %d snapshots a second", q, MaxTileFPS))
			return
		}
		fps = n
	}
	jpg, age, err := sn.Snapshot(r.PathValue("name"), fps)
	if err != nil {
		showError(w, err)
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Onair-Age-Ms", strconv.FormatInt(age.Milliseconds(), 10))
	w.Write(jpg)
}

// uiHandler serves the page and its files. They hold no show data (the
// page reads everything through the API), so they are served without the
// token: a page without a session shows its login form.
func uiHandler() http.Handler {
	sub, _ := fs.Sub(uiFiles, "ui")
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
		files.ServeHTTP(w, r)
	})
}

// sessions are the page's logins: random ids, each good for SessionTTL,
// at most MaxSessions (the oldest is dropped).
type sessions struct {
	mu  sync.Mutex
	ids map[string]time.Time // id → expiry
}

// CookieName is the session cookie of the page's login.
const CookieName = "onair_session"

func (ss *sessions) add() string {
	b := make([]byte, 32)
	rand.Read(b)
	id := hex.EncodeToString(b)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ids == nil {
		ss.ids = map[string]time.Time{}
	}
	now := time.Now()
	for k, exp := range ss.ids {
		if now.After(exp) {
			delete(ss.ids, k)
		}
	}
	for len(ss.ids) >= MaxSessions {
		var oldest string
		var at time.Time
		for k, exp := range ss.ids {
			if oldest == "" || exp.Before(at) {
				oldest, at = k, exp
			}
		}
		delete(ss.ids, oldest)
	}
	ss.ids[id] = now.Add(SessionTTL)
	return id
}

// valid reports whether r carries a live session cookie.
func (ss *sessions) valid(r *http.Request) bool {
	c, err := r.Cookie(CookieName)
	if err != nil || len(c.Value) != 64 {
		return false
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for id, exp := range ss.ids {
		if subtle.ConstantTimeCompare([]byte(id), []byte(c.Value)) == 1 {
			return time.Now().Before(exp)
		}
	}
	return false
}

func (ss *sessions) drop(r *http.Request) {
	if c, err := r.Cookie(CookieName); err == nil {
		ss.mu.Lock()
		delete(ss.ids, c.Value)
		ss.mu.Unlock()
	}
}

func (s *Server) loginHandler(w http.ResponseWriter, r *http.Request) {
	if s.token == "" {
		writeJSON(w, http.StatusOK, map[string]any{"login": "not needed: this server has no token"})
		return
	}
	var req LoginRequest
	if !readBody(w, r, &req, `{"token": "TOKEN"}`) {
		return
	}
	if subtle.ConstantTimeCompare([]byte(req.Token), []byte(s.token)) != 1 {
		s.logins.failed(clientAddr(r), r.URL.Path)
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusUnauthorized, "wrong token: use the token onair run was given (-token or $ONAIR_TOKEN)")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.sessions.add(), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: overTLS(r), MaxAge: int(SessionTTL / time.Second)})
	writeJSON(w, http.StatusOK, map[string]any{"login": "ok"})
}

func (s *Server) logoutHandler(w http.ResponseWriter, r *http.Request) {
	s.sessions.drop(r)
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r), MaxAge: -1})
	writeJSON(w, http.StatusOK, map[string]any{"logout": "ok"})
}
