package control

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a wall clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// syncBuffer is a log the server writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// do sends one request on a fresh connection and returns the answer, its
// body read.
func do(t *testing.T, method, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: generous}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestWrongTokensAreLoggedAndLimited is issue 27's item 15: 200 wrong
// tokens in 1.4 s were neither limited nor logged. Each wrong token, in a
// login or an Authorization header, is logged with the client's address;
// after MaxLoginFailures of them that client's attempts are answered 429
// with Retry-After, the right token too, until the clock has moved on;
// another client (a proxy on this machine says which) is not held up.
func TestWrongTokensAreLoggedAndLimited(t *testing.T) {
	const token = "0123456789abcdef"
	clock := &fakeClock{t: time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)}
	var logs syncBuffer
	s, _ := start(t, Options{Token: token, Now: clock.now, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	base := "http://" + s.Addr()
	js := map[string]string{"Content-Type": "application/json"}
	for i := range MaxLoginFailures {
		var resp *http.Response
		if i%2 == 0 {
			resp, _ = do(t, "POST", base+"/login", `{"token":"guess"}`, js)
		} else {
			resp, _ = do(t, "GET", base+"/status", "", map[string]string{"Authorization": "Bearer guess"})
		}
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %s, want 401", i+1, resp.Status)
		}
	}
	for _, c := range []struct {
		method, path, body string
		hdr                map[string]string
	}{
		{"POST", "/login", `{"token":"guess"}`, js},
		{"POST", "/login", `{"token":"` + token + `"}`, js},
		{"GET", "/status", "", map[string]string{"Authorization": "Bearer " + token}},
	} {
		resp, body := do(t, c.method, base+c.path, c.body, c.hdr)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "6" || !strings.Contains(body, "too many wrong tokens from 127.0.0.1") {
			t.Errorf("%s %s after %d wrong tokens: %s (Retry-After %q) %s, want 429 for 6 s", c.method, c.path, MaxLoginFailures, resp.Status, resp.Header.Get("Retry-After"), body)
		}
	}
	// A client behind a proxy on this machine is another address.
	if resp, _ := do(t, "GET", base+"/status", "", map[string]string{"Authorization": "Bearer " + token, "X-Forwarded-For": "192.0.2.7"}); resp.StatusCode != 200 {
		t.Errorf("another client, behind a local proxy: %s, want 200", resp.Status)
	}
	log := logs.String()
	if n := strings.Count(log, `msg="wrong token" client=127.0.0.1`); n != MaxLoginFailures {
		t.Errorf("%d wrong tokens logged, want %d:\n%s", n, MaxLoginFailures, log)
	}
	if n := strings.Count(log, "refusing this client's logins"); n != 1 {
		t.Errorf("the limit logged %d times, want once:\n%s", n, log)
	}
	clock.add(LoginFailureWindow / MaxLoginFailures)
	if resp, body := do(t, "POST", base+"/login", `{"token":"`+token+`"}`, js); resp.StatusCode != 200 {
		t.Errorf("the right token once the wait is over: %s %s", resp.Status, body)
	}
}

// TestSessionCookieIsSecureOverTLS is issue 27's item 15: behind a proxy
// that terminates TLS the session cookie was never Secure. A proxy on this
// machine that says X-Forwarded-Proto: https gets a Secure cookie; a plain
// request does not, and neither does a request from another machine that
// claims it.
func TestSessionCookieIsSecureOverTLS(t *testing.T) {
	const token = "0123456789abcdef"
	s, _ := start(t, Options{Token: token})
	base := "http://" + s.Addr()
	login := `{"token":"` + token + `"}`
	secure := func(resp *http.Response) (bool, bool) {
		for _, c := range resp.Cookies() {
			if c.Name == CookieName {
				return c.Secure, true
			}
		}
		return false, false
	}
	for _, c := range []struct {
		proto string
		want  bool
	}{{"", false}, {"https", true}, {"http", false}} {
		resp, body := do(t, "POST", base+"/login", login, map[string]string{"Content-Type": "application/json", "X-Forwarded-Proto": c.proto})
		sec, ok := secure(resp)
		if resp.StatusCode != 200 || !ok || sec != c.want {
			t.Errorf("login with X-Forwarded-Proto %q: %s %s, cookie Secure=%v (set %v), want %v", c.proto, resp.Status, body, sec, ok, c.want)
		}
	}
	req := httptest.NewRequest("POST", base+"/login", strings.NewReader(login))
	req.RemoteAddr = "192.0.2.1:40000"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-Proto", "https")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if sec, ok := secure(rec.Result()); rec.Code != 200 || !ok || sec {
		t.Errorf("login from another machine claiming https: %d, cookie Secure=%v (set %v), want a cookie that is not Secure", rec.Code, sec, ok)
	}
}

// TestClientWaitsForApplyAsLongAsTheServerWorks is issue 27's item 8:
// onair apply gave up after 5 s while the show went on applying. The
// client waits for POST /plan as long as a server may read, carry out and
// answer a request (its header timeout and write timeout, which a default
// server runs with), and longer than for any other answer.
func TestClientWaitsForApplyAsLongAsTheServerWorks(t *testing.T) {
	s, _ := start(t, Options{})
	bound := s.srv.ReadHeaderTimeout + s.srv.WriteTimeout
	if ApplyWait <= bound || ApplyWait <= DefaultClientTimeout {
		t.Errorf("the client waits %v for POST /plan; the server may take %v to answer", ApplyWait, bound)
	}
}
