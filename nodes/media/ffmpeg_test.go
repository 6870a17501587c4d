package media

import (
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
)

// events collects an FFmpeg output's events for a test.
type events struct {
	mu sync.Mutex
	ev []FFmpegEvent
}

func (e *events) add(ev FFmpegEvent) { e.mu.Lock(); e.ev = append(e.ev, ev); e.mu.Unlock() }

func (e *events) count(k FFmpegEventKind) (n int, last FFmpegEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.ev {
		if ev.Kind == k {
			n++
			last = ev
		}
	}
	return
}

// eventBound is how long a test waits for something an output must do:
// take frames, restart, exit. It bounds a wait for an event, never a
// measurement; on an idle machine every event comes within a second or two,
// and the bound only keeps a broken output from hanging the suite on a
// machine busy with other work. It is also the stall timeout of the tests
// that are not about stalls: a busy machine can keep ffmpeg from reading
// its pipe for longer than the default two seconds.
const eventBound = testwait.Bound

// decodeStamps decodes a video file with ffmpeg and reads the frame number
// stamped in every frame.
func decodeStamps(t *testing.T, path string, w, h int) []uint32 {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "nv12", "-").Output()
	if err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	size := frame.NV12.Size(w, h)
	var ns []uint32
	fr, _ := frame.New(frame.NV12, w, h)
	for off := 0; off+size <= len(out); off += size {
		copy(fr.Bytes(), out[off:off+size])
		_, n, ok := ReadStamp(fr, frame.Rect{X: 0, Y: 0, W: w, H: h})
		if !ok {
			t.Fatalf("frame %d of %s has no readable stamp", len(ns), path)
		}
		ns = append(ns, n)
	}
	return ns
}

func TestFFmpegOutputWritesAFile(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		path := filepath.Join(t.TempDir(), "out.mkv")
		var ev events
		o, err := StartFFmpeg(FFmpegConfig{Args: []string{"-c:v", "ffv1", "-y", path}, Format: f, Width: 320, Height: 180,
			Rate: frame.Rational{Num: 25, Den: 1}, Queue: 64, StallTimeout: eventBound, OnEvent: ev.add})
		if err != nil {
			t.Fatal(err)
		}
		pool, _ := frame.NewPool(f, 320, 180, 0)
		tp, _ := NewTestPattern(TestPatternConfig{Pattern: Ramp, Format: f, Width: 320, Height: 180, Rate: frame.Rational{Num: 25, Den: 1}})
		for i := 0; i < 30; i++ {
			fr, _ := pool.Get()
			tp.Next(fr)
			if err := o.Write(fr); err != nil {
				t.Fatal(err)
			}
			fr.Release()
		}
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
		st := o.Stats()
		if st.Written != 30 || st.Dropped != 0 || st.Restarts != 0 || st.Running {
			t.Errorf("%v: stats %+v, want 30 written, none dropped, no restart, stopped", f, st)
		}
		if n, _ := ev.count(FFmpegStarted); n != 1 {
			t.Errorf("%v: %d starts, want 1", f, n)
		}
		if pool.Free() != pool.Allocated() {
			t.Errorf("%v: %d of %d frames back in the pool: the output kept references", f, pool.Free(), pool.Allocated())
		}
		ns := decodeStamps(t, path, 320, 180)
		if len(ns) != 30 {
			t.Fatalf("%v: the file holds %d frames, want 30", f, len(ns))
		}
		for i, n := range ns {
			if n != uint32(i) {
				t.Errorf("%v: frame %d of the file is source frame %d", f, i, n)
				break
			}
		}
	}
}

