package control

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/showerr"
)

// testShow is a show with two buses and two scenes that records switches.
type testShow struct {
	mu       sync.Mutex
	switches []string
}

func (s *testShow) Status() any  { return map[string]any{"buses": []string{"bus.a", "bus.b"}} }
func (s *testShow) Plan() []byte { return []byte(`{"format_version":1}`) }
func (s *testShow) Switch(bus, scene, kind string, d time.Duration) error {
	if bus != "a" && bus != "bus.a" {
		return fmt.Errorf("bus %q: %w", bus, showerr.ErrNotFound)
	}
	if scene != "scene.grid" {
		return fmt.Errorf("scene %q: %w", scene, showerr.ErrNotFound)
	}
	s.mu.Lock()
	s.switches = append(s.switches, fmt.Sprintf("%s %s %s %v", bus, scene, kind, d))
	s.mu.Unlock()
	return nil
}
func (s *testShow) Collect(f func(metrics.Sample)) {
	f(metrics.Sample{Name: "onair_bus_frames_total", Help: "Frames drawn.", Kind: metrics.Counter, Labels: [][2]string{{"bus", "bus.a"}}, Value: 42})
	f(metrics.Sample{Name: "onair_playout_draw_seconds", Help: "Draw time.", Kind: metrics.Histogram, Labels: [][2]string{{"bus", "bus.a"}},
		Buckets: map[float64]uint64{0.008: 3, 0.016: 4}, Sum: 0.05, Count: 5})
}

