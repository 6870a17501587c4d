package control

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/events"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/showerr"
)

// opShow is a testShow with the operator's surface: preview and take on
// bus a, an event hub, and snapshots of bus.a.
type opShow struct {
	testShow
	hub     *events.Hub
	mu      sync.Mutex
	preview string
	takes   []string
}

func (s *opShow) SetPreview(bus, scene string) error {
	if bus != "a" && bus != "bus.a" {
		return fmt.Errorf("bus %q: %w", bus, showerr.ErrNotFound)
	}
	if scene != "scene.grid" {
		return fmt.Errorf("scene %q: %w", scene, showerr.ErrNotFound)
	}
	s.mu.Lock()
	s.preview = scene
	s.mu.Unlock()
	s.hub.Publish("preview", map[string]string{"bus": "bus.a", "preview": scene})
	return nil
}

func (s *opShow) Take(bus, kind string, d time.Duration) error {
	if bus != "a" && bus != "bus.a" {
		return fmt.Errorf("bus %q: %w", bus, showerr.ErrNotFound)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.preview == "" {
		return fmt.Errorf("bus.a has no scene on preview: %w", showerr.ErrInvalid)
	}
	s.takes = append(s.takes, fmt.Sprintf("%s %v", kind, d))
	return nil
}

func (s *opShow) Events() *events.Hub { return s.hub }
func (s *opShow) EventsHello() any    { return map[string]string{"show": "test"} }
func (s *opShow) Snapshot(name string) ([]byte, error) {
	switch name {
	case "bus.a":
		return []byte("\xff\xd8jpeg"), nil
	case "bus.b":
		return nil, fmt.Errorf("bus.b: the first snapshot is being taken: %w", showerr.ErrNotReady)
	}
	return nil, fmt.Errorf("no bus or source %q: %w", name, showerr.ErrNotFound)
}

func startOp(t *testing.T, opts Options) (*Server, *opShow) {
	t.Helper()
	show := &opShow{hub: events.NewHub()}
	t.Cleanup(show.hub.Close)
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	s, err := Start(show, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, show
}

// TestThePageIsServed: / is the page, its files are under /ui/, all with
// a policy that keeps them from being framed or loading anything foreign.
func TestThePageIsServed(t *testing.T) {
	s, _ := startOp(t, Options{})
	base := "http://" + s.Addr()
	for path, want := range map[string]string{"/": "multiviewer", "/ui/app.js": "EventSource", "/ui/style.css": "--pgm"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %s, body lacks %q", path, resp.Status, want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
	}
	if code, _ := request(t, "GET", base+"/ui/nope.js", "", ""); code != 404 {
		t.Errorf("GET /ui/nope.js: %d", code)
	}
}

// TestPreviewAndTake: the workflow's requests and every way to get them
// wrong, with the answer that says what to do.
func TestPreviewAndTake(t *testing.T) {
	s, show := startOp(t, Options{})
	base := "http://" + s.Addr()
	cases := []struct {
		path, body string
		code       int
		msg        string
	}{
		{"/buses/a/take", `{}`, 400, "no scene on preview"},
		{"/buses/a/preview", `{"scene":"scene.grid"}`, 200, `"preview": "scene.grid"`},
		{"/buses/zz/preview", `{"scene":"scene.grid"}`, 404, `bus \"zz\"`},
		{"/buses/a/preview", `{"scene":"scene.nope"}`, 404, `scene \"scene.nope\"`},
		{"/buses/a/preview", `{}`, 400, "names no scene"},
		{"/buses/a/preview", `{"scene":"scene.grid","x":1}`, 400, "unknown field"},
		{"/buses/a/preview", `{"scene":`, 400, "malformed request body"},
		{"/buses/a/preview", `{"scene":"scene.grid"}{}`, 400, "trailing data"},
		{"/buses/a/take", `{"transition":"spin"}`, 400, `transition \"spin\": use cut, fade or wipe`},
		{"/buses/a/take", `{"transition":"cut","duration":"1s"}`, 400, "a cut has no duration"},
		{"/buses/a/take", `{"transition":"fade","duration":"2h"}`, 400, "between 0 and 1m"},
		{"/buses/zz/take", `{}`, 404, `bus \"zz\"`},
		{"/buses/a/take", `{}`, 200, `"transition": "cut"`},
		{"/buses/a/take", `{"transition":"wipe"}`, 200, `"duration": "1s"`},
		{"/buses/a/take", `{"transition":"fade","duration":"250ms"}`, 200, `"duration": "250ms"`},
		{"/buses/a/take", `{"transition":"cut"` + strings.Repeat(" ", MaxBodyBytes) + `}`, 413, "larger than"},
	}
	for _, c := range cases {
		code, body := request(t, "POST", base+c.path, c.body, "")
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("POST %s %.60s: %d %s, want %d containing %q", c.path, c.body, code, body, c.code, c.msg)
		}
	}
	if want := []string{"cut 0s", "wipe 1s", "fade 250ms"}; fmt.Sprint(show.takes) != fmt.Sprint(want) {
		t.Errorf("takes %v, want %v", show.takes, want)
	}
	// A show without the workflow says so.
	plain, _ := start(t, Options{})
	if code, body := request(t, "POST", "http://"+plain.Addr()+"/buses/a/take", `{}`, ""); code != 404 || !strings.Contains(body, "no preview/program workflow") {
		t.Errorf("take on a show without the workflow: %d %s", code, body)
	}
}

// TestSnapshots: a tile's JPEG, the answer while the first is being taken
// (503 with Retry-After), and an unknown name.
func TestSnapshots(t *testing.T) {
	s, _ := startOp(t, Options{})
	base := "http://" + s.Addr()
	resp, err := http.Get(base + "/snapshot/bus.a")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("GET /snapshot/bus.a: %s %v", resp.Status, resp.Header)
	}
	resp, err = http.Get(base + "/snapshot/bus.b")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("GET /snapshot/bus.b before its first snapshot: %s %v", resp.Status, resp.Header)
	}
	if code, body := request(t, "GET", base+"/snapshot/bus.zz", "", ""); code != 404 || !strings.Contains(body, "no bus or source") {
		t.Errorf("GET /snapshot/bus.zz: %d %s", code, body)
	}
}

