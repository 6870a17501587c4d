package cpu

import (
	"fmt"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/plan"
)

// lagShow is a 1080p25 show whose Program bus draws a full-frame pattern
// with a picture-in-picture: the Program monitor's JPEG is scaled from a
// 1080p canvas, as on a real show.
const lagShow = `
show {
  name       = "monitor-lag"
  size       = "1920x1080"
  frame_rate = "25"
}
source "test_pattern" "cam" {
  pattern = "ramp"
}
source "test_pattern" "gfx" {
  pattern = "checker"
}
scene "pip" {
  layer {
    source = source.cam
  }
  layer {
    source = source.gfx
    rect   = [1280, 60, 480, 270]
    z      = 1
  }
}
bus "program" "pgm" {
  scene = scene.pip
}
output "null" "pgm" {
  bus = bus.pgm
}
`

// lagSampler runs in the page: every 5 ms it notes how far behind air the
// Program monitor's picture is (the page's clock since the answer came,
// plus the server's Onair-Age-Ms: how long before it answered the
// compositor drew the picture), and, for each new picture, how far behind
// air it was when it was first painted.
const lagSampler = `((n) => {
  window.lagSamples = []; window.lagShown = []; window.lagSpan = 0;
  let last = 0;
  const t0 = performance.now();
  const tick = () => {
    const p = pics["bus.pgm"];
    if (p && p.bmp) {
      const lag = performance.now() - p.drawnAt;
      if (p.drawnAt !== last) { window.lagShown.push(lag); last = p.drawnAt; }
      window.lagSamples.push(lag);
    }
    if (window.lagSamples.length < n) setTimeout(tick, 5);
    else window.lagSpan = performance.now() - t0;
  };
  tick();
  return true;
})`

// BenchmarkMonitorLag opens the operator's page in headless chromium on a
// running 1080p25 show and measures how far the Program monitor is behind
// air: lag-ms is the mean over samples every 5 ms (what an operator sees
// at a random moment), p95-lag-ms and max-lag-ms its tail, shown-ms the
// mean lag of a new picture when it is first painted (the server's age at
// the answer, the transfer and the decode), refresh-ms the mean time
// between new pictures. The target is lag under 100 ms.
func BenchmarkMonitorLag(b *testing.B) {
	bin := chromium(b)
	p := compile(b, writeShow(b, lagShow), nil)
	pj, _ := plan.Marshal(p)
	s := startShowWith(b, p, pj)
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0", Version: "test"})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ctx := chromiumPage(b, bin)
	do(b, ctx, "opening the page",
		chromedp.Navigate("http://"+srv.Addr()+"/"),
		chromedp.WaitVisible(`[data-monitor="program"][data-loaded="1"]`))
	const samples = 600 // about 3 s at 5 ms
	var all, shown []float64
	var span float64 // ms sampled
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		value(b, ctx, "starting the sampler", chromedp.Evaluate[bool](fmt.Sprintf("%s(%d)", lagSampler, samples)))
		value(b, ctx, "sampling", chromedp.Poll[bool]("window.lagSpan > 0"))
		span += value(b, ctx, "the time sampled", chromedp.Evaluate[float64](`window.lagSpan`))
		all = append(all, value(b, ctx, "the samples", chromedp.Evaluate[[]float64](`window.lagSamples`))...)
		shown = append(shown, value(b, ctx, "the new pictures' lag", chromedp.Evaluate[[]float64](`window.lagShown`))...)
	}
	b.StopTimer()
	if len(shown) < 2 {
		b.Fatalf("the Program monitor showed %d new pictures in %d samples", len(shown), len(all))
	}
	slices.Sort(all)
	b.ReportMetric(mean(all), "lag-ms")
	b.ReportMetric(all[len(all)*95/100], "p95-lag-ms")
	b.ReportMetric(all[len(all)-1], "max-lag-ms")
	b.ReportMetric(mean(shown), "shown-ms")
	b.ReportMetric(span/float64(len(shown)), "refresh-ms")
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