func start(t *testing.T, opts Options) (*Server, *testShow) {
	t.Helper()
	show := &testShow{}
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

func request(t *testing.T, method, url, body, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestStatusPlanAndMetrics(t *testing.T) {
	s, _ := start(t, Options{})
	base := "http://" + s.Addr()
	if code, body := request(t, "GET", base+"/status", "", ""); code != 200 || !strings.Contains(body, `"bus.a"`) {
		t.Fatalf("/status: %d %s", code, body)
	}
	if code, body := request(t, "GET", base+"/plan", "", ""); code != 200 || body != `{"format_version":1}` {
		t.Fatalf("/plan: %d %s", code, body)
	}
	code, body := request(t, "GET", base+"/metrics", "", "")
	for _, want := range []string{`onair_bus_frames_total{bus="bus.a"} 42`, `onair_playout_draw_seconds_bucket{bus="bus.a",le="0.008"} 3`, `onair_playout_draw_seconds_count{bus="bus.a"} 5`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}

func TestSwitchRequests(t *testing.T) {
	s, show := start(t, Options{})
	base := "http://" + s.Addr()
	cases := []struct {
		path, body string
		code       int
		msg        string
	}{
		{"/buses/a/cut", `{"scene":"scene.grid"}`, 200, `"transition": "cut"`},
		{"/buses/a/fade", `{"scene":"scene.grid","duration":"500ms"}`, 200, `"duration": "500ms"`},
		{"/buses/a/wipe", `{"scene":"scene.grid"}`, 200, `"duration": "1s"`},
		{"/buses/zz/cut", `{"scene":"scene.grid"}`, 404, `bus \"zz\"`},
		{"/buses/a/cut", `{"scene":"scene.nope"}`, 404, `scene \"scene.nope\"`},
		{"/buses/a/cut", `{"scene":`, 400, "malformed request body"},
		{"/buses/a/cut", `{"scene":"scene.grid","sceen":"x"}`, 400, "unknown field"},
		{"/buses/a/cut", `{}`, 400, "names no scene"},
		{"/buses/a/cut", `{"scene":"scene.grid","duration":"1s"}`, 400, "a cut has no duration"},
		{"/buses/a/fade", `{"scene":"scene.grid","duration":"soon"}`, 400, "Go duration"},
		{"/buses/a/spin", `{"scene":"scene.grid"}`, 404, "no such endpoint"},
	}
	for _, c := range cases {
		code, body := request(t, "POST", base+c.path, c.body, "")
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("POST %s %s: %d %s, want %d containing %q", c.path, c.body, code, body, c.code, c.msg)
		}
	}
	if code, _ := request(t, "GET", base+"/buses/a/cut", "", ""); code != 404 && code != 405 {
		t.Errorf("GET on a POST endpoint: %d", code)
	}
	if len(show.switches) != 3 {
		t.Errorf("switches %v", show.switches)
	}
}

func TestClientSwitchAndErrors(t *testing.T) {
	s, show := start(t, Options{})
	c := &Client{Addr: s.Addr()}
	if err := c.Switch("a", "scene.grid", "fade", 250*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if show.switches[0] != "a scene.grid fade 250ms" {
		t.Fatalf("switch %q", show.switches[0])
	}
	err := c.Switch("b", "scene.grid", "cut", 0)
	if err == nil || !strings.Contains(err.Error(), `bus "b"`) {
		t.Fatalf("err = %v", err)
	}
	if b, err := c.Status(); err != nil || !strings.Contains(string(b), "bus.b") {
		t.Fatalf("status %s %v", b, err)
	}
	dead := &Client{Addr: "127.0.0.1:1"}
	if _, err := dead.Status(); err == nil || !strings.Contains(err.Error(), "cannot reach the show") {
		t.Fatalf("err = %v", err)
	}
}

func TestNonLoopbackNeedsAToken(t *testing.T) {
	if _, err := Start(&testShow{}, Options{Addr: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("listening on every address without a token: err = %v", err)
	}
	if _, err := Start(&testShow{}, Options{Addr: "nonsense"}); err == nil {
		t.Fatal("a malformed address was accepted")
	}
	if _, err := Start(&testShow{}, Options{Addr: "0.0.0.0:0", Token: "s3cret"}); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Fatalf("listening on every address with a 6-character token: err = %v", err)
	}
	s, _ := start(t, Options{Addr: "127.0.0.1:0", Token: "s3cret"})
	base := "http://" + s.Addr()
	if code, body := request(t, "GET", base+"/status", "", ""); code != 401 || !strings.Contains(body, "token") {
		t.Fatalf("no token: %d %s", code, body)
	}
	if code, _ := request(t, "GET", base+"/status", "", "wrong"); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	if code, _ := request(t, "GET", base+"/status", "", "s3cret"); code != 200 {
		t.Fatalf("right token: %d", code)
	}
	c := &Client{Addr: s.Addr(), Token: "s3cret"}
	if _, err := c.Status(); err != nil {
		t.Fatal(err)
	}
}

// applyFunc is an Applier made of a function.
type applyFunc func([]byte) (any, error)

func (f applyFunc) Apply(b []byte) (any, error) { return f(b) }

// POST /plan hands the body to the Applier and maps its errors to status
// codes; a server without one says so; a plan over MaxPlanBytes is refused
// before the Applier sees it.
func TestApplyRequests(t *testing.T) {
	show := &testShow{}
	s, err := Bind(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var got []string
	s.SetApplier(applyFunc(func(b []byte) (any, error) {
		got = append(got, string(b))
		switch string(b) {
		case `{"new":"scene"}`:
			return map[string][]string{"applied": {"scene.grid"}}, nil
		case `{"new":"source"}`:
			return nil, fmt.Errorf("source.a replace: %w", showerr.ErrConflict)
		}
		return nil, fmt.Errorf("not a plan: %w", showerr.ErrInvalid)
	}))
	s.Serve(show)
	base := "http://" + s.Addr()
	for _, c := range []struct {
		body string
		code int
		msg  string
	}{
		{`{"new":"scene"}`, 200, `"scene.grid"`},
		{`{"new":"source"}`, 409, "source.a replace"},
		{`{`, 400, "not a plan"},
		{`{"x":"` + strings.Repeat("y", MaxPlanBytes) + `"}`, 413, "larger than"},
	} {
		code, body := request(t, "POST", base+"/plan", c.body, "")
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("POST /plan %.40s: %d %s, want %d containing %q", c.body, code, body, c.code, c.msg)
		}
	}
	if len(got) != 3 {
		t.Errorf("the Applier saw %d plans, want 3 (not the one over the limit)", len(got))
	}

	plain, _ := start(t, Options{})
	if code, body := request(t, "POST", "http://"+plain.Addr()+"/plan", `{}`, ""); code != 404 || !strings.Contains(body, "takes no new plans") {
		t.Errorf("POST /plan to a server without an Applier: %d %s", code, body)
	}
}
