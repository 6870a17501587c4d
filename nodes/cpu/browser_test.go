package cpu

import (
	"bytes"
	"context"
	"fmt"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/golden"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

// The show the browser test plays: two full-frame scenes on Program (so
// that the recording's stamps say which source each tick showed), a third
// source on an AUX bus.
const browserShow = `
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
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
output "null" "mon" {
  bus = bus.mon
}
`

// chromium is Debian's headless browser, or the test is skipped saying so.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it): the page's browser test needs it")
	return ""
}

// chromiumPage starts a headless chromium for the test, at a desktop's size.
func chromiumPage(t testing.TB, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	// An exception thrown in the page fails the test that drives it, with
	// where it was thrown (a test would otherwise time out waiting for
	// what the broken script never drew).
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*cdpruntime.EventExceptionThrown); ok && e.ExceptionDetails != nil {
			d := e.ExceptionDetails
			what := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				what = d.Exception.Description
			}
			t.Errorf("the page threw at %s:%d:%d: %s", d.URL, d.LineNumber+1, d.ColumnNumber+1, what)
		}
	}))
	t.Cleanup(func() { cancelC(); cancelA() })
	// The browser starts with the first action on ctx itself (one run on a
	// context derived with a timeout would close it when that ends).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// do runs browser actions within the generous bound.
