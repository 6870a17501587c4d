package cpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// multiviewerShow: two full-frame scenes on Program, an AUX bus on source
// three that may be routed to source two or scene one, and a source no bus
// takes.
const multiviewerShow = `
show {
  name       = "multiviewer"
  size       = "320x180"
  frame_rate = "30"
}
canvas {
  pacing_loops  = 2
  input_poll_ms = 8
}
source "test_pattern" "one" {
  pattern = "ramp"
}
source "test_pattern" "two" {
  pattern = "checker"
}
source "test_pattern" "three" {
  pattern = "bars"
}
source "test_pattern" "spare" {
  pattern = "bars"
}
scene "one" {
  layer {
    source = source.one
  }
}
scene "two" {
  layer {
    source = source.two
  }
}
bus "program" "pgm" {
  scene = scene.one
}
bus "aux" "mon" {
  source = source.three
  routes = [source.two, scene.one]
}
output "null" "pgm" {
  bus = bus.pgm
}
output "null" "mon" {
  bus = bus.mon
}
`

// extremes is the share of a monitor's pixels that are near black or near
// white: the checker pattern is nearly all of them, the ramp few, black
// all (with mean luma under 16).
const extremes = `((sel) => {
  const cv = document.querySelector(sel + ' canvas');
  const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
  let ext = 0, sum = 0, n = d.length / 4;
  for (let i = 0; i < d.length; i += 4) {
    const y = 0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2];
    sum += y;
    if (y < 40 || y > 215) ext++;
  }
  return {Extreme: ext / n, Mean: sum / n};
})`

type picture struct{ Extreme, Mean float64 }

func (p picture) checker() bool { return p.Extreme > 0.85 && p.Mean > 40 }
func (p picture) black() bool   { return p.Mean < 16 }

