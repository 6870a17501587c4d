package browser_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/showtest"
	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/browser/chromium"
	"github.com/onairhq/onair/nodes/cpu"
	"github.com/onairhq/onair/nodes/media/ipc"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// wait bounds every wait for an event: generous, for a busy machine.
const wait = 30 * time.Second

// chromiumStart is how long a Chromium may take to start and paint its
// first frame: on a loaded two-core CI machine, beside the other packages'
// browsers, a start has taken longer than wait.
const chromiumStart = 3 * time.Minute

// lockedBuffer is a bytes.Buffer written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const browserShow = `
show {
  name       = "gfx"
  size       = "320x180"
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

// startBrowserShow compiles src for the CPU backend in a new directory and
// returns the directory and a function that starts the show (which waits
// for the browser source to be ready: a producer must be sending).
func compileShow(t *testing.T, src string, edits ...func(*plan.Plan)) (dir string, start func() *show.Show[cpu.Frame]) {
	t.Helper()
	d, err := os.MkdirTemp("", "oair") // short: the socket's path must fit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	p, _ := showtest.Compile(t, showtest.WriteShow(t, d, src), nil, &cpu.Lowering)
	for _, edit := range edits {
		edit(p)
	}
	for _, n := range p.Nodes {
		if n.Kind == "ipc_dmabuf_source" && n.Params.Int("return_queue") != 3 {
			t.Fatalf("the browser source's return queue is %d, want 3 for browser_frame_queue 9", n.Params.Int("return_queue"))
		}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return d, func() *show.Show[cpu.Frame] {
		s, err := show.Start(context.Background(), cpu.Backend(), p, nil, show.Options{BaseDir: d}, log)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// colours the producer paints, one per phase, as BGRA bytes, with the
// limited-range luma and chroma each becomes.
var phases = []struct {
	name    string
	b, g, r byte
	y, u, v int
}{
	{"red", 0, 0, 255, 63, 102, 240},
	{"green", 0, 255, 0, 173, 42, 26},
	{"blue", 255, 0, 0, 32, 240, 118},
}

// paintProducer sends frames seq first..last at 30 fps, each a solid
// colour of its phase (phase = (seq-1)/per), and records, for each RELEASE
// it gets, how many frames it had sent by then.
type paintProducer struct {
	mu       sync.Mutex
	p        *ipc.Producer
	sentAt   map[uint64]uint64 // release of seq → frames sent when it came
	sent     uint64
	releases []uint64
}

func newPaintProducer(t *testing.T, socket string) *paintProducer {
	pp := &paintProducer{sentAt: map[uint64]uint64{}}
	p, err := ipc.DialWait(ipc.ProducerConfig{
		Socket: socket, Picture: ipc.NewPicture(ipc.BGRA, ipc.AlphaPremultiplied, 160, 90), Name: "test painter",
		OnRelease: func(r ipc.Release) {
			pp.mu.Lock()
			pp.sentAt[r.Sequence] = pp.sent
			pp.releases = append(pp.releases, r.Sequence)
			pp.mu.Unlock()
		},
	}, wait)
	if err != nil {
		t.Error(err)
		return nil
	}
	pp.p = p
	return pp
}

func (pp *paintProducer) paint(t *testing.T, first, last uint64, per uint64) {
	tick := time.NewTicker(time.Second / 30) // a producer paints on its own clock
	defer tick.Stop()
	for seq := first; seq <= last; seq++ {
		<-tick.C
		b, err := pp.p.Acquire(wait)
		if err != nil {
			t.Errorf("frame %d: %v", seq, err)
			return
		}
		ph := phases[int((seq-1)/per)%len(phases)]
		px := b.Pixels()
		for i := 0; i < len(px); i += 4 {
			px[i], px[i+1], px[i+2], px[i+3] = ph.b, ph.g, ph.r, 255
		}
		pp.mu.Lock()
		pp.sent = seq
		pp.mu.Unlock()
		if err := pp.p.Send(b, seq, time.Now().UnixNano()); err != nil {
			t.Errorf("frame %d: %v", seq, err)
			return
		}
	}
}

func readRecord(t *testing.T, path string) []*frame.Frame {
	t.Helper()
	return showtest.ReadY4M(t, path)
}

// memfdsOpen counts this process's descriptors and mappings of the test
// producers' buffers.
func memfdsOpen(t *testing.T) (fds, maps int) {
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(l, "onair-producer") {
			fds++
		}
	}
	m, _ := os.ReadFile("/proc/self/maps")
	maps = strings.Count(string(m), "onair-producer")
	return fds, maps
}

// TestBrowserSourceOnTheCPUBackend runs a real show with a browser source
// fed by the Go producer library: a first producer paints red then green
// and crashes; a second reconnects and paints blue. The recording shows
// the colours in that order; buffers came back one per arriving frame,
// oldest first; each buffer was imported once; the crash and the stop
// left no buffer behind; the counters are in /metrics.
func TestBrowserSourceOnTheCPUBackend(t *testing.T) {
	t.Run("import on its thread", func(t *testing.T) { testBrowserSource(t) })
	// As the CUDA backend's lowering places it: on the source's pacing loop.
	t.Run("import on the pacing loop", func(t *testing.T) { testBrowserSource(t, importOnLoop) })
}

// importOnLoop moves a plan's gpu_import nodes onto their sources' pacing
// loops (convert_on = "loop").
func importOnLoop(p *plan.Plan) {
	loops := map[string]string{}
	for _, n := range p.Nodes {
		if n.Placement.Loop != "" && n.Address != "" {
			loops[n.Address] = n.Placement.Loop
		}
	}
	for i, n := range p.Nodes {
		if n.Kind == "gpu_import" {
			p.Nodes[i].Params["convert_on"] = "loop"
			p.Nodes[i].Placement = plan.Placement{Loop: loops[n.Address]}
		}
	}
}

func testBrowserSource(t *testing.T, edits ...func(*plan.Plan)) {
	dir, start := compileShow(t, browserShow, edits...)
	socket := filepath.Join(dir, "gfx.sock")
	first := make(chan *paintProducer, 1)
	painted := make(chan struct{})
	go func() {
		defer close(painted)
		pp := newPaintProducer(t, socket)
		first <- pp
		if pp != nil {
			pp.paint(t, 1, 60, 30) // red, then green
		}
	}()
	s := start()
	stopped := false
	defer func() {
		if !stopped {
			s.Stop()
		}
	}()
	pp1 := <-first
	if pp1 == nil {
		t.FailNow()
	}
	select { // the first producer paints sixty frames, then crashes
	case <-painted:
	case <-time.After(wait):
		t.Fatal("the first producer never finished")
	}
	pp1.p.Abort()
	pp2 := newPaintProducer(t, socket)
	if pp2 == nil {
		t.FailNow()
	}
	pp2.paint(t, 61, 90, 30) // blue
	bs := s.State.Source("source.gfx").Browser()
	if q := bs.ReturnsQueued.Load(); q < 0 || q > 3 {
		t.Errorf("returns_queued %d while streaming, want 0 to 3", q)
	}
	var samples []metrics.Sample
	s.Collect(func(x metrics.Sample) { samples = append(samples, x) })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	<-pp2.p.Done()
	drain, ok := pp2.p.Drained()
	if _, err := pp2.p.Close(); !ok || err != nil {
		t.Fatalf("the second producer got no DRAIN on stop: %v", err)
	}
	var b bytes.Buffer
	sum := s.State.Summary()
	sum.WriteText(&b)
	t.Logf("summary:\n%s", b.String())

	// Frames reach Program: red, green, blue, in that order.
	frames := readRecord(t, filepath.Join(dir, "pgm.y4m"))
	var seen []string
	for i, f := range frames {
		y, u, v := int(f.Data[0][90*f.Pitch[0]+160]), int(f.Data[1][45*f.Pitch[1]+160]), int(f.Data[1][45*f.Pitch[1]+161])
		name := ""
		for _, ph := range phases {
			if abs(y-ph.y) <= 2 && abs(u-ph.u) <= 2 && abs(v-ph.v) <= 2 {
				name = ph.name
			}
		}
		if name == "" && !(y == 16 && u == 128 && v == 128 && len(seen) == 0) {
			t.Fatalf("picture %d of the recording is %d/%d/%d: none of the painted colours", i, y, u, v)
		}
		if name != "" && (len(seen) == 0 || seen[len(seen)-1] != name) {
			seen = append(seen, name)
		}
	}
	if strings.Join(seen, " ") != "red green blue" {
		t.Fatalf("the recording shows %v, want red green blue", seen)
	}

	// One buffer back per arriving frame, oldest first: each RELEASE came
	// after the next frame was sent, and in order.
	for _, pp := range []*paintProducer{pp1, pp2} {
		pp.mu.Lock()
		for i, seq := range pp.releases {
			if i > 0 && seq <= pp.releases[i-1] {
				t.Errorf("release of frame %d after frame %d: out of order", seq, pp.releases[i-1])
			}
			if at := pp.sentAt[seq]; at <= seq && seq+9 < pp.sent {
				t.Errorf("frame %d came back when only %d frames were sent: not one per arriving frame", seq, at)
			}
		}
		pp.mu.Unlock()
	}
	if int(drain.Returned) != 30 || drain.Unreturned != 0 || drain.Reason != ipc.DrainStop {
		t.Errorf("second producer's drain %+v: want all 30 frames back on stop", drain)
	}
	if got := pp2.p.Stats(); got.Released != 30 || got.Out != 0 {
		t.Errorf("second producer: %d released, %d out", got.Released, got.Out)
	}

	// Each buffer imported once, however many frames it carried.
	src := sum.Sources[0].Browser
	if src == nil {
		t.Fatal("no browser counts in the summary")
	}
	if src.Frames != 90 || src.Connections != 2 || src.Returned != src.Frames {
		t.Errorf("frames %d, connections %d, returned %d: want 90, 2, every frame", src.Frames, src.Connections, src.Returned)
	}
	if src.Imports != src.Buffers || src.Imports > 18 {
		t.Errorf("%d imports for %d buffers and %d frames: a buffer was imported again", src.Imports, src.Buffers, src.Frames)
	}
	if src.ImportsLive != 0 || src.ImportReleases != src.Imports {
		t.Errorf("after stop: %d imports live, %d of %d released", src.ImportsLive, src.ImportReleases, src.Imports)
	}
	// Nothing of the producers' buffers is left in this process.
	if fds, maps := memfdsOpen(t); fds != 0 || maps != 0 {
		t.Errorf("%d buffer descriptors and %d mappings left after stop", fds, maps)
	}
	// The counters are exported.
	want := map[string]bool{"onair_browser_imports_total": false, "onair_browser_returns_queued": false, "onair_browser_import_releases_total": false, "onair_browser_frames_total": false}
	for _, x := range samples {
		if _, ok := want[x.Name]; ok {
			want[x.Name] = true
		}
	}
	for name, ok := range want {
		if !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestChromiumProducerFeedsTheShow runs a show fed by headless Chromium
// rendering the built-in lower third, keyed over a scene of a known
// colour: the red bar reaches Program as BT.709 red, the page's
// transparent pixels show the scene unchanged, and its half-transparent
// yellow bug shows yellow blended half and half with the scene (checked
// against the BT.709 arithmetic within 3 steps: Chromium quantizes the
// half alpha to 127 or 128 and rounds its colour through 8-bit
// premultiplication); every frame the producer sent came back, and no
// buffer was imported twice.
func TestChromiumProducerFeedsTheShow(t *testing.T) {
	if _, err := chromium.Find(""); err != nil {
		t.Skipf("chromium is not installed (.ci/run installs it): %v", err)
	}
	if testing.Short() {
		t.Skip("skipped in -short: starts chromium")
	}
	dir, start := compileShow(t, fmt.Sprintf(keyShow, ""))
	bg, _ := frame.New(frame.NV12, 320, 180)
	bg.FillRect(0, 0, 320, 180, uint16(sceneYCbCr[0]), uint16(sceneYCbCr[1]), uint16(sceneYCbCr[2]))
	if err := os.WriteFile(filepath.Join(dir, "bg.nv12"), bg.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	painting := make(chan struct{})
	done := make(chan error, 1)
	var st chromium.Stats
	var plog lockedBuffer // the producer's log, shown when the test fails
	defer func() {
		if t.Failed() {
			t.Logf("producer's log:\n%s", plog.String())
		}
	}()
	go func() {
		var once sync.Once
		done <- chromium.Run(ctx, chromium.Config{Socket: filepath.Join(dir, "gfx.sock"), Width: 320, Height: 180, Frames: 60,
			Log:      slog.New(slog.NewTextHandler(&plog, nil)),
			Painting: func() { once.Do(func() { close(painting) }) }}, &st)
	}()
	select { // chromium starts before the show waits for it
	case <-painting:
	case err := <-done:
		t.Fatalf("chromium: %v", err)
	case <-time.After(chromiumStart):
		t.Fatalf("chromium painted nothing in %v", chromiumStart)
	}
	s := start()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * wait):
		err = context.DeadlineExceeded
	}
	if err != nil {
		s.Stop()
		t.Fatalf("chromium producer: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	var b bytes.Buffer
	sum.WriteText(&b)
	t.Logf("producer: %d painted, %d sent, %d dropped\nsummary:\n%s", st.Painted.Load(), st.Sent.Load(), st.Dropped.Load(), b.String())

	red := bt709(255, 0, 0)
	yellow := bt709(255, 255, 0)
	var bug [3]float64 // yellow at alpha 1/2 over the scene
	for i := range bug {
		bug[i] = (yellow[i] + sceneYCbCr[i]) / 2
	}
	frames := readRecord(t, filepath.Join(dir, "pgm.y4m"))
	lowerThird := 0
	for n, f := range frames {
		if !near(sample(f, 4, 176), red, 4) { // the red bar's left edge
			continue // the scene alone, before the page's first frame
		}
		lowerThird++
		if got := sample(f, 4, 4); got != sceneYCbCr { // the transparent page
			t.Fatalf("picture %d: the transparent page at (4,4) is %v, want the scene's %v exactly", n, got, sceneYCbCr)
		}
		if got := sample(f, 288, 18); !near(got, bug, 3) { // the middle of the bug
			t.Fatalf("picture %d: the half-transparent bug at (288,18) is %v, want %.1f (yellow %.1f half over the scene %v)", n, got, bug, yellow, sceneYCbCr)
		}
	}
	if lowerThird < 10 {
		t.Fatalf("%d of %d pictures show the red lower third", lowerThird, len(frames))
	}
	src := sum.Sources[1].Browser
	if src == nil || src.Frames != st.Sent.Load() || src.Returned != src.Frames || src.Unreturned != 0 {
		t.Fatalf("browser counts %+v: want the %d frames sent, every one returned", src, st.Sent.Load())
	}
	// A buffer is imported when a frame in it is first converted: at most
	// once each (a re-import pages the buffer again). On a busy machine
	// every frame of one buffer may be superseded before any was converted,
	// so it may never be imported at all.
	if src.Imports == 0 || src.Imports > src.Buffers || src.Buffers > 9 {
		t.Errorf("%d imports for %d buffers: want at most one import per buffer, at most 9 buffers", src.Imports, src.Buffers)
	}
	if fds, maps := memfdsOpen(t); fds != 0 || maps != 0 {
		t.Errorf("%d buffer descriptors and %d mappings left after stop", fds, maps)
	}
}

// TestPatternProducerFeedsTheShow runs `onair producer -pattern`'s producer
// (a pool like Chromium's: two idle at most) into the CPU show: the
// recording carries its frame numbers in order, the return queue kept the
// pool from destroying a buffer, and nothing is left open.
func TestPatternProducerFeedsTheShow(t *testing.T) {
	dir, start := compileShow(t, browserShow)
	var st browser.PatternStats
	done := make(chan error, 1)
	go func() {
		done <- browser.RunPattern(context.Background(), browser.PatternConfig{
			Socket: filepath.Join(dir, "gfx.sock"), Width: 320, Height: 180, Frames: 60, MaxIdle: 2, Name: "pattern",
		}, &st)
	}()
	s := start()
	if err := <-done; err != nil {
		s.Stop()
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	var last uint32
	var numbered int
	for i, f := range readRecord(t, filepath.Join(dir, "pgm.y4m")) {
		n := browser.PatternNumber(f)
		if n == 0 {
			continue // black before the first frame
		}
		if n < last || n > 60 {
			t.Fatalf("picture %d of the recording is frame %d, after frame %d", i, n, last)
		}
		last = n
		numbered++
	}
	if numbered < 30 || last < 50 {
		t.Errorf("the recording shows %d numbered pictures, the last frame %d: want most of the 60 sent", numbered, last)
	}
	if st.Sent.Load() != 60 || st.Connections.Load() != 1 || st.Destroyed.Load() != 0 || st.Created.Load() > 9 {
		t.Errorf("sent %d over %d connections; %d buffers made, %d destroyed: want 60, 1, at most 9, none",
			st.Sent.Load(), st.Connections.Load(), st.Created.Load(), st.Destroyed.Load())
	}
	if fds, maps := memfdsOpen(t); fds != 0 || maps != 0 {
		t.Errorf("%d buffer descriptors and %d mappings left after stop", fds, maps)
	}
}