// sse is one client of GET /events on a raw connection.
type sse struct {
	c  net.Conn
	br *bufio.Reader
}

func openEvents(t *testing.T, addr string, hdr string) (*sse, int) {
	t.Helper()
	c := dial(t, addr)
	c.SetDeadline(time.Now().Add(generous))
	fmt.Fprintf(c, "GET /events HTTP/1.1\r\nHost: %s\r\n%s\r\n", addr, hdr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET /events: %v", err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		c.Close()
		if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
			t.Errorf("503 without Retry-After: %s", b)
		}
		if resp.StatusCode == 503 && !strings.Contains(string(b), "already streams events to") {
			t.Errorf("503 that does not say why: %s", b)
		}
		return nil, resp.StatusCode
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("GET /events: Content-Type %q", ct)
	}
	// The stream is chunked: read it through the response body.
	return &sse{c: c, br: bufio.NewReader(resp.Body)}, 200
}

// next reads the next event: its type and data line.
func (s *sse) next(t *testing.T) (id, typ, data string) {
	t.Helper()
	for {
		l, err := s.br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the event stream: %v", err)
		}
		l = strings.TrimRight(l, "\n")
		switch {
		case strings.HasPrefix(l, "id: "):
			id = l[4:]
		case strings.HasPrefix(l, "event: "):
			typ = l[7:]
		case strings.HasPrefix(l, "data: "):
			data = l[6:]
		case l == "" && typ != "":
			return id, typ, data
		}
	}
}

// TestEventStream: a client gets the hello, then each event as it is
// published; one that reconnects with Last-Event-ID gets what it missed,
// and one too far behind is told how much it lost.
func TestEventStream(t *testing.T) {
	s, show := startOp(t, Options{})
	a, _ := openEvents(t, s.Addr(), "")
	if _, typ, data := a.next(t); typ != "hello" || !strings.Contains(data, `"show":"test"`) {
		t.Fatalf("first event %s %s, want hello", typ, data)
	}
	show.hub.Publish("switch", map[string]string{"bus": "bus.a"})
	id, typ, data := a.next(t)
	if typ != "switch" || !strings.Contains(data, `"bus":"bus.a"`) {
		t.Fatalf("event %s %s, want the switch", typ, data)
	}
	// A request through the API shows up on the stream.
	if code, body := request(t, "POST", "http://"+s.Addr()+"/buses/a/preview", `{"scene":"scene.grid"}`, ""); code != 200 {
		t.Fatalf("preview: %d %s", code, body)
	}
	if _, typ, data := a.next(t); typ != "preview" || !strings.Contains(data, "scene.grid") {
		t.Fatalf("event %s %s, want the preview", typ, data)
	}
	// Resume after the switch: the preview comes again.
	b, _ := openEvents(t, s.Addr(), "Last-Event-ID: "+id+"\r\n")
	b.next(t) // hello
	if _, typ, _ := b.next(t); typ != "preview" {
		t.Fatalf("resumed after %s: got %s, want the preview", id, typ)
	}
	// Far behind: more than the ring holds.
	for i := 0; i < events.EventRing+10; i++ {
		show.hub.Publish("tally", i)
	}
	testwait.Until(t, generous, "the hub to take the events (on its own goroutine)", func() bool { return show.hub.Last() >= uint64(events.EventRing+12) })
	c, _ := openEvents(t, s.Addr(), "Last-Event-ID: 1\r\n")
	c.next(t) // hello
	if _, typ, data := c.next(t); typ != "lost" || !strings.Contains(data, `"events":`) {
		t.Fatalf("a client %d events behind got %s %s, want lost", events.EventRing+10, typ, data)
	}
}

