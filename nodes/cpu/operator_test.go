package cpu

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/events"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

const withAux = twoSources + `
bus "aux" "mon" {
  source = source.two
}
output "null" "mon" {
  bus = bus.mon
}
`

// generous bounds every wait for the show: it fails only a test that
// would otherwise hang.
const generous = 20 * time.Second

// eventStream follows a show's GET /events.
type eventStream struct {
	ch   chan events.Event
	body io.Closer
}

func followEvents(t *testing.T, base string) *eventStream {
	t.Helper()
	resp, err := http.Get(base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET /events: %s", resp.Status)
	}
	ev := &eventStream{ch: make(chan events.Event, 1024), body: resp.Body}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(ev.ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e events.Event
				if json.Unmarshal([]byte(d), &e) == nil {
					ev.ch <- e
				}
			}
		}
	}()
	return ev
}

// waitFor returns the next event of type typ whose data satisfies ok,
// failing after the generous bound.
func (ev *eventStream) waitFor(t *testing.T, typ string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	timeout := time.After(generous)
	for {
		select {
		case e, open := <-ev.ch:
			if !open {
				t.Fatalf("the event stream ended while waiting for %s", typ)
			}
			if e.Type != typ {
				continue
			}
			d, _ := e.Data.(map[string]any)
			if ok == nil || ok(d) {
				return d
			}
		case <-timeout:
			t.Fatalf("no %s event in %v", typ, generous)
		}
	}
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func tallyOf(d map[string]any, src string) map[string]any {
	t, _ := d["tally"].(map[string]any)
	x, _ := t[src].(map[string]any)
	return x
}

// TestPreviewTakeTallyAndEvents drives a show's preview/program workflow
// over HTTP and follows it on the event stream: a scene on preview lights
// its sources' preview tally, a take puts it on air at the next tick (the
// on_air event names the tick) and swaps preview and program, and /status
// says the same.
func TestPreviewTakeTallyAndEvents(t *testing.T) {
	p := compile(t, writeShow(t, withAux), nil)
	pj, _ := plan.Marshal(p)
	s := startShowWith(t, p, pj)
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr()
	ev := followEvents(t, base)
	hello := ev.waitFor(t, "hello", nil)
	if !strings.Contains(fmt.Sprint(hello), "scene.one") {
		t.Fatalf("hello: %v", hello)
	}

	if code, body := post(t, base+"/buses/pgm/preview", `{"scene":"scene.two"}`); code != 200 {
		t.Fatalf("preview: %d %s", code, body)
	}
	ev.waitFor(t, "preview", func(d map[string]any) bool { return d["preview"] == "scene.two" })
	d := ev.waitFor(t, "tally", nil)
	if two := tallyOf(d, "source.two"); two["preview"] != true || two["program"] != false || fmt.Sprint(two["aux"]) != "[bus.mon]" {
		t.Errorf("source.two's tally with scene.two on preview: %v", two)
	}
	if one := tallyOf(d, "source.one"); one["program"] != true || one["preview"] != false {
		t.Errorf("source.one's tally on air: %v", one)
	}

	ticksBefore := busOf(s.State.Summary(), "bus.pgm").Ticks
	if code, body := post(t, base+"/buses/pgm/take", `{"transition":"cut"}`); code != 200 {
		t.Fatalf("take: %d %s", code, body)
	}
	ticksAfter := busOf(s.State.Summary(), "bus.pgm").Ticks
	sw := ev.waitFor(t, "switch", nil)
	onAir := ev.waitFor(t, "on_air", func(d map[string]any) bool { return d["bus"] == "bus.pgm" })
	if fmt.Sprint(onAir["on_air"]) != "[scene.two]" {
		t.Errorf("on_air after the take: %v", onAir)
	}
	// The cut is drawn on the first tick drawn after the request (or the
	// next, when one was being drawn as it arrived), told by counting ticks
	// rather than by the clock, which a busy machine makes late: the ticks
	// committed before the request are numbered from FirstTick on, and each
	// one drawn or missed since takes a number.
	asked, deadline := sw["asked_ns"].(float64), onAir["deadline_ns"].(float64)
	bus := busOf(s.State.Summary(), "bus.pgm")
	k := int64(onAir["tick"].(float64))
	if lo, hi := bus.FirstTick+int64(ticksBefore), bus.FirstTick+int64(ticksAfter)+1+int64(bus.Missed); k < lo || k > hi {
		t.Errorf("asked at %v, drawn on tick %d (deadline %v); %d ticks were committed before the request and %d after it, from tick %d with %d missed: not the next tick",
			time.Duration(asked), k, time.Duration(deadline), ticksBefore, ticksAfter, bus.FirstTick, bus.Missed)
	}
	d = ev.waitFor(t, "tally", func(d map[string]any) bool { return tallyOf(d, "source.two")["program"] == true })
	if one := tallyOf(d, "source.one"); one["program"] != false || one["preview"] != true {
		t.Errorf("source.one after the take (to preview): %v", one)
	}

	_, body := get(t, base+"/status")
	var st show.StatusReport
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	var pgm show.BusOperator
	for _, b := range st.Operator.Buses {
		if b.Address == "bus.pgm" {
			pgm = b
		}
	}
	if fmt.Sprint(pgm.OnAir) != "[scene.two]" || pgm.Preview != "scene.one" {
		t.Errorf("/status operator: %+v", pgm)
	}
	if tl := st.Operator.Tally["source.two"]; !tl.Program || tl.Preview || len(tl.Aux) != 1 {
		t.Errorf("/status tally of source.two: %+v", tl)
	}

	// Snapshots: a bus and a source, small JPEGs, once someone asks.
	for _, name := range []string{"bus.pgm", "source.one", "mon"} {
		jpg := waitSnapshot(t, base, name)
		img, err := jpeg.Decode(bytes.NewReader(jpg))
		if err != nil {
			t.Fatalf("snapshot of %s: %v", name, err)
		}
		if w := img.Bounds().Dx(); w > show.SnapshotWidth {
			t.Errorf("snapshot of %s is %d wide", name, w)
		}
	}
}

// waitSnapshot asks for a tile until it has one.
func waitSnapshot(t *testing.T, base, name string) []byte {
	t.Helper()
	var b []byte
	// 503 until the tile's next frame, a tick away.
	testwait.Until(t, generous, "a snapshot of "+name, func() bool {
		resp, err := http.Get(base + "/snapshot/" + name)
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 && resp.StatusCode != 503 {
			t.Fatalf("GET /snapshot/%s: %s %s", name, resp.Status, b)
		}
		return resp.StatusCode == 200
	})
	return b
}

// TestOperatorBadInput: unknown buses and scenes, an AUX bus's preview, a
// take with nothing on preview and malformed bodies get 4xx answers that
// say what to do, too many event clients get 503, and the show goes on
// drawing through all of it, on air as it was. (Whether it also keeps
// every deadline needs an idle machine; the test logs the count.)
func TestOperatorBadInput(t *testing.T) {
	p := compile(t, writeShow(t, withAux), nil)
	s := startShow(t, p)
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0", Limits: control.Limits{MaxEventClients: 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr()
	c := &control.Client{Addr: srv.Addr()}
	missed := func() (ticks, missed uint64) {
		b, err := c.Status()
		if err != nil {
			t.Fatal(err)
		}
		var st show.StatusReport
		json.Unmarshal(b, &st)
		for _, bus := range st.Summary.Buses {
			ticks, missed = ticks+bus.Ticks, missed+bus.Missed
		}
		return
	}
	waitTicks := func(n uint64) (uint64, uint64) {
		testwait.Until(t, generous, fmt.Sprintf("%d ticks", n), func() bool { ticks, _ := missed(); return ticks >= n })
		return missed()
	}
	t1, m1 := waitTicks(20)

	cases := []struct {
		path, body string
		code       int
		msg        string
	}{
		{"/buses/nope/preview", `{"scene":"scene.one"}`, 404, `no bus \"nope\" in this show (buses: bus.mon, bus.pgm)`},
		{"/buses/pgm/preview", `{"scene":"scene.nope"}`, 404, "its scenes: scene.one, scene.two"},
		{"/buses/mon/preview", `{"scene":"scene.one"}`, 400, "has no scenes"},
		{"/buses/pgm/take", `{}`, 400, "no scene on preview: set one first"},
		{"/buses/mon/take", `{}`, 400, "only Program buses have a preview"},
		{"/buses/nope/take", `{}`, 404, "no bus"},
		{"/buses/pgm/take", `{"transition":"fade","duration":"forever"}`, 400, "Go duration"},
		{"/buses/pgm/preview", `[1,2]`, 400, "malformed request body"},
		{"/buses/pgm/preview", strings.Repeat("{", 100000), 413, "larger than"},
	}
	for i := 0; i < 20; i++ {
		for _, cs := range cases {
			code, body := post(t, base+cs.path, cs.body)
			if code != cs.code || !strings.Contains(body, cs.msg) {
				t.Fatalf("POST %s %.40s: %d %s, want %d containing %q", cs.path, cs.body, code, body, cs.code, cs.msg)
			}
		}
	}
	var held []io.Closer
	for i := 0; i < 4; i++ {
		held = append(held, followEvents(t, base).body)
	}
	for i := 0; i < 10; i++ {
		resp, err := http.Get(base + "/events")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || !strings.Contains(string(b), "already streams events to 4 clients") {
			t.Fatalf("event client %d over the limit: %s %s", 5+i, resp.Status, b)
		}
	}
	for _, h := range held {
		h.Close()
	}
	t2, m2 := waitTicks(t1 + 30)
	t.Logf("%d ticks meanwhile, %d missed deadlines", t2-t1, m2-m1)
	if t2 < t1+30 {
		t.Errorf("the show drew %d ticks in %v of bad requests, want 30 or more", t2-t1, generous)
	}
	if sum := s.State.Summary(); sum.Buses[1].OnAir != "scene.one" {
		t.Errorf("bad requests switched the show: %+v", sum.Buses[1])
	}
}