func do(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs one browser action that returns a value.
func value[T any](t testing.TB, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// borderColour reads the colour of a tile's border from a screenshot: a
// pixel in the middle of its left border.
func borderColour(t *testing.T, ctx context.Context, shot []byte, tile string) color.RGBA {
	t.Helper()
	type box struct{ X, Y, H float64 }
	r := value(t, ctx, "the position of "+tile, chromedp.Evaluate[box](fmt.Sprintf(
		`(() => { const b = document.querySelector('[data-tile="%s"]').getBoundingClientRect(); return {X: b.left, Y: b.top, H: b.height}; })()`, tile)))
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	c := color.RGBAModel.Convert(img.At(int(r.X)+2, int(r.Y+r.H/2))).(color.RGBA)
	return c
}

func isRed(c color.RGBA) bool   { return c.R > 180 && c.G < 60 && c.B < 60 }
func isGreen(c color.RGBA) bool { return c.G > 150 && c.R < 60 && c.B < 60 }

// TestThePageInABrowser opens the page of a show running on the CPU
// backend in headless chromium, as an operator would: it turns on the
// source tiles, puts scene two on preview and clicks TAKE. The recording's
// stamps must show the cut on the first tick after the click, and the
// screenshots must show the tally borders move: source one red (Program)
// and source two green (preview) before, the other way round after. The
// page must also fit a phone's screen, and with a token it must ask for
// it before showing anything.
func TestThePageInABrowser(t *testing.T) {
	bin := chromium(t)
	showPath := writeShow(t, browserShow)
	p := compile(t, showPath, nil)
	pj, _ := plan.Marshal(p)
	s := startShowWith(t, p, pj)
	stopped := false
	defer func() {
		if !stopped {
			s.Stop()
		}
	}()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr()
	ctx := chromiumPage(t, bin)

	do(t, ctx, "opening the page",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`#app`),
		chromedp.WaitVisible(`[data-tile="bus.pgm"][data-loaded="1"]`),
		chromedp.WaitVisible(`#live.on`), // the event stream is up
		chromedp.Click(`#show-sources`),
		chromedp.WaitVisible(`[data-tile="source.one"][data-loaded="1"]`),
		chromedp.WaitVisible(`[data-tile="source.two"][data-loaded="1"]`),
		chromedp.WaitVisible(`[data-tile="source.three"][data-loaded="1"]`),
		// Each tile's meter: the test patterns' tone, once a momentary window is full.
		chromedp.WaitVisible(`[data-tile="bus.pgm"] .meter .bar[style*="%"]`),
		chromedp.WaitVisible(`[data-tile="source.one"] .meter .bar[style*="%"]`),
		// Its mute on the Program bus: a click mutes it there, and the button says so.
		chromedp.Click(`[data-mute="source.one"]`),
		chromedp.WaitVisible(`[data-mute="source.one"].on`),
		chromedp.Click(`[data-scene="bus.pgm|scene.two"]`),
		chromedp.WaitVisible(`[data-tile="source.two"].pvw`),
		chromedp.WaitVisible(`[data-scene="bus.pgm|scene.two"].pvw`),
	)
	// The header's Program timecode runs with the bus's: within a second
	// of the tick the bus last drew.
	pgmTC := value(t, ctx, "the Program timecode", chromedp.Evaluate[string](`document.querySelector('#pgm-tc').textContent`))
	r := s.State.TimecodeRate()
	tc, err := r.Parse(pgmTC)
	last, lerr := r.Parse(s.Status().(show.StatusReport).Timecode.Buses["bus.pgm"])
	if d := r.Diff(r.Frame(tc), r.Frame(last)); err != nil || lerr != nil || d < -r.Nominal || d > r.Nominal {
		t.Errorf("the page shows the Program timecode %q (%v); the bus drew %s last", pgmTC, err, last)
	}
	// The source tiles sit below the monitors: bring them on screen.
	scrollTo := chromedp.Evaluate[bool](`(document.querySelector('[data-tile="source.one"]').scrollIntoView({block: "center"}), true)`)
	value(t, ctx, "scrolling to the source tiles", scrollTo)
	before := value(t, ctx, "a screenshot before the take", chromedp.CaptureScreenshot())
	if c := borderColour(t, ctx, before, "source.one"); !isRed(c) {
		t.Errorf("before the take, source.one (on Program) has a %v border, want red", c)
	}
	if c := borderColour(t, ctx, before, "source.two"); !isGreen(c) {
		t.Errorf("before the take, source.two (on preview) has a %v border, want green", c)
	}

	// The ticks bus.pgm has committed before the click, and once the take
	// has arrived: the cut must land between them (see below).
	ticksBefore := busOf(s.State.Summary(), "bus.pgm").Ticks
	clickFrom := runtime.Now() - s.State.Origin()
	do(t, ctx, "clicking TAKE", chromedp.Click(`[data-take="bus.pgm"]`))
	clickTo := runtime.Now() - s.State.Origin()
	testwait.Until(t, generous, "the take to arrive", func() bool { return len(busOf(s.State.Summary(), "bus.pgm").Cuts) > 0 })
	ticksAfter := busOf(s.State.Summary(), "bus.pgm").Ticks
	if o := busOf(s.State.Summary(), "bus.pgm").Cuts[0].Origin; o != show.OriginPage {
		t.Errorf("the page's take is recorded as from %q, want %q (the as-run log's origin)", o, show.OriginPage)
	}
	do(t, ctx, "the tally after the take",
		chromedp.WaitVisible(`[data-tile="source.two"].pgm`),
		chromedp.WaitVisible(`[data-tile="source.one"].pvw`),
		chromedp.WaitVisible(`[data-scene="bus.pgm|scene.two"].pgm`))
	// Two more snapshots of the Program tile, so that it shows the take.
	loads := func() int {
		return value(t, ctx, "the Program tile's snapshots", chromedp.Evaluate[int](`+document.querySelector('[data-tile="bus.pgm"]').dataset.loads`))
	}
	n := loads()
	testwait.Until(t, generous, "the Program tile to take two new snapshots after the take", func() bool { return loads() >= n+2 })
	value(t, ctx, "scrolling to the source tiles", scrollTo)
	after := value(t, ctx, "a screenshot after the take", chromedp.CaptureScreenshot())
	if c := borderColour(t, ctx, after, "source.two"); !isRed(c) {
		t.Errorf("after the take, source.two (on Program) has a %v border, want red", c)
	}
	if c := borderColour(t, ctx, after, "source.one"); !isGreen(c) {
		t.Errorf("after the take, source.one (on preview) has a %v border, want green", c)
	}
	if golden.Updating() { // the README's picture: the page from its top
		value(t, ctx, "scrolling to the top", chromedp.Evaluate[bool](`(window.scrollTo(0, 0), true)`))
		top := value(t, ctx, "a screenshot of the page", chromedp.CaptureScreenshot())
		if err := os.WriteFile("../../docs/multiviewer.png", top, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// onair apply adds a scene to bus.pgm: the page offers it at once.
	both := plan.Scene{Address: "scene.both", Layers: []plan.Layer{
		{Source: "source.one", Rect: [4]int{0, 0, 160, 180}, Fit: "stretch", Opacity: 1},
		{Source: "source.two", Rect: [4]int{160, 0, 160, 180}, Fit: "stretch", Opacity: 1},
	}}
	if err := s.ApplyLive(show.LiveChange{Scenes: []plan.Scene{both}, Updates: addScenes(s, map[string][]string{"bus.pgm": {"scene.both"}})}, pj); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "the page offering the added scene", chromedp.WaitVisible(`[data-scene="bus.pgm|scene.both"]`))

	// A phone: the page fits its width, with the tiles in two columns.
	type fitting struct{ Scroll, Width, Cols float64 }
	do(t, ctx, "the page on a phone", chromedp.EmulateViewport(390, 844), chromedp.WaitVisible(`[data-take="bus.pgm"]`))
	fit := value(t, ctx, "the page's width on a phone", chromedp.Evaluate[fitting](`({Scroll: document.documentElement.scrollWidth, Width: window.innerWidth,
			Cols: getComputedStyle(document.querySelector('#wall')).gridTemplateColumns.split(' ').length})`))
	if fit.Scroll > fit.Width || fit.Cols != 2 {
		t.Errorf("on a 390 px wide phone the page is %v px wide with %v columns of tiles, want no wider than the screen and 2", fit.Scroll, fit.Cols)
	}

	// The recording: where the cut landed, from the stamps alone.
	stopped = true
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	var bus = sum.Buses[1]
	if bus.Address != "bus.pgm" || len(bus.Cuts) != 1 {
		t.Fatalf("bus %s logged cuts %+v, want the one take", bus.Address, bus.Cuts)
	}
	asked := bus.Cuts[0].AskedNs
	// The click returns once the browser dispatched it; the page's request
	// follows at once.
	if asked < clickFrom || asked > clickTo+int64(5*time.Second) {
		t.Errorf("the take arrived at %v, not right after the click (%v to %v)", time.Duration(asked), time.Duration(clickFrom), time.Duration(clickTo))
	}
	frames := readY4M(t, filepath.Join(filepath.Dir(showPath), "pgm.y4m"))
	one, two := s.State.StampID("source.one"), s.State.StampID("source.two")
	cut, anchorTick := -1, int64(0)
	for i, f := range frames {
		id, n, ok := media.ReadStamp(f, frame.Rect{W: f.Width, H: f.Height})
		if !ok {
			continue // black before the sources' first frames
		}
		if id == two && cut < 0 {
			cut = i
			// Source two's frame n is released on tick anchor+n; its anchor
			// is the tick of the picture before minus that frame number
			// (every source starts on the show's grid at the same tick).
			anchorTick = int64(n)
		}
		if cut < 0 && id != one || cut >= 0 && id != two {
			t.Fatalf("picture %d shows source %d; want source %d before the cut and %d after, one clean switch", i, id, one, two)
		}
	}
	if cut < 0 {
		t.Fatal("the take never reached the recording")
	}
	// The tick the first picture of source two belongs to: with no missed
	// deadline, picture i is tick FirstTick+i.
	cutTick := bus.FirstTick + int64(cut)
	drawn := s.State.Grid().At(cutTick+2) - s.State.Origin() // its deadline: two periods of latency
	t.Logf("take asked at %v (click %v to %v); the recording switches at picture %d (tick %d, source two's frame %d), drawn at %v; the bus logged tick %d",
		time.Duration(asked), time.Duration(clickFrom), time.Duration(clickTo), cut, cutTick, anchorTick, time.Duration(drawn), bus.Cuts[0].Tick)
	// The first tick drawn after the take, by counting ticks rather than
	// reading the clock (a tick drawn late may have had its deadline before
	// the take arrived): the ticks committed before the click showed
	// scene.one, and at most one tick (the one being drawn when the take
	// arrived) may still show it once the take was seen. Ticks an output
	// dropped are not in the recording.
	if lo, hi := int64(ticksBefore)-int64(bus.OutputDrops), int64(ticksAfter)+1; int64(cut) < lo || int64(cut) > hi {
		t.Errorf("the cut is picture %d of the recording; bus.pgm had committed %d ticks before the click and %d once the take arrived (%d output drops): not the first tick drawn after the take",
			cut, ticksBefore, ticksAfter, bus.OutputDrops)
	}
	// With no missed deadline and no dropped tick, picture i is tick
	// FirstTick+i, and the bus's log must say so.
	if bus.Missed == 0 && bus.OutputDrops == 0 && cutTick != bus.Cuts[0].Tick {
		t.Errorf("the pictures put the cut on tick %d, the bus logged tick %d", cutTick, bus.Cuts[0].Tick)
	}

	// With a token, the page asks for it, and then shows the show.
	const token = "0123456789abcdef0123"
	tsrv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer tsrv.Close()
	do(t, ctx, "a wrong token",
		chromedp.Navigate("http://"+tsrv.Addr()+"/"),
		chromedp.WaitVisible(`#login`),
		chromedp.SendKeys(`#token`, "wrong"),
		chromedp.Click(`#login button`))
	var msg string
	testwait.Until(t, generous, "the page to answer the wrong token", func() bool {
		msg = value(t, ctx, "the login's answer", chromedp.Evaluate[string](`document.querySelector('#login-error').textContent`))
		return msg != ""
	})
	if !strings.Contains(msg, "wrong token") {
		t.Errorf("a wrong token: the page says %q", msg)
	}
	do(t, ctx, "logging in",
		chromedp.Navigate("http://"+tsrv.Addr()+"/"),
		chromedp.WaitVisible(`#login`),
		chromedp.SendKeys(`#token`, token),
		chromedp.Click(`#login button`),
		chromedp.WaitVisible(`#app`),
		chromedp.WaitVisible(`[data-tile="bus.pgm"]`))
}
