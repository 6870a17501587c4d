package browser_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/showtest"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/cpu"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/ipc"
	"github.com/onairhq/onair/nodes/show"
)

// benchShow is a 640x360 30 fps show of one browser source on Program,
// recorded (the recording's frames are read as they are written, not
// kept: latencyRecord).
const benchShow = `
show {
  name       = "fast"
  size       = "640x360"
  frame_rate = "30"
}
source "browser" "gfx" {
  socket = "gfx.sock"
}
scene "gfx" {
  layer {
    source = source.gfx
  }
}
bus "program" "pgm" {
  scene = scene.gfx
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`

// latencyRecord stands in for the recording's file: it reads the frame
// number of every Program picture written (browser.PatternNumber), and
// notes how long after its send it was written, in frame periods; it keeps
// only the header on disk. What it keeps is allocated before the run, so
// that the benchmark's own bookkeeping does not grow the RSS it measures.
type latencyRecord struct {
	*os.File
	w, h   int
	pic    *frame.Frame
	header bool
	mu     sync.Mutex
	sent   [4096]time.Time // by frame number, modulo its size
	lat    []float64
	on     bool   // measuring (after the warm-up)
	last   uint64 // the frame number of the last picture written
}

func (r *latencyRecord) sending(seq uint64) {
	r.mu.Lock()
	r.sent[seq%uint64(len(r.sent))] = time.Now()
	r.mu.Unlock()
}

func (r *latencyRecord) Write(b []byte) (int, error) {
	if !r.header {
		r.header = true
		return r.File.Write(b)
	}
	at := time.Now()
	if len(b) >= 6+r.w*r.h && string(b[:6]) == "FRAME\n" {
		for y := 0; y < r.h; y++ {
			copy(r.pic.Data[0][y*r.pic.Pitch[0]:], b[6+y*r.w:6+(y+1)*r.w])
		}
		seq := uint64(browser.PatternNumber(r.pic))
		r.mu.Lock()
		// A frame's latency is to its first picture: a tick that shows it
		// again (a repeat, counted as the bus's) is not the frame later.
		if sent := r.sent[seq%uint64(len(r.sent))]; r.on && seq > r.last && !sent.IsZero() && len(r.lat) < cap(r.lat) {
			r.lat = append(r.lat, float64(at.Sub(sent))/float64(time.Second/30))
		}
		r.last = max(r.last, seq)
		r.mu.Unlock()
	}
	return len(b), nil
}

// rss is the process's resident set, in bytes.
func rss(b *testing.B) float64 {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(s), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// producerRSS is how much of the process's resident set is the
// producer's own side of its buffers (its writable memfd mappings): the
// producer is onair's peer, in this benchmark's process only for the test's
// convenience. onair's side of the same buffers (read-only mappings) stays
// onair's.
func producerRSS(b *testing.B) float64 {
	s, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		b.Fatal(err)
	}
	var kb, sum float64
	mine := false
	for _, l := range strings.Split(string(s), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 6 && strings.Contains(f[0], "-") && len(f[1]) == 4:
			mine = strings.HasPrefix(f[1], "rw") && strings.HasPrefix(f[5], "/memfd:onair-producer")
		case mine && len(f) >= 2 && f[0] == "Rss:":
			kb, _ = strconv.ParseFloat(f[1], 64)
			sum += kb * 1024
		}
	}
	return sum
}

