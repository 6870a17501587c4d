package cpu

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/plan"
)

// auxRouted is twoSources with an AUX bus that starts on source.one and
// may be switched to source.two or scene.two.
const auxRouted = twoSources + `
bus "aux" "mon" {
  source = source.one
  routes = [source.two, scene.two]
}
output "record" "mon" {
  bus  = bus.mon
  path = "mon.y4m"
}
`

// TestAUXBusRoutesOnAir compiles an AUX bus with routes (the plan gives
// its compositor an edge from each routed source and lists what it may
// show), re-routes it on air over HTTP as the page and onair cut do (to a
// source, then to a scene), and reads the recording back: the pictures
// show source one, then source two, never anything else, and the operator's
// view lists the bus's choices and lights the AUX tally of what it shows.
func TestAUXBusRoutesOnAir(t *testing.T) {
	showPath := writeShow(t, auxRouted)
	p := compile(t, showPath, nil)
	var comp *plan.Node
	for i := range p.Nodes {
		if p.Nodes[i].Address == "bus.mon" && p.Nodes[i].Kind == "compositor" {
			comp = &p.Nodes[i]
		}
	}
	if comp == nil {
		t.Fatal("no compositor for bus.mon in the plan")
	}
	if got := comp.Params.Strings("scenes"); !slices.Equal(got, []string{"source.one", "source.two", "scene.two"}) {
		t.Errorf("bus.mon's scenes param = %v, want what it starts with, then its routes", got)
	}
	var feeds []string
	for _, e := range p.Edges {
		if e.To == comp.ID {
			feeds = append(feeds, e.From)
		}
	}
	if len(feeds) != 2 || !strings.HasPrefix(feeds[0], "source.one/") || !strings.HasPrefix(feeds[1], "source.two/") {
		t.Errorf("bus.mon is fed by %v; want an edge from each of source.one and source.two", feeds)
	}

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
	if !strings.Contains(fmt.Sprint(hello), "source.two scene.two") {
		t.Errorf("the hello lists no choices for bus.mon: %v", hello)
	}
	waitShow(t, s, "30 ticks on bus.mon", ticksAtLeast("bus.mon", 30))
	if code, body := post(t, base+"/buses/mon/cut", `{"scene":"source.two"}`); code != 200 {
		t.Fatalf("cut bus.mon to source.two: %d %s", code, body)
	}
	d := ev.waitFor(t, "tally", func(d map[string]any) bool { return fmt.Sprint(tallyOf(d, "source.two")["aux"]) == "[bus.mon]" })
	if one := tallyOf(d, "source.one"); one["aux"] != nil {
		t.Errorf("source.one is off bus.mon but its tally says %v", one)
	}
	after := busOf(s.State.Summary(), "bus.mon").Ticks
	waitShow(t, s, "30 ticks of source.two", ticksAtLeast("bus.mon", after+30))
	if code, body := post(t, base+"/buses/mon/fade", `{"scene":"two","duration":"100ms"}`); code != 200 {
		t.Fatalf("fade bus.mon to scene.two: %d %s", code, body)
	}
	ev.waitFor(t, "on_air", func(d map[string]any) bool { return d["bus"] == "bus.mon" && fmt.Sprint(d["on_air"]) == "[scene.two]" })
	if code, body := post(t, base+"/buses/mon/cut", `{"scene":"scene.one"}`); code != 404 || !strings.Contains(body, "source.one, source.two, scene.two") {
		t.Errorf("a cut of bus.mon to a scene it has no route to: %d %s; want 404 naming its choices", code, body)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	frames := readY4M(t, filepath.Join(filepath.Dir(showPath), "mon.y4m"))
	one, two := s.State.StampID("source.one"), s.State.StampID("source.two")
	var seen []uint16 // the sources shown, each run of pictures once
	for i, f := range frames {
		id, _, ok := media.ReadStamp(f, frame.Rect{W: f.Width, H: f.Height})
		if !ok {
			if len(seen) == 0 {
				continue // leading black, before a source frame was released
			}
			t.Fatalf("picture %d has no stamp", i)
		}
		if len(seen) == 0 || seen[len(seen)-1] != id {
			seen = append(seen, id)
		}
	}
	if !slices.Equal(seen, []uint16{one, two}) {
		t.Errorf("bus.mon's recording shows sources %v; want %d then %d (scene.two draws source two too)", seen, one, two)
	}
}