// TestMultiviewerKeysMonitorsAndRoutes drives the page with its keys as an
// operator would, reading what its monitors show: 2 puts scene two on the
// Preview monitor (drawn from source two's picture: the checker), Space
// cuts it to Program (the Program monitor then shows the checker), M and
// Enter take scene one with a fade of "15f" (15 frames: 500 ms at 30 fps),
// F fades Program to black (the monitor goes black) and F again back; the
// AUX bus's row offers its routes and a click re-routes it; the unused
// source's tile shows why it has no picture; every tile shows its age.
func TestMultiviewerKeysMonitorsAndRoutes(t *testing.T) {
	bin := chromium(t)
	p := compile(t, writeShow(t, multiviewerShow), nil)
	pj, _ := plan.Marshal(p)
	s := startShowWith(t, p, pj)
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr()
	ev := followEvents(t, base)
	ctx := chromiumPage(t, bin)
	monitor := func(which string) picture {
		return value(t, ctx, "the "+which+" monitor", chromedp.Evaluate[picture](extremes+`('[data-monitor="`+which+`"]')`))
	}
	loads := func(which string) int {
		return value(t, ctx, "the "+which+" monitor's pictures", chromedp.Evaluate[int](`+document.querySelector('[data-monitor="`+which+`"]').dataset.loads || 0`))
	}
	// waitMonitor waits for two new pictures on a monitor, then for it to
	// show what ok says.
	waitMonitor := func(which, what string, ok func(picture) bool) {
		t.Helper()
		n := loads(which)
		testwait.Until(t, generous, "the "+which+" monitor to show "+what, func() bool { return loads(which) >= n+2 && ok(monitor(which)) })
	}
	onAir := func(bus string) string {
		for _, b := range s.State.Operator().Buses {
			if b.Address == bus {
				return strings.Join(b.OnAir, " ")
			}
		}
		return ""
	}

	do(t, ctx, "opening the page",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`#live.on`),
		chromedp.WaitVisible(`[data-monitor="program"][data-loaded="1"]`),
		chromedp.Click(`#show-sources`),
		chromedp.KeyEvent("2"))
	do(t, ctx, "scene two on preview", chromedp.WaitVisible(`[data-scene="bus.pgm|scene.two"].pvw`))
	do(t, ctx, "scene two on preview", chromedp.WaitVisible(`[data-monitor="preview"].pvw[data-loaded="1"]`))
	waitMonitor("preview", "scene two (the checker)", picture.checker)
	if pgm := monitor("program"); pgm.checker() || pgm.black() {
		t.Errorf("the Program monitor shows %+v with scene one (the ramp) on air", pgm)
	}

	do(t, ctx, "Space: cut", chromedp.KeyEvent(" "), chromedp.WaitVisible(`[data-scene="bus.pgm|scene.two"].pgm`))
	waitMonitor("program", "scene two after the cut", picture.checker)
	if c := busOf(s.State.Summary(), "bus.pgm").Cuts; len(c) != 1 || c[0].Kind != "cut" || c[0].Scene != "scene.two" || c[0].Origin != show.OriginPage {
		t.Fatalf("after Space the bus logged %+v, want one cut to scene.two from the page", c)
	}

	do(t, ctx, "M and 15f", chromedp.KeyEvent("m"), chromedp.SetValue(`#dur`, "15f"))
	value(t, ctx, "no focus on an input", chromedp.Evaluate[bool](`(document.activeElement.blur(), true)`))
	do(t, ctx, "Enter: a fade of 15 frames", chromedp.KeyEvent(kb.Enter))
	sw := ev.waitFor(t, "switch", func(d map[string]any) bool { return d["transition"] == "fade" })
	if sw["scene"] != "scene.one" || fmt.Sprint(sw["duration_ms"]) != "500" || sw["origin"] != show.OriginPage {
		t.Errorf("Enter after M and 15f asked for %v; want a fade to scene.one (back from preview) over 500 ms from the page", sw)
	}
	testwait.Until(t, generous, "scene one on air", func() bool { return onAir("bus.pgm") == "scene.one" })

	do(t, ctx, "F: fade to black", chromedp.KeyEvent("f"))
	testwait.Until(t, generous, "black on air", func() bool { return onAir("bus.pgm") == show.BlackView })
	do(t, ctx, "the FTB button lit", chromedp.WaitVisible(`#ftb.on`))
	waitMonitor("program", "black", picture.black)
	do(t, ctx, "F: back from black", chromedp.KeyEvent("f"))
	testwait.Until(t, generous, "scene one back on air", func() bool { return onAir("bus.pgm") == "scene.one" })
	if pv := value(t, ctx, "the preview", chromedp.Evaluate[string](`document.querySelector('[data-scene].pvw').dataset.scene`)); pv != "bus.pgm|scene.two" {
		t.Errorf("after black and back the preview is %q, want scene two still", pv)
	}

	// The AUX bus: a row of its routes, not a Program row.
	row := value(t, ctx, "bus.mon's row", chromedp.Evaluate[string](`document.querySelector('[data-bus="bus.mon"]').textContent`))
	if !strings.Contains(row, "AUX") || strings.Contains(row, "PGM") || !strings.Contains(row, "two") {
		t.Errorf("bus.mon's row reads %q; want AUX with its routes", row)
	}
	do(t, ctx, "C and a click: bus.mon to source two",
		chromedp.KeyEvent("c"),
		chromedp.Click(`[data-choice="bus.mon|source.two"]`),
		chromedp.WaitVisible(`[data-choice="bus.mon|source.two"].aux-on`))
	if got := onAir("bus.mon"); got != "source.two" {
		t.Errorf("bus.mon shows %q after the click, want source.two", got)
	}

	// The unused source: a placeholder saying why, no broken picture.
	do(t, ctx, "the unused source's tile", chromedp.WaitVisible(`[data-tile="source.spare"].unused .placeholder`))
	msg := value(t, ctx, "its placeholder", chromedp.Evaluate[string](`document.querySelector('[data-tile="source.spare"] .placeholder').textContent`))
	if !strings.Contains(msg, "source.spare feeds no bus") {
		t.Errorf("the unused source's placeholder reads %q", msg)
	}
	// Every tile with a picture shows its age.
	ages := value(t, ctx, "the tiles' ages", chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-tile][data-loaded="1"]')].map((t) => t.dataset.tile + "=" + t.dataset.age + "/" + t.querySelector('.age').textContent)`))
	for _, a := range ages {
		if !strings.HasSuffix(a, " ms") && !strings.HasSuffix(a, " s") {
			t.Errorf("tile %s shows no age", a)
		}
	}
	t.Logf("ages: %v", ages)
}