// BenchmarkProducerFasterThanTheShow drives a producer at 60 fps into a
// 30 fps show (issue 27: RSS 168 -> 701 MB in 30 s, 12 s late after 24)
// for b.N seconds after 10 s of warm-up (-benchtime 600x is ten minutes),
// and reports the growth of the process's RSS over the run, and the
// latency from a frame's send to its picture leaving Program (written to
// the recording), in frame periods of the show: its median, 99th
// percentile and maximum, over every frame Program showed (two frames of
// which are the bus's own playout latency, whatever the source).
func BenchmarkProducerFasterThanTheShow(b *testing.B) {
	const warmUp = 10 * time.Second
	d, err := os.MkdirTemp("", "oair")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(d)
	pl, _ := showtest.Compile(b, showtest.WriteShow(b, d, benchShow), nil, &cpu.Lowering)
	pic, _ := frame.New(frame.NV12, 640, 360)
	rec := &latencyRecord{w: 640, h: 360, pic: pic, lat: make([]float64, 0, 31*b.N)}
	open := func(name string, flag int, perm os.FileMode) (media.RecordFile, error) {
		f, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		rec.File = f
		return rec, nil
	}
	socket := filepath.Join(d, "gfx.sock")
	picture := ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, 640, 360)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	producer := make(chan error, 1)
	go func() { // 60 fps on its own clock, whatever onair does
		p, err := ipc.DialWait(ipc.ProducerConfig{Socket: socket, Picture: picture, Name: "60 fps"}, time.Minute)
		if err != nil {
			producer <- err
			return
		}
		defer p.Close()
		// The producer's ring whole before the warm-up ends: it makes a
		// buffer only when every one it has is out, so a moment of load
		// (returns held up) grows it a buffer at a time up to its limit
		// (9 here), each mapped by onair too (1.8 MB of this process's RSS
		// per 640x360 BGRA buffer). Made at the start, every buffer is in
		// the rotation (the producer paints into the one returned first),
		// and the memory measured is what the show holds, not when the
		// producer happened to reach its limit.
		var ring []*ipc.ProducerBuffer
		for {
			buf, err := p.Acquire(0)
			if err != nil {
				break
			}
			ring = append(ring, buf)
		}
		for _, buf := range ring {
			p.Discard(buf)
		}
		tick := time.NewTicker(time.Second / 60)
		defer tick.Stop()
		for seq := uint64(1); ; seq++ {
			select {
			case <-ctx.Done():
				producer <- nil
				return
			case <-tick.C:
			}
			buf, err := p.Acquire(time.Second)
			if err != nil {
				producer <- err
				return
			}
			browser.PaintPattern(buf.Pixels(), picture.Pitch, 640, 360, frame.Rect{W: 640, H: 360}, seq)
			rec.sending(seq)
			if err := p.Send(buf, seq, time.Now().UnixNano()); err != nil {
				producer <- err
				return
			}
		}
	}()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := show.Start(context.Background(), cpu.Backend(), pl, nil, show.Options{BaseDir: d, OpenFile: open}, log)
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(warmUp) // a benchmark's run: the measurement is over real time
	// The warm-up also lets the garbage collector find its pace: until
	// its first cycles the heap grows to the goal GOGC sets (twice what
	// is live), which is the process's RSS rising in the first seconds
	// and then flat, not the show's memory growing. RSS counts from two
	// cycles after the warm-up (a minute at most).
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	for gc0, until := ms.NumGC, time.Now().Add(time.Minute); ms.NumGC < gc0+2 && time.Now().Before(until); {
		time.Sleep(100 * time.Millisecond)
		goruntime.ReadMemStats(&ms)
	}
	gcs0 := ms.NumGC
	rec.mu.Lock()
	rec.on = true
	rec.mu.Unlock()
	rss0, peak := rss(b), 0.0
	prod0 := producerRSS(b)
	var half float64
	b.ResetTimer()
	tick := time.NewTicker(time.Second)
	var series []string
	for i := 0; i < b.N; i++ {
		<-tick.C
		r := rss(b)
		peak = max(peak, r)
		if i == b.N/2 {
			half = r
		}
		if os.Getenv("RSS_SERIES") != "" {
			var ms goruntime.MemStats
			goruntime.ReadMemStats(&ms)
			series = append(series, fmt.Sprintf("%d:%.1f/%.1f/%.1f", i, r/(1<<20), float64(ms.HeapInuse)/(1<<20), float64(ms.HeapSys-ms.HeapReleased)/(1<<20)))
		}
	}
	if len(series) > 0 {
		b.Logf("rss/heap_inuse/heap_held MB: %s", strings.Join(series, " "))
	}
	tick.Stop()
	b.StopTimer()
	rss1 := rss(b)
	prod1 := producerRSS(b)
	goruntime.ReadMemStats(&ms)
	gcs := ms.NumGC - gcs0
	cancel()
	sum := s.State.Summary()
	if err := s.Stop(); err != nil {
		b.Fatal(err)
	}
	if err := <-producer; err != nil {
		b.Fatal(err)
	}
	rec.mu.Lock()
	lat := rec.lat
	rec.mu.Unlock()
	if len(lat) == 0 {
		b.Fatal("Program showed none of the producer's frames")
	}
	slices.Sort(lat)
	pct := func(q float64) float64 { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	b.ReportMetric(100*(rss1-rss0)/rss0, "rss_growth_%")
	b.ReportMetric(100*(rss1-half)/half, "rss_growth_2nd_half_%")
	b.ReportMetric(100*((rss1-prod1)-(rss0-prod0))/(rss0-prod0), "rss_growth_onair_%")
	b.ReportMetric(prod1/(1<<20), "rss_producer_end_MB")
	b.ReportMetric(peak/(1<<20), "rss_peak_MB")
	b.ReportMetric(rss0/(1<<20), "rss_start_MB")
	b.ReportMetric(rss1/(1<<20), "rss_end_MB")
	b.ReportMetric(pct(0.5), "latency_p50_frames")
	b.ReportMetric(pct(0.99), "latency_p99_frames")
	b.ReportMetric(lat[len(lat)-1], "latency_max_frames")
	// What the retiming adds: the bus draws tick k two periods after its
	// time (playout.Schedule's latency), so two frames of the above are
	// the bus's own, whatever the source.
	b.ReportMetric(pct(0.99)-2, "beyond_playout_p99_frames")
	src, bus := sum.Sources[0], sum.Buses[0]
	b.ReportMetric(float64(src.Browser.Early)/(float64(b.N)+warmUp.Seconds()), "early/s")
	b.ReportMetric(float64(bus.Missed), "missed")
	b.ReportMetric(float64(gcs), "gc_cycles")
	var w bytes.Buffer
	sum.WriteText(&w)
	b.Logf("%d Program pictures measured; %d frames early, %d underruns\n%s", len(lat), src.Browser.Early, src.Underruns, w.String())
}
