package cpu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/events"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// TestSwitchAtATimecodeOverHTTP asks for a cut at a timecode over HTTP,
// as the page does, and with the client `onair cut -at` uses: /status
// reports the show's timecode, the on_air event names the tick and
// timecode the cut landed on, every event carries the timecode, each
// switch records where it came from, and bad timecodes get 400 and a past
// one 409 saying how late.
func TestSwitchAtATimecodeOverHTTP(t *testing.T) {
	p := compile(t, writeShow(t, timecodeShow), nil)
	pj, _ := plan.Marshal(p)
	s := startShowWith(t, p, pj)
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr()
	c := &control.Client{Addr: srv.Addr()}
	status := func() show.StatusReport {
		b, err := c.Status()
		if err != nil {
			t.Fatal(err)
		}
		var st show.StatusReport
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	waitShow(t, s, "15 ticks", ticksAtLeast("bus.pgm", 15))
	st := status()
	if tc := st.Timecode; tc.Rate != "30000/1001 drop-frame" || !tc.DropFrame || tc.Origin != "start" || tc.Start != "00:59:59;00" || tc.Buses["bus.pgm"] == "" {
		t.Fatalf("/status timecode: %+v", tc)
	}
	ev := followEvents(t, base)
	ev.waitFor(t, "hello", nil)

	target := st.Timecode.Tick + 45
	at := s.State.TimecodeAt(target).String()
	req, _ := http.NewRequest("POST", base+"/buses/pgm/cut", strings.NewReader(fmt.Sprintf(`{"scene":"scene.two","at":%q}`, at)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(control.OriginHeader, "page")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST cut at %s: %s", at, resp.Status)
	}
	sw := ev.waitFor(t, "switch", nil)
	if sw["at"] != at || sw["origin"] != "page" {
		t.Errorf("the switch event: %v; want at %s from the page", sw, at)
	}
	var onAir map[string]any
	timeout := time.After(generous)
	for onAir == nil {
		var e events.Event
		select {
		case got, open := <-ev.ch:
			if !open {
				t.Fatal("the event stream ended before the cut went on air")
			}
			e = got
		case <-timeout:
			t.Fatalf("no on_air event in %v", generous)
		}
		if e.Timecode == "" {
			t.Errorf("a %s event without a timecode", e.Type)
		}
		if d, _ := e.Data.(map[string]any); e.Type == "on_air" {
			onAir = d
		}
	}
	missed := busOf(s.State.Summary(), "bus.pgm").Missed
	if onAir["timecode"] != at && missed == 0 {
		t.Errorf("on_air: %v; want the cut on %s (tick %d)", onAir, at, target)
	}
	if onAir["tick"] != float64(target) && missed == 0 {
		t.Errorf("on_air on tick %v, want %d", onAir["tick"], target)
	}
	// onair cut -at: the client, from the CLI.
	next := s.State.TimecodeAt(status().Timecode.Tick + 30).String()
	if err := c.SwitchAt("pgm", "scene.one", "cut", 0, next); err != nil {
		t.Fatal(err)
	}
	waitShow(t, s, "the second switch drawn", func(sum show.Summary) bool {
		b := busOf(sum, "bus.pgm")
		return len(b.Cuts) == 2 && b.Cuts[1].Tick >= 0
	})
	// A take at a timecode: the preview goes on air on that tick.
	if code, body := post(t, base+"/buses/pgm/preview", `{"scene":"scene.two"}`); code != 200 {
		t.Fatalf("POST preview: %d %s", code, body)
	}
	take := s.State.TimecodeAt(status().Timecode.Tick + 30).String()
	if code, body := post(t, base+"/buses/pgm/take", fmt.Sprintf(`{"at":%q}`, take)); code != 200 || !strings.Contains(body, take) {
		t.Fatalf("POST take at %s: %d %s", take, code, body)
	}
	waitShow(t, s, "the take drawn", func(sum show.Summary) bool {
		b := busOf(sum, "bus.pgm")
		return len(b.Cuts) == 3 && b.Cuts[2].Tick >= 0
	})
	cuts := busOf(s.State.Summary(), "bus.pgm").Cuts
	if cuts[0].Origin != "page" || cuts[1].Origin != "cli" || cuts[1].At != next || cuts[2].At != take || cuts[2].Scene != "scene.two" || cuts[2].Origin != "api" {
		t.Errorf("the switches' records: %+v", cuts)
	}
	if m := busOf(s.State.Summary(), "bus.pgm").Missed; m == 0 && (cuts[1].Timecode != next || cuts[2].Timecode != take) {
		t.Errorf("with no deadline missed, the switches at %s and %s landed on %s and %s", next, take, cuts[1].Timecode, cuts[2].Timecode)
	}
	for _, cs := range []struct {
		body string
		code int
		msg  string
	}{
		{fmt.Sprintf(`{"scene":"scene.two","at":%q}`, at), 409, "frames ("},
		{`{"scene":"scene.two","at":"01:01:00;00"}`, 400, "does not exist at 30000/1001 drop-frame"},
		{`{"scene":"scene.two","at":"01:00:00;30"}`, 400, "frames run from 00 to 29"},
		{`{"scene":"scene.two","at":"soon"}`, 400, "want four fields"},
	} {
		code, body := post(t, base+"/buses/pgm/cut", cs.body)
		if code != cs.code || !strings.Contains(body, cs.msg) {
			t.Errorf("POST cut %s: %d %s; want %d with %q", cs.body, code, body, cs.code, cs.msg)
		}
	}
	if err := c.SwitchAt("pgm", "scene.two", "cut", 0, at); err == nil || !strings.Contains(err.Error(), "late") {
		t.Errorf("onair cut -at a past tick: %v", err)
	}
}
