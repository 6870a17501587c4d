package cpu

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// mixerPageShow: two test patterns (each its −18 dBFS line-up tone) on a
// Program bus with source one on air, and an AUX bus showing source two.
const mixerPageShow = `
show {
  name       = "mixer"
  size       = "320x180"
  frame_rate = "30"
}
source "test_pattern" "one" {
  pattern = "bars"
}
source "test_pattern" "two" {
  pattern = "checker"
}
scene "one" {
  layer {
    source = source.one
  }
}
bus "program" "pgm" {
  scene = scene.one
}
bus "aux" "mon" {
  source = source.two
}
output "null" "pgm" {
  bus = bus.pgm
}
output "null" "mon" {
  bus = bus.mon
}
`

// TestMixerPageFadersAndMutes works the page's mixer as an operator does:
// every bus has a section with its master and a strip (fader, mute,
// meter) for each of its sources; moving Program's fader of source one to
// −20 dB sets that strip's level (read back from /status) and the bus's
// meter on the page drops by about 20 LU while the source's own meter and
// the AUX bus's strips stay where they were; MUTE then mutes it (the
// button lights from /status) and the bus's meter reads silence.
func TestMixerPageFadersAndMutes(t *testing.T) {
	bin := chromium(t)
	p := compile(t, writeShow(t, mixerPageShow), nil)
	pj, _ := plan.Marshal(p)
	s := startShowWith(t, p, pj)
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr()
	status := func() show.StatusReport {
		t.Helper()
		code, body := get(t, base+"/status")
		var st show.StatusReport
		if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
			t.Fatalf("/status %d: %v", code, err)
		}
		return st
	}
	strip := func(bus, src string) show.StripStatus {
		t.Helper()
		a := busOf(status().Summary, bus).Audio
		if a == nil {
			t.Fatalf("/status has no sound for %s", bus)
		}
		return a.Strips[src]
	}
	ctx := chromiumPage(t, bin)
	// level is a meter's reading on the page, in LUFS; silence reads -200.
	level := func(key string) float64 {
		return value(t, ctx, "the meter of "+key, chromedp.Evaluate[float64](`(() => {
			const v = document.querySelector('[data-mix-level="`+key+`"]').dataset.lufs;
			return v === "" || v === undefined ? -200 : +v;
		})()`))
	}

	do(t, ctx, "opening the page",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`#live.on`),
		chromedp.WaitVisible(`[data-fader="bus.pgm|source.one"]`))
	faders := value(t, ctx, "the mixer's faders", chromedp.Evaluate[[]string](`[...document.querySelectorAll('#mixer [data-fader]')].map((f) => f.dataset.fader + "=" + f.min + ".." + f.max + "@" + f.value)`))
	want := "bus.mon|=-120..12@0 bus.mon|source.two=-120..12@0 bus.pgm|=-120..12@0 bus.pgm|source.one=-120..12@0"
	if got := strings.Join(faders, " "); got != want {
		t.Fatalf("the mixer's faders (bus|source=range@dB):\n got %s\nwant %s", got, want)
	}
	// The line-up tone reads about −18 LUFS (the blip lifts a momentary
	// window by up to 3.3 LU).
	testwait.Until(t, generous, "bus.pgm's meter on the page to read the tone", func() bool {
		l := level("bus.pgm|")
		return l > -19 && l < -14
	})

	value(t, ctx, "moving the fader of source one on bus.pgm to -20 dB",
		chromedp.Evaluate[bool](`(() => {
			const f = document.querySelector('[data-fader="bus.pgm|source.one"]');
			f.focus();
			f.value = -20;
			f.dispatchEvent(new Event("input", {bubbles: true}));
			f.dispatchEvent(new Event("change", {bubbles: true}));
			return true;
		})()`))
	testwait.Until(t, generous, "/status to read source one at -20 dB on bus.pgm", func() bool { return strip("bus.pgm", "source.one").GainDB == -20 })
	if got := strip("bus.pgm", "source.one"); got.Mute || got.Mode != "follow" {
		t.Errorf("the fader changed more than the level: %+v", got)
	}
	if got := strip("bus.mon", "source.two"); got.GainDB != 0 || got.Mute {
		t.Errorf("bus.mon's strip of source two moved with bus.pgm's fader: %+v", got)
	}
	testwait.Until(t, generous, "bus.pgm's meter on the page to drop by about 20 LU", func() bool {
		l := level("bus.pgm|")
		return l > -39 && l < -34
	})
	if l := level("bus.pgm|source.one"); l < -19 {
		t.Errorf("source one's own meter on bus.pgm's strip reads %.1f LUFS after its fader moved: a source's meter is before the fader", l)
	}
	if db := value(t, ctx, "the fader's reading", chromedp.Evaluate[string](`document.querySelector('[data-fader-db="bus.pgm|source.one"]').textContent`)); db != "-20.0 dB" {
		t.Errorf("the fader reads %q, want -20.0 dB", db)
	}

	do(t, ctx, "MUTE on source one's strip of bus.pgm",
		chromedp.Click(`[data-strip-mute="bus.pgm|source.one"]`),
		chromedp.WaitVisible(`[data-strip-mute="bus.pgm|source.one"].on`))
	if got := strip("bus.pgm", "source.one"); !got.Mute || got.GainDB != -20 {
		t.Errorf("after MUTE /status reads %+v, want muted at -20 dB", got)
	}
	testwait.Until(t, generous, "bus.pgm's meter on the page to read silence", func() bool { return level("bus.pgm|") == -200 })
	if on := value(t, ctx, "bus.mon's mute", chromedp.Evaluate[bool](`document.querySelector('[data-strip-mute="bus.mon|source.two"]').classList.contains("on")`)); on {
		t.Error("bus.mon's MUTE lit with bus.pgm's")
	}
	if l := level("bus.mon|"); l < -19 {
		t.Errorf("bus.mon's meter reads %.1f LUFS with its source unmuted", l)
	}
}