// rect is an element's box on the page, in CSS pixels.
type rect struct{ Top, Bottom, Left, Right, Width, Height float64 }

const rectOf = `((sel) => { const r = document.querySelector(sel).getBoundingClientRect(); return {Top: r.top, Bottom: r.bottom, Left: r.left, Right: r.right, Width: r.width, Height: r.height}; })`

// TestMultiviewerOnAPhone opens the page on a phone's screen (390×844,
// touch): the Program and Preview monitors are stacked, each nearly the
// screen's width and both on the first screen; the scene tiles are
// touch-sized (48 px and more each way); a tap on scene two puts it on
// preview and a second tap takes it to air.
func TestMultiviewerOnAPhone(t *testing.T) {
	bin := chromium(t)
	p := compile(t, writeShow(t, multiviewerShow), nil)
	pj, _ := plan.Marshal(p)
	s := startShowWith(t, p, pj)
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := chromiumPage(t, bin)
	do(t, ctx, "opening the page on a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate("http://"+srv.Addr()+"/"),
		chromedp.WaitVisible(`#live.on`),
		chromedp.WaitVisible(`[data-monitor="program"][data-loaded="1"]`))
	box := func(sel string) rect { return value(t, ctx, sel, chromedp.Evaluate[rect](rectOf+`('`+sel+`')`)) }
	width := value(t, ctx, "the screen's width", chromedp.Evaluate[float64](`document.documentElement.clientWidth`))
	height := value(t, ctx, "the screen's height", chromedp.Evaluate[float64](`window.innerHeight`))
	pgm, pvw := box(`[data-monitor="program"]`), box(`[data-monitor="preview"]`)
	if width != 390 {
		t.Fatalf("the page is %v px wide, want the phone's 390", width)
	}
	if pvw.Top < pgm.Bottom {
		t.Errorf("the monitors are not stacked, Program above Preview: program %+v, preview %+v", pgm, pvw)
	}
	for name, r := range map[string]rect{"program": pgm, "preview": pvw} {
		if r.Width < 0.9*width || r.Right > width || r.Left < 0 || r.Height < r.Width/2 {
			t.Errorf("the %s monitor is %+v on a %v px screen; want nearly its width, 16:9", name, r, width)
		}
		if r.Top < 0 || r.Bottom > height {
			t.Errorf("the %s monitor (%+v) is not on the first screen (%v px high)", name, r, height)
		}
	}
	for _, sel := range []string{`[data-scene="bus.pgm|scene.one"]`, `[data-scene="bus.pgm|scene.two"]`, `#take`} {
		if r := box(sel); r.Width < 48 || r.Height < 48 || r.Right > width {
			t.Errorf("%s is %.0f×%.0f px at %+v; want at least 48×48 on screen for a thumb", sel, r.Width, r.Height, r)
		}
	}
	const two = `[data-scene="bus.pgm|scene.two"]`
	do(t, ctx, "a tap on scene two", chromedp.Tap(two), chromedp.WaitVisible(two+`.pvw`))
	if c := busOf(s.State.Summary(), "bus.pgm").Cuts; len(c) != 0 {
		t.Fatalf("one tap took %+v to air; it should only preview", c)
	}
	do(t, ctx, "a second tap: take", chromedp.Tap(two), chromedp.WaitVisible(two+`.pgm`))
	if c := busOf(s.State.Summary(), "bus.pgm").Cuts; len(c) != 1 || c[0].Scene != "scene.two" || c[0].Origin != show.OriginPage {
		t.Errorf("after two taps the bus logged %+v, want one switch to scene.two from the page", c)
	}
}
