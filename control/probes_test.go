package control

import (
	"strings"
	"testing"
)

// TestProbesBeforeTheShowIsOnAir: a server bound and serving its probes
// before the show starts answers /healthz 200, /readyz 503 "starting" and
// every other route 503; once Serve has the show, /readyz is 200 and the
// routes answer.
func TestProbesBeforeTheShowIsOnAir(t *testing.T) {
	s, err := Bind(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.ServeProbes()
	base := "http://" + s.Addr()
	if code, body := send(t, "GET", base+"/healthz", "", nil); code != 200 || !strings.Contains(body, `"ok": true`) {
		t.Errorf("GET /healthz while starting: %d %s", code, body)
	}
	if code, body := send(t, "GET", base+"/readyz", "", nil); code != 503 || !strings.Contains(body, "starting") {
		t.Errorf("GET /readyz while starting: %d %s, want 503 starting", code, body)
	}
	if code, body := send(t, "GET", base+"/status", "", nil); code != 503 || !strings.Contains(body, "not on air yet") {
		t.Errorf("GET /status while starting: %d %s, want 503", code, body)
	}
	s.Serve(&testShow{})
	if code, body := send(t, "GET", base+"/readyz", "", nil); code != 200 {
		t.Errorf("GET /readyz on air: %d %s", code, body)
	}
	if code, body := send(t, "GET", base+"/status", "", nil); code != 200 {
		t.Errorf("GET /status on air: %d %s", code, body)
	}
	// The show's own metrics, though the routes were made before it.
	if code, body := send(t, "GET", base+"/metrics", "", nil); code != 200 || !strings.Contains(body, `onair_bus_frames_total{bus="bus.a"} 42`) {
		t.Errorf("GET /metrics on air lacks the show's onair_bus_frames_total: %d %.300s", code, body)
	}
}
