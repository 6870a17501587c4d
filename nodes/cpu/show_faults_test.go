package cpu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/mediatest"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// The tests here run real shows into the faults a hostile tester found:
// a disk that fills while recording, two shows on one recording, a flood
// of switches, a media file replaced under a running show. They wait for
// what they need to see, with generous bounds, and never sleep.

// logBuffer collects a show's log, safe for the show's threads.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runShow starts p on the CPU backend with opts (BaseDir set to the show's
// directory), logging at info level into log when it is not nil.
func runShow(t testing.TB, p *plan.Plan, opts show.Options, log *logBuffer) (*show.Show[Frame], error) {
	t.Helper()
	dir, _ := showDirs.Load(p)
	opts.BaseDir, _ = dir.(string)
	var h slog.Handler = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})
	if log != nil {
		h = slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo})
	}
	return show.Start(context.Background(), Backend(), p, nil, opts, slog.New(h))
}

func output(s *show.Show[Frame], address string) show.OutputSummary {
	for _, o := range s.State.Summary().Outputs {
		if o.Address == address {
			return o
		}
	}
	return show.OutputSummary{}
}

const recordBars = `
show {
  name       = "rec"
  size       = "320x180"
  frame_rate = "30"
}
source "test_pattern" "bars" {
  pattern = "ramp"
}
scene "bars" {
  layer {
    source = source.bars
  }
}
bus "program" "pgm" {
  scene = scene.bars
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "%s"
}
`

// fullDisk is a small disk a test can fill and free: a tmpfs where this
// machine lets the test mount one, else mediatest.SmallDisk behind the show's
// OpenFile.
type fullDisk struct {
	fill, free func()
	opts       show.Options
	kind       string
}

func smallDisk(t *testing.T, dir string) *fullDisk {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m"); err == nil {
		t.Cleanup(func() {
			if err := syscall.Unmount(dir, 0); err != nil {
				t.Errorf("unmount %s: %v", dir, err)
			}
		})
		filler := filepath.Join(dir, "filler")
		return &fullDisk{kind: "tmpfs", fill: func() {
			f, err := os.Create(filler)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			for _, chunk := range []int{1 << 16, 4 << 10} {
				buf := make([]byte, chunk)
				for {
					if _, err := f.Write(buf); err != nil {
						break
					}
				}
			}
		}, free: func() { os.Remove(filler) }}
	}
	d := mediatest.NewSmallDisk(8 << 20)
	return &fullDisk{kind: "mediatest.SmallDisk (no tmpfs here)", opts: show.Options{OpenFile: d.Open},
		fill: func() { d.SetFree(0) }, free: func() { d.SetFree(1 << 40) }}
}