// TestEventClientLimit: beyond the limit a client gets 503 saying why, the
// held streams go on, and once one closes a new one is served.
func TestEventClientLimit(t *testing.T) {
	const limit = 3
	s, show := startOp(t, Options{Limits: Limits{MaxEventClients: limit}})
	var held []*sse
	for i := 0; i < limit; i++ {
		c, code := openEvents(t, s.Addr(), "")
		if code != 200 {
			t.Fatalf("client %d of %d: %d", i+1, limit, code)
		}
		c.next(t)
		held = append(held, c)
	}
	for i := 0; i < 5; i++ {
		if _, code := openEvents(t, s.Addr(), ""); code != 503 {
			t.Fatalf("client %d over the limit of %d: %d, want 503", i+1, limit, code)
		}
	}
	show.hub.Publish("switch", "x")
	for i, c := range held {
		if _, typ, _ := c.next(t); typ != "switch" {
			t.Fatalf("held client %d: %s", i, typ)
		}
	}
	held[0].c.Close()
	// The server notices the close on its own time.
	var c *sse
	testwait.Until(t, generous, "an event stream after a held one closed", func() bool {
		var code int
		c, code = openEvents(t, s.Addr(), "")
		return code == 200
	})
	c.next(t)
}

// TestSlowEventClientIsCutOff: a client that stops reading is cut off once
// its socket stays full for the write timeout, and a client that reads
// gets every event meanwhile.
func TestSlowEventClientIsCutOff(t *testing.T) {
	s, show := startOp(t, Options{Limits: Limits{EventWriteTimeout: 200 * time.Millisecond}})
	slow := dial(t, s.Addr())
	slow.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(slow, "GET /events HTTP/1.1\r\nHost: %s\r\n\r\n", s.Addr())
	fast, _ := openEvents(t, s.Addr(), "")
	fast.next(t)
	testwait.Until(t, generous, "both event streams to be open", func() bool { return s.events.n.Load() == 2 })
	big := strings.Repeat("x", 16<<10)
	deadline := time.Now().Add(generous)
	published := 0
	for s.events.n.Load() == 2 {
		show.hub.Publish("tally", big) // never waits: a full hub drops and counts
		published++
		// The fast client reads what there is, keeping up.
		_, typ, _ := fast.next(t)
		if typ != "tally" && typ != "lost" {
			t.Fatalf("fast client got %s", typ)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d events of 16 KiB the client that does not read still holds its stream", published)
		}
	}
	// The server has let go of the connection (the kernel may still be
	// trickling what it had queued to the client, from no descriptor of
	// ours): only the fast client's is held.
	ll := s.ln.(*limitListener)
	testwait.Until(t, generous, "the server to hold one connection (the client that reads)", func() bool { return len(ll.slots) == 1 })
	show.hub.Publish("switch", "after")
	for {
		if _, typ, _ := fast.next(t); typ == "switch" {
			break
		}
	}
}

// TestCloseEndsEventStreams: stopping the server does not wait for its
// event clients to hang up.
func TestCloseEndsEventStreams(t *testing.T) {
	show := &opShow{hub: events.NewHub()}
	defer show.hub.Close()
	s, err := Start(show, Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := openEvents(t, s.Addr(), "")
	c.next(t)
	// The client never hangs up by itself: a Close that waited for it would
	// not return at all.
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	stuck := time.NewTimer(generous)
	defer stuck.Stop()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-stuck.C:
		t.Fatalf("Close did not return in %v with an event client connected", generous)
	}
	waitClosed(t, c.c, c.br, "an event stream after Close")
}

