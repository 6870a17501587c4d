package control

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// These tests play the hostile tester of issue 9: a web page that posts to
// the server, a page that rebinds its DNS name to it, clients that hold
// connections or trickle bytes, and a program other than onair on the
// client's port. Each one goes over real sockets.

// generous bounds every wait for something the server must do by itself;
// it only fails a test that would otherwise hang.
const generous = 20 * time.Second

// send makes one request with the given headers (Host sets the request's
// Host) on a fresh connection and returns the status and body.
func send(t *testing.T, method, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: generous}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// dial opens a raw connection to the server.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, generous)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitClosed reads r (what is left of connection c) until the server
// closes the connection, and fails if it has not within the generous bound.
func waitClosed(t *testing.T, c net.Conn, r io.Reader, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(generous))
	buf := make([]byte, 4096)
	for {
		_, err := r.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s: the server still holds the connection after %v", what, generous)
		}
		return // EOF or reset: closed
	}
}

// getOn sends GET /status on a connection that stays open and reads the
// answer.
func getOn(t *testing.T, c net.Conn, br *bufio.Reader, host string) *http.Response {
	t.Helper()
	c.SetDeadline(time.Now().Add(generous))
	if _, err := fmt.Fprintf(c, "GET /status HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET /status on a held connection: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestCrossSitePostsCannotSwitch: the form post of issue 9 (text/plain, a
// foreign Origin, a JSON value followed by "=") is refused for its content
// type; the same post as JSON is refused for its Origin; the server's own
// page, and a client that sends no Origin, switch.
func TestCrossSitePostsCannotSwitch(t *testing.T) {
	s, show := start(t, Options{})
	url := "http://" + s.Addr() + "/buses/a/cut"
	_, port, _ := net.SplitHostPort(s.Addr())

	code, body := send(t, "POST", url, "{\"scene\":\"clip\"}=\r\n", map[string]string{"Content-Type": "text/plain", "Origin": "http://evil.example"})
	if code != 415 || !strings.Contains(body, "Content-Type: application/json") {
		t.Errorf("the cross-site form post: %d %s, want 415 asking for application/json", code, body)
	}
	code, body = send(t, "POST", url, `{"scene":"scene.grid"}`, map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"})
	if code != 403 || !strings.Contains(body, `Origin \"http://evil.example\" is not this server`) {
		t.Errorf("a JSON post from another site: %d %s, want 403 naming the origin", code, body)
	}
	for _, origin := range []string{"null", "http://evil.example:" + port, "https://127.0.0.1", "http://127.0.0.1:1"} {
		if code, body := send(t, "POST", url, `{"scene":"scene.grid"}`, map[string]string{"Content-Type": "application/json", "Origin": origin}); code != 403 {
			t.Errorf("Origin %s: %d %s, want 403", origin, code, body)
		}
	}
	if len(show.switches) != 0 {
		t.Fatalf("refused posts switched the show: %v", show.switches)
	}

	for _, origin := range []string{"http://" + s.Addr(), "http://localhost:" + port, ""} {
		hdr := map[string]string{"Content-Type": "application/json; charset=utf-8"}
		if origin != "" {
			hdr["Origin"] = origin
		}
		if code, body := send(t, "POST", url, `{"scene":"scene.grid"}`, hdr); code != 200 {
			t.Errorf("a post from %q: %d %s, want 200", origin, code, body)
		}
	}
	if len(show.switches) != 3 {
		t.Errorf("switches %v, want 3", show.switches)
	}
}

// TestForeignHostIsRefused: a page whose DNS name was rebound to the
// server's address sends its own name as Host; the server refuses it on
// every endpoint, and closes the connection.
func TestForeignHostIsRefused(t *testing.T) {
	s, _ := start(t, Options{Hosts: []string{"studio.example", " ", "proxy.example:8443"}})
	base := "http://" + s.Addr()
	_, port, _ := net.SplitHostPort(s.Addr())
	for _, path := range []string{"/status", "/plan", "/metrics", "/preview/pgm"} {
		for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1:1", "studio.example:1", "proxy.example:" + port, "10.0.0.1:" + port} {
			code, body := send(t, "GET", base+path, "", map[string]string{"Host": host})
			if code != http.StatusMisdirectedRequest || !strings.Contains(body, "does not name this server") {
				t.Errorf("GET %s with Host %q: %d %s, want 421", path, host, code, body)
			}
		}
	}
	for _, host := range []string{s.Addr(), "localhost:" + port, "LocalHost:" + port, "studio.example:" + port, "proxy.example:8443"} {
		if code, body := send(t, "GET", base+"/status", "", map[string]string{"Host": host}); code != 200 {
			t.Errorf("GET /status with Host %q: %d %s, want 200", host, code, body)
		}
	}

	c := dial(t, s.Addr())
	fmt.Fprintf(c, "GET /status HTTP/1.1\r\nHost: evil.example:%s\r\n\r\n", port)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusMisdirectedRequest || !resp.Close {
		t.Fatalf("a foreign Host on a raw connection: %v %v, want 421 with Connection: close", resp, err)
	}
	waitClosed(t, c, br, "after a 421")

	if _, err := Bind(Options{Addr: "127.0.0.1:0", Hosts: []string{"http://studio.example/"}}); err == nil || !strings.Contains(err.Error(), "host name or host:port") {
		t.Errorf("a server name with a scheme: err = %v", err)
	}
}

// TestWildcardAddressAnswersToIPs: on 0.0.0.0 the server answers to any IP
// literal with its port (an address cannot be rebound) and to localhost,
// not to a name.
func TestWildcardAddressAnswersToIPs(t *testing.T) {
	const token = "0123456789abcdef"
	s, _ := start(t, Options{Addr: "0.0.0.0:0", Token: token, InsecureRemoteToken: true}) // its subject is names, not TLS
	_, port, _ := net.SplitHostPort(s.Addr())
	base := "http://127.0.0.1:" + port
	auth := "Bearer " + token
	for host, want := range map[string]int{"127.0.0.1:" + port: 200, "192.0.2.7:" + port: 200, "[::1]:" + port: 200, "localhost:" + port: 200, "evil.example:" + port: 421, "192.0.2.7:1": 421} {
		if code, body := send(t, "GET", base+"/status", "", map[string]string{"Host": host, "Authorization": auth}); code != want {
			t.Errorf("GET /status with Host %q on 0.0.0.0: %d %s, want %d", host, code, body, want)
		}
	}
}

// TestOneJSONObjectPerRequest: a body with anything after its object, or a
// field the request does not have, is refused naming the problem, and an
// oversized one is refused as such.
func TestOneJSONObjectPerRequest(t *testing.T) {
	s, show := start(t, Options{})
	url := "http://" + s.Addr() + "/buses/a/cut"
	json := map[string]string{"Content-Type": "application/json"}
	for body, want := range map[string]string{
		"{\"scene\":\"scene.grid\"}=\r\n":                          `trailing data after the JSON object: \"=`,
		`{"scene":"scene.grid"}{"scene":"scene.grid"}`:             "trailing data",
		`{"scene":"scene.grid"} x`:                                 "trailing data",
		`{"scene":"scene.grid","evil":1}`:                          `unknown field \"evil\"`,
		`["scene.grid"]`:                                           "cannot unmarshal array",
		`{"scene":"scene.grid"` + strings.Repeat(" ", 70000) + `}`: "larger than 65536 bytes",
	} {
		code, got := send(t, "POST", url, body, json)
		if code/100 != 4 || !strings.Contains(got, want) {
			t.Errorf("body %.40q: %d %s, want a 4xx containing %q", body, code, got, want)
		}
	}
	if len(show.switches) != 0 {
		t.Fatalf("refused bodies switched the show: %v", show.switches)
	}
	if code, got := send(t, "POST", url, "{\"scene\":\"scene.grid\"}\r\n", json); code != 200 {
		t.Errorf("a body ending in a newline: %d %s", code, got)
	}
}

// TestSlowClientsAreCutOff: a connection that trickles its headers, or
// sends nothing, is closed by the server once the header timeout passes.
func TestSlowClientsAreCutOff(t *testing.T) {
	s, _ := start(t, Options{Limits: Limits{ReadHeaderTimeout: 200 * time.Millisecond}})
	slow := dial(t, s.Addr())
	fmt.Fprintf(slow, "GET /status HTTP/1.1\r\nHost: %s\r\nX-Slow: ", s.Addr())
	silent := dial(t, s.Addr())
	waitClosed(t, slow, slow, "a connection trickling its headers")
	waitClosed(t, silent, silent, "a connection sending nothing")
	if code, body := send(t, "GET", "http://"+s.Addr()+"/status", "", nil); code != 200 {
		t.Errorf("/status after cutting off slow clients: %d %s", code, body)
	}
}

// TestConnectionLimit: with the server's connections all held, more are
// closed at once instead of queued; once one held connection goes, a new
// one is served.
func TestConnectionLimit(t *testing.T) {
	const limit, extra = 4, 20
	s, _ := start(t, Options{Limits: Limits{MaxConns: limit, IdleTimeout: time.Hour, ReadHeaderTimeout: time.Hour}})
	held := make([]net.Conn, limit)
	readers := make([]*bufio.Reader, limit)
	for i := range held {
		held[i] = dial(t, s.Addr())
		readers[i] = bufio.NewReader(held[i])
		if resp := getOn(t, held[i], readers[i], s.Addr()); resp.StatusCode != 200 {
			t.Fatalf("held connection %d: %s", i, resp.Status)
		}
	}
	for i := 0; i < extra; i++ {
		c := dial(t, s.Addr())
		waitClosed(t, c, c, fmt.Sprintf("connection %d over the limit of %d", limit+i+1, limit))
	}
	for i := 1; i < limit; i++ {
		if resp := getOn(t, held[i], readers[i], s.Addr()); resp.StatusCode != 200 {
			t.Fatalf("held connection %d after the extras were refused: %s", i, resp.Status)
		}
	}
	held[0].Close()
	deadline := time.Now().Add(generous)
	for {
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: generous}).Get("http://" + s.Addr() + "/status")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("/status once a slot is free: %s", resp.Status)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/status still refused %v after a held connection closed: %v", generous, err)
		}
		time.Sleep(10 * time.Millisecond) // the server notices the close on its own time
	}
}