// TestFFmpegOutputRestartsAfterKill kills the running ffmpeg and expects the
// exit to be reported and a new process to take the frames.
func TestFFmpegOutputRestartsAfterKill(t *testing.T) {
	peer.NeedFFmpeg(t)
	path := filepath.Join(t.TempDir(), "out.mkv")
	var ev events
	o, err := StartFFmpeg(FFmpegConfig{Args: []string{"-c:v", "ffv1", "-y", path}, Format: frame.NV12, Width: 160, Height: 90,
		Rate: frame.Rational{Num: 25, Den: 1}, Queue: 4, StallTimeout: eventBound, BackoffMin: 20 * time.Millisecond, OnEvent: ev.add})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	tp, _ := NewTestPattern(TestPatternConfig{Pattern: Bars, Format: frame.NV12, Width: 160, Height: 90, Rate: frame.Rational{Num: 25, Den: 1}})
	fr, _ := frame.New(frame.NV12, 160, 90)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // a bus writing at ~100 fps
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			g, _ := frame.New(frame.NV12, 160, 90)
			tp.Next(fr)
			g.CopyFrom(fr)
			o.Write(g)
			g.Release()
			time.Sleep(10 * time.Millisecond)
		}
	}()
	testwait.Until(t, testwait.Bound, "the first process to take frames", func() bool { return o.Stats().Written > 5 })
	pid := o.PID()
	proc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, testwait.Bound, "a restarted process", func() bool {
		st := o.Stats()
		return st.Restarts >= 1 && st.Running && st.PID != pid
	})
	before := o.Stats().Written
	testwait.Until(t, testwait.Bound, "the new process to take frames", func() bool { return o.Stats().Written > before+5 })
	close(stop)
	wg.Wait()
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	n, last := ev.count(FFmpegExited)
	if n < 1 || last.Err == nil || !strings.Contains(last.Err.Error(), "process "+strconv.Itoa(pid)) || !strings.Contains(last.Err.Error(), "killed") {
		t.Errorf("exit events %d, last %v: want the kill of process %d reported", n, last.Err, pid)
	}
	if st := o.Stats(); st.Exits < 1 || !strings.Contains(st.LastError, "killed") {
		t.Errorf("stats %+v", st)
	}
	if ns := decodeStamps(t, path, 160, 90); len(ns) < 5 {
		t.Errorf("the restarted process wrote %d frames, want at least 5", len(ns))
	}
}

// TestFFmpegOutputStallNeverBlocksTheCaller runs a process that never reads
// its input: every Write still returns at once, the queue drops its oldest
// frames, and the stall is detected, reported and the process restarted.
//
// "At once" is checked by order, not by timing each Write: a burst of
// writes right after the start ends before the first stall is detected,
// half a second after the process was handed its first frame. A Write that
// waited for the process would wait for that stall.
func TestFFmpegOutputStallNeverBlocksTheCaller(t *testing.T) {
	dir := t.TempDir()
	stuck := filepath.Join(dir, "stuck-ffmpeg")
	os.WriteFile(stuck, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755)
	var ev events
	o, err := StartFFmpeg(FFmpegConfig{Bin: stuck, Args: []string{"out.mkv"}, Format: frame.NV12, Width: 640, Height: 360,
		Rate: frame.Rational{Num: 30, Den: 1}, Queue: 2, StallTimeout: 500 * time.Millisecond, BackoffMin: 10 * time.Millisecond, OnEvent: ev.add})
	if err != nil {
		t.Fatal(err)
	}
	pool, _ := frame.NewPool(frame.NV12, 640, 360, 0)
	write := func() {
		fr, _ := pool.Get()
		o.Write(fr)
		fr.Release()
	}
	const burst = 20
	for i := 0; i < burst; i++ {
		write()
	}
	if st := o.Stats(); st.Stalls != 0 || st.Written != 0 || st.Dropped < burst-2-1 {
		t.Errorf("after a burst of %d writes to a process that never reads: stats %+v; want no stall yet, nothing written, and all but the queue (2) and the frame in the pipe dropped", burst, st)
	}
	// Go on writing, a frame at each poll, until the stall was detected
	// twice.
	testwait.Until(t, testwait.Bound, "two stalls and restarts", func() bool {
		write()
		return o.Stats().Restarts >= 2
	})
	st := o.Stats()
	if st.Stalls < 2 || st.Restarts < 2 || st.Dropped == 0 {
		t.Errorf("stats %+v: want two stalls, restarts and dropped frames", st)
	}
	if n, last := ev.count(FFmpegStalled); n < 2 || !strings.Contains(last.Err.Error(), "stalled") {
		t.Errorf("stall events %d, last %v", n, last.Err)
	}
	// Close kills the stuck process (at its stall timeout at the latest).
	closed := make(chan struct{})
	go func() { o.Close(); close(closed) }()
	stuckClose := time.NewTimer(eventBound)
	defer stuckClose.Stop()
	select {
	case <-closed:
	case <-stuckClose.C:
		t.Fatalf("Close did not return in %v", eventBound)
	}
	if st := o.Stats(); st.Running {
		t.Errorf("a process still runs after Close: %+v", st)
	}
	if pool.Free() != pool.Allocated() {
		t.Errorf("%d of %d frames back in the pool after Close", pool.Free(), pool.Allocated())
	}
	if err := o.Write(mustFrame(t)); err == nil {
		t.Error("Write after Close accepted")
	}
}

func TestFFmpegOutputBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  FFmpegConfig
		want string
	}{
		{"missing binary", FFmpegConfig{Bin: "/nonexistent/ffmpeg", Args: []string{"x"}, Format: frame.NV12, Width: 64, Height: 64, Rate: frame.Rational{Num: 30, Den: 1}}, "/nonexistent/ffmpeg"},
		{"no arguments", FFmpegConfig{Bin: "/bin/sh", Format: frame.NV12, Width: 64, Height: 64, Rate: frame.Rational{Num: 30, Den: 1}}, "no arguments"},
		{"odd size", FFmpegConfig{Bin: "/bin/sh", Args: []string{"x"}, Format: frame.NV12, Width: 63, Height: 64, Rate: frame.Rational{Num: 30, Den: 1}}, "even"},
	} {
		if _, err := StartFFmpeg(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func mustFrame(t *testing.T) *frame.Frame {
	fr, err := frame.New(frame.NV12, 640, 360)
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

// TestFFmpegOutputReportsAnExitOnItsOwn runs an ffmpeg that stops after two
// frames: each exit is reported and the process restarted, with backoff.
func TestFFmpegOutputReportsAnExitOnItsOwn(t *testing.T) {
	peer.NeedFFmpeg(t)
	var ev events
	o, err := StartFFmpeg(FFmpegConfig{Args: []string{"-frames:v", "2", "-f", "null", "-"}, Format: frame.NV12, Width: 64, Height: 64,
		Rate: frame.Rational{Num: 30, Den: 1}, Queue: 4, StallTimeout: eventBound, BackoffMin: 10 * time.Millisecond, BackoffMax: 40 * time.Millisecond, OnEvent: ev.add})
	if err != nil {
		t.Fatal(err)
	}
	fr := mustFrame64(t)
	testwait.Until(t, testwait.Bound, "three exits", func() bool {
		o.Write(fr)
		time.Sleep(2 * time.Millisecond)
		n, _ := ev.count(FFmpegExited)
		return n >= 3
	})
	o.Close()
	if _, last := ev.count(FFmpegExited); last.Err == nil || !strings.Contains(last.Err.Error(), "process") {
		t.Errorf("exit reported as %v", last.Err)
	}
	if st := o.Stats(); st.Restarts < 2 || st.Exits < 3 || st.Written < 6 {
		t.Errorf("stats %+v: want 3 exits, 2 restarts and 2 frames taken by each process", st)
	}
	if fr.Refs() != 1 {
		t.Errorf("frame holds %d references after Close, want 1", fr.Refs())
	}
}

func mustFrame64(t *testing.T) *frame.Frame {
	fr, err := frame.New(frame.NV12, 64, 64)
	if err != nil {
		t.Fatal(err)
	}
	return fr
}