// TestRecordingSurvivesAFullDisk records onto a small disk, fills it while
// the show runs and frees it again: the frames written before are kept
// byte for byte, every frame not written is a drop, the output restarts
// with backoff and continues the file, and the file holds exactly the
// frames the summary counts.
func TestRecordingSurvivesAFullDisk(t *testing.T) {
	showPath := writeShow(t, fmt.Sprintf(recordBars, "disk/pgm.y4m"))
	dir := filepath.Dir(showPath)
	disk := smallDisk(t, filepath.Join(dir, "disk"))
	t.Logf("disk: %s", disk.kind)
	rec := filepath.Join(dir, "disk", "pgm.y4m")
	s, err := runShow(t, compile(t, showPath, nil), disk.opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()

	testwait.Until(t, 20*time.Second, "15 frames recorded", func() bool { return output(s, "output.pgm").Written >= 15 })
	kept := output(s, "output.pgm").Written
	before, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	disk.fill()
	testwait.Until(t, 30*time.Second, "drops and two restarts on the full disk", func() bool {
		o := output(s, "output.pgm")
		return o.Drops >= 10 && o.Restarts >= 2
	})
	full := output(s, "output.pgm")
	disk.free()
	testwait.Until(t, 30*time.Second, "15 more frames once the disk had room", func() bool { return output(s, "output.pgm").Written >= full.Written+15 })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	var b bytes.Buffer
	sum.WriteText(&b)
	t.Logf("summary:\n%s", b.String())
	out, bus := sum.Outputs[0], sum.Buses[0]

	frames := readY4M(t, rec)
	if uint64(len(frames)) != out.Written {
		t.Fatalf("the file holds %d frames; the summary says %d", len(frames), out.Written)
	}
	if out.Written+out.Drops+bus.OutputDrops != bus.Ticks {
		t.Errorf("the bus drew %d ticks; the output wrote %d and dropped %d, the bus dropped %d for it", bus.Ticks, out.Written, out.Drops, bus.OutputDrops)
	}
	if !strings.Contains(out.LastError, "disk is full") && !strings.Contains(out.LastError, "no space") {
		t.Errorf("last error %q does not say the disk is full", out.LastError)
	}
	if out.Restarts < 2 || out.Restarts > 12 {
		t.Errorf("%d restarts: want a few, backing off", out.Restarts)
	}
	after, _ := os.ReadFile(rec)
	hdr := bytes.IndexByte(after, '\n') + 1
	prefix := hdr + int(kept)*(6+frame.NV12.Size(320, 180))
	if len(before) < prefix || len(after) < prefix || !bytes.Equal(before[:prefix], after[:prefix]) {
		t.Fatalf("the %d frames recorded before the disk filled were not kept as they were", kept)
	}
}

// TestSecondShowOnOneRecordingIsRefused starts a show, then the same show
// again: the second is refused before it touches the recording, naming the
// holder's pid, and the first records on undisturbed.
func TestSecondShowOnOneRecordingIsRefused(t *testing.T) {
	showPath := writeShow(t, fmt.Sprintf(recordBars, "out/pgm.y4m"))
	p := compile(t, showPath, nil)
	first, err := runShow(t, p, show.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop()
	testwait.Until(t, 20*time.Second, "10 frames recorded", func() bool { return output(first, "output.pgm").Written >= 10 })

	second, err := runShow(t, p, show.Options{}, nil)
	if err == nil {
		second.Stop()
		t.Fatal("a second show writing the same recording went on air")
	}
	want := fmt.Sprintf("output.pgm: out/pgm.y4m is being written by another show in this onair (pid %d); stop it or choose another path", os.Getpid())
	if err.Error() != want {
		t.Errorf("refused with\n  %v\nwant\n  %s", err, want)
	}
	at := output(first, "output.pgm").Written
	testwait.Until(t, 20*time.Second, "the first show to record on", func() bool { return output(first, "output.pgm").Written >= at+10 })
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	out := output(first, "output.pgm")
	rec := filepath.Join(filepath.Dir(showPath), "out", "pgm.y4m")
	if frames := readY4M(t, rec); uint64(len(frames)) != out.Written || out.Drops != 0 {
		t.Fatalf("the first show's file holds %d frames; it wrote %d and dropped %d", len(frames), out.Written, out.Drops)
	}
	// Once the first has stopped, the path is free.
	again, err := runShow(t, p, show.Options{}, nil)
	if err != nil {
		t.Fatalf("after the first show stopped: %v", err)
	}
	again.Stop()
}

// TestHundredThousandSwitchesStayBounded asks for 100,000 switches on a
// running show: /status and the summary keep the latest 32 and counts,
// memory stays flat, and every switch in the ring lands on a tick.
func TestHundredThousandSwitchesStayBounded(t *testing.T) {
	p := compile(t, writeShow(t, strings.Replace(twoSources, `output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}`, `output "null" "pgm" {
  bus = bus.pgm
}`, 1)), nil)
	s, err := runShow(t, p, show.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	testwait.Until(t, 20*time.Second, "the bus on air", func() bool { return s.State.Summary().Buses[0].Ticks >= 3 })

	kinds := []string{"cut", "fade", "wipe"}
	scenes := []string{"one", "two"}
	ask := func(from, to int) {
		for i := from; i < to; i++ {
			if err := s.Switch("pgm", scenes[i%2], kinds[i%3], 100*time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
	}
	heap := func() uint64 {
		var m goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	ask(0, 1000)
	h0 := heap()
	ask(1000, 100_000)
	h1 := heap()
	if h1 > h0+4<<20 {
		t.Errorf("the heap grew from %.1f to %.1f MB over 99,000 switches", float64(h0)/1e6, float64(h1)/1e6)
	}
	testwait.Until(t, 20*time.Second, "a tick to show the last switch", func() bool {
		cuts := s.State.Summary().Buses[0].Cuts
		return len(cuts) > 0 && cuts[len(cuts)-1].Tick >= 0
	})
	code, status := get(t, "http://"+srv.Addr()+"/status")
	if code != 200 || len(status) > 64<<10 {
		t.Errorf("/status: %d, %d bytes after 100,000 switches", code, len(status))
	}
	var st struct {
		Summary show.Summary `json:"summary"`
	}
	if err := json.Unmarshal([]byte(status), &st); err != nil {
		t.Fatal(err)
	}
	bus := st.Summary.Buses[0]
	if bus.Switches != 100_000 || len(bus.Cuts) != 32 || bus.SwitchesByKind["cut"] != 33_334 || bus.SwitchesByKind["fade"] != 33_333 || bus.SwitchesByKind["wipe"] != 33_333 {
		t.Errorf("/status: %d switches %v, %d kept; want 100000 (33334 cuts, 33333 fades and wipes), 32 kept", bus.Switches, bus.SwitchesByKind, len(bus.Cuts))
	}
	for i, c := range bus.Cuts {
		if c.Tick < 0 || c.Scene != "scene."+scenes[(100_000-32+i)%2] || c.Kind != kinds[(100_000-32+i)%3] {
			t.Fatalf("kept switch %d: %+v; want switch %d, drawn", i, c, 100_000-32+i)
		}
	}
	var b bytes.Buffer
	s.State.Summary().WriteText(&b)
	if lines := strings.Count(b.String(), "\n"); lines > 45 {
		t.Errorf("the summary has %d lines after 100,000 switches", lines)
	}
	if !strings.Contains(b.String(), "100000 switches (33334 cut, 33333 fade, 33333 wipe); the last 32:") {
		t.Errorf("the summary does not count the switches:\n%s", b.String())
	}
}

// TestReplacedMediaFileIsPickedUp deletes a raw source's file while the
// show plays it and writes another under the same name: the source logs
// it and plays the new file.
func TestReplacedMediaFileIsPickedUp(t *testing.T) {
	showPath := writeShow(t, `
show {
  name       = "replace"
  size       = "320x180"
  frame_rate = "30"
}
source "raw_file" "clip" {
  path = "clip.nv12"
}
scene "clip" {
  layer {
    source = source.clip
  }
}
bus "program" "pgm" {
  scene = scene.clip
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "out.y4m"
}
`)
	dir := filepath.Dir(showPath)
	clip := filepath.Join(dir, "clip.nv12")
	writeClip := func(id uint16) {
		var data []byte
		for _, f := range clipFrames(id, 10) {
			data = append(data, f.Bytes()...)
		}
		if err := os.WriteFile(clip, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeClip(9)
	var log logBuffer
	s, err := runShow(t, compile(t, showPath, nil), show.Options{}, &log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	testwait.Until(t, 20*time.Second, "15 frames of the first clip", func() bool { return output(s, "output.pgm").Written >= 15 })
	if err := os.Remove(clip); err != nil {
		t.Fatal(err)
	}
	writeClip(11)
	testwait.Until(t, 20*time.Second, "the source to log the new file", func() bool {
		return strings.Contains(log.String(), "media file replaced") && strings.Contains(log.String(), clip)
	})
	at := output(s, "output.pgm").Written
	testwait.Until(t, 20*time.Second, "15 more frames", func() bool { return output(s, "output.pgm").Written >= at+15 })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	var ids []uint16
	for _, f := range readY4M(t, filepath.Join(dir, "out.y4m")) {
		if id, _, ok := media.ReadStamp(f, frame.Rect{W: 320, H: 180}); ok {
			ids = append(ids, id)
		}
	}
	switched := -1
	for i, id := range ids {
		if id == 11 && switched < 0 {
			switched = i
		}
		if switched < 0 && id != 9 || switched >= 0 && id != 11 {
			t.Fatalf("picture %d shows clip %d; want clip 9, then clip 11 once it replaced it (%v)", i, id, ids)
		}
	}
	if switched < 10 || len(ids)-switched < 10 {
		t.Fatalf("clip 9 shows %d times, then clip 11 %d times", switched, len(ids)-max(switched, 0))
	}
	if src := s.State.Summary().Sources[0]; src.Errors != 0 {
		t.Errorf("replacing the file counted errors: %+v", src)
	}
}