// TestUnauthorizedRequestsCloseTheirConnection: a request without the
// right token gets 401 and its connection is closed, so refused clients
// cannot pile up kept-alive connections.
func TestUnauthorizedRequestsCloseTheirConnection(t *testing.T) {
	const token = "0123456789abcdef"
	s, _ := start(t, Options{Token: token})
	for _, auth := range []string{"", "Authorization: Bearer wrong\r\n", "Authorization: Bearer " + token + "x\r\n"} {
		c := dial(t, s.Addr())
		fmt.Fprintf(c, "GET /status HTTP/1.1\r\nHost: %s\r\n%s\r\n", s.Addr(), auth)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 401 || !resp.Close {
			t.Fatalf("%q: %v %v, want 401 with Connection: close", auth, resp, err)
		}
		waitClosed(t, c, br, "after a 401")
	}
	c := dial(t, s.Addr())
	br := bufio.NewReader(c)
	fmt.Fprintf(c, "GET /status HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", s.Addr(), token)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 || resp.Close {
		t.Fatalf("the right token: %v %v, want 200 on a kept-alive connection", resp, err)
	}
}

// TestTokensOffLoopback: off loopback a token must have 16 characters or
// more; a token no client can send is refused everywhere.
func TestTokensOffLoopback(t *testing.T) {
	for _, c := range []struct {
		addr, token, want string
	}{
		{"0.0.0.0:7350", "", "set a token of at least 16"},
		{"0.0.0.0:7350", "s3cret", "only 6 characters"},
		{"192.0.2.1:7350", "0123456789abcde", "only 15 characters"},
		{":7350", "                ", "surrounding spaces"},
		{"0.0.0.0:7350", "0123456789abcdef\n", "control characters"},
		{"127.0.0.1:7350", " s3cret", "surrounding spaces"},
		{"0.0.0.0:7350", "0123456789abcdef", ""},
		{"127.0.0.1:7350", "s3cret", ""},
		{"localhost:7350", "", ""},
	} {
		err := CheckListen(c.addr, c.token)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckListen(%q, %q) = %v, want %q", c.addr, c.token, err, c.want)
		}
	}
}