// TestPageLogin: with a token the page's files are public, everything
// else needs the token or the session cookie of a login; a wrong token,
// a form post and a foreign Origin do not log in, and logging out ends
// the session.
func TestPageLogin(t *testing.T) {
	const token = "0123456789abcdef"
	s, show := startOp(t, Options{Token: token})
	base := "http://" + s.Addr()
	if code, _ := send(t, "GET", base+"/", "", nil); code != 200 {
		t.Errorf("GET / with a token set: %d, want the page (its login form)", code)
	}
	for _, path := range []string{"/status", "/events", "/snapshot/bus.a", "/metrics"} {
		if code, _ := send(t, "GET", base+path, "", nil); code != 401 {
			t.Errorf("GET %s without the token: %d, want 401", path, code)
		}
	}
	json := map[string]string{"Content-Type": "application/json"}
	if code, body := send(t, "POST", base+"/login", `{"token":"wrong"}`, json); code != 401 || !strings.Contains(body, "wrong token") {
		t.Errorf("login with a wrong token: %d %s", code, body)
	}
	if code, _ := send(t, "POST", base+"/login", `token=`+token, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"}); code != 415 {
		t.Errorf("a cross-site form login: %d, want 415", code)
	}
	if code, _ := send(t, "POST", base+"/login", `{"token":"`+token+`"}`, map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}); code != 403 {
		t.Errorf("a login from another site: %d, want 403", code)
	}
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(`{"token":"`+token+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			cookie = c
		}
	}
	if resp.StatusCode != 200 || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("login: %s, cookie %+v, want an HttpOnly SameSite=Strict session cookie", resp.Status, cookie)
	}
	withCookie := map[string]string{"Cookie": CookieName + "=" + cookie.Value}
	if code, _ := send(t, "GET", base+"/status", "", withCookie); code != 200 {
		t.Errorf("GET /status with the session: %d", code)
	}
	hdr := map[string]string{"Cookie": CookieName + "=" + cookie.Value, "Content-Type": "application/json", "Origin": base}
	if code, body := send(t, "POST", base+"/buses/a/preview", `{"scene":"scene.grid"}`, hdr); code != 200 {
		t.Errorf("preview with the session from the page: %d %s", code, body)
	}
	hdr["Origin"] = "http://evil.example"
	if code, _ := send(t, "POST", base+"/buses/a/take", `{}`, hdr); code != 403 {
		t.Errorf("take with the session from another site: %d, want 403", code)
	}
	if len(show.takes) != 0 {
		t.Errorf("refused takes switched: %v", show.takes)
	}
	if code, _ := send(t, "GET", base+"/status", "", map[string]string{"Cookie": CookieName + "=" + strings.Repeat("0", 64)}); code != 401 {
		t.Errorf("a made-up session: %d, want 401", code)
	}
	delete(hdr, "Origin")
	if code, _ := send(t, "POST", base+"/logout", `{}`, hdr); code != 200 {
		t.Errorf("logout: %d", code)
	}
	if code, _ := send(t, "GET", base+"/status", "", withCookie); code != 401 {
		t.Errorf("GET /status after logout: %d, want 401", code)
	}
}

// TestCrossSiteFormsCannotUseTheNewEndpoints: the form post of issue 9 to
// the preview, take and login endpoints of a loopback server is refused
// for its content type, and as JSON for its Origin.
func TestCrossSiteFormsCannotUseTheNewEndpoints(t *testing.T) {
	s, show := startOp(t, Options{})
	base := "http://" + s.Addr()
	for _, path := range []string{"/buses/a/preview", "/buses/a/take", "/login", "/logout"} {
		code, _ := send(t, "POST", base+path, `{"scene":"scene.grid"}=`, map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"})
		if code != 415 {
			t.Errorf("a cross-site form post to %s: %d, want 415", path, code)
		}
		code, _ = send(t, "POST", base+path, `{"scene":"scene.grid"}`, map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"})
		if code != 403 {
			t.Errorf("a cross-site JSON post to %s: %d, want 403", path, code)
		}
	}
	if show.preview != "" || len(show.takes) != 0 {
		t.Errorf("refused posts changed the show: preview %q, takes %v", show.preview, show.takes)
	}
}