// TestEveryAnswerSaysItIsOnair: the Onair-Version header is on every
// answer, refusals included.
func TestEveryAnswerSaysItIsOnair(t *testing.T) {
	s, _ := start(t, Options{Version: "1.2.3", Token: "0123456789abcdef"})
	for _, host := range []string{s.Addr(), "evil.example"} {
		resp, err := http.Get("http://" + s.Addr() + "/status")
		if host != s.Addr() {
			req, _ := http.NewRequest("GET", "http://"+s.Addr()+"/status", nil)
			req.Host = host
			resp, err = http.DefaultClient.Do(req)
		}
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get(VersionHeader); got != "1.2.3" {
			t.Errorf("Host %s: %s answered with %s %q", host, resp.Status, VersionHeader, got)
		}
	}
}

// TestClientRefusesOtherServers: onair cut and onair status against a
// program other than onair fail saying so, read a bounded answer, and pass
// on nothing that could drive the terminal.
func TestClientRefusesOtherServers(t *testing.T) {
	var answer func(w http.ResponseWriter)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answer(w) }))
	defer other.Close()
	c := &Client{Addr: other.Listener.Addr().String()}

	answer = func(w http.ResponseWriter) { io.WriteString(w, "OK\n") }
	if err := c.Switch("pgm", "scene.grid", "cut", 0); err == nil || !strings.Contains(err.Error(), "is not an onair show") {
		t.Errorf("a cut against a plain web server: %v", err)
	}
	if _, err := c.Status(); err == nil || !strings.Contains(err.Error(), "is not an onair show") {
		t.Errorf("status from a plain web server: %v", err)
	}
	answer = func(w http.ResponseWriter) { http.Redirect(w, &http.Request{}, "http://192.0.2.1/", http.StatusFound) }
	if err := c.Switch("pgm", "scene.grid", "cut", 0); err == nil {
		t.Error("a cut answered by a redirect succeeded")
	}

	onairLike := func(code int, body string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set(VersionHeader, "x")
			w.WriteHeader(code)
			io.WriteString(w, body)
		}
	}
	answer = onairLike(200, `{"ok":true}`)
	if err := c.Switch("pgm", "scene.grid", "cut", 0); err == nil || !strings.Contains(err.Error(), "did not confirm the cut") {
		t.Errorf("a cut answered without confirmation: %v", err)
	}
	answer = onairLike(200, `<html>`)
	if _, err := c.Status(); err == nil || !strings.Contains(err.Error(), "other than JSON") {
		t.Errorf("status answered with HTML: %v", err)
	}
	answer = onairLike(200, `"`+strings.Repeat("x", MaxResponseBytes)+`"`)
	if _, err := c.Status(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("larger than %d MiB", MaxResponseBytes>>20)) {
		t.Errorf("status answered with more than MaxResponseBytes: %v", err)
	}

	answer = onairLike(404, `{"error":"no bus \u001b]0;owned\u0007\u001b[2J\u009b31m\u202eevil\nhere"}`)
	err := c.Switch("pgm", "scene.grid", "cut", 0)
	if err == nil || err.Error() != "POST /buses/pgm/cut: no bus ]0;owned[2J31mevil here" {
		t.Errorf("an error with control characters: %q", err)
	}
	answer = onairLike(200, "{\"show\": \"a\\u001b[2Jb\\tc\", \"k\\u0007\": [\"\u0085\u202e\xff\", 1.50]}")
	b, err := c.Status()
	if err != nil || string(b) != "{\"show\": \"a[2Jb c\", \"k\": [\"\uFFFD\", 1.50]}" {
		t.Errorf("status with control characters: %q %v", b, err)
	}
}
