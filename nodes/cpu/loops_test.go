package cpu

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/showtest"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
)

// loopsRate is the looped-clips show's frame rate. The test is about
// order and counts, not speed: at 5 fps a tick is drawn 400 ms after its
// frames are due, so a machine busy with other work (CI's two shared
// cores) does not turn a scheduling delay into a late frame.
const loopsRate = 5

// TestLoopedClipsPlayEveryFrameInOrder: a show of an HEVC, an H.264 and an
// MPEG-TS clip (2 s each, stamped test patterns encoded by ffmpeg), a raw
// file and a test pattern, every source on a bus of its own that records
// it, plays each clip five times over. Each recording, read back by the
// stamps in its pictures, holds every frame of the source in order from
// the bus's first tick: across every loop point, with no repeat, no skip
// but a tick the bus counted missed, no underrun and no drop.
func TestLoopedClipsPlayEveryFrameInOrder(t *testing.T) {
	peer.NeedFFmpeg(t)
	const w, h, frames, passes = 320, 180, 2 * loopsRate, 5
	dir := t.TempDir()
	rate := frame.Rational{Num: loopsRate, Den: 1}
	type clip struct {
		name, kind, file string
		codec, container string
		id               uint16
		loop             int // the stamps' period: frames in the file; 0: no loop
	}
	clips := []clip{
		{name: "hevc", kind: "hevc_file", file: "clip.hevc", codec: "hevc", container: "es", id: 11, loop: frames},
		{name: "h264", kind: "h264_file", file: "clip.264", codec: "h264", container: "es", id: 12, loop: frames},
		{name: "ts", kind: "h264_file", file: "clip.ts", codec: "h264", container: "ts", id: 13, loop: frames},
		{name: "raw", kind: "raw_file", file: "clip.nv12", id: 14, loop: frames},
		{name: "pattern", kind: "test_pattern"}, // its stamp's id is the show's to give
	}
	src := fmt.Sprintf(`show {
  name       = "loops"
  size       = "%dx%d"
  frame_rate = "%d"
  format     = "nv12"
}
`, w, h, loopsRate)
	for _, c := range clips {
		switch {
		case c.codec != "":
			tp, err := media.NewTestPattern(media.TestPatternConfig{ID: c.name, StampID: c.id, Pattern: media.Bars, Format: frame.NV12, Width: w, Height: h, Rate: rate})
			if err != nil {
				t.Fatal(err)
			}
			cfg := media.EncodeConfig{Path: filepath.Join(dir, c.file), Codec: c.codec, Container: c.container, Format: frame.NV12, Width: w, Height: h, Rate: rate, GOP: loopsRate}
			if err := media.Encode(cfg, tp, frames); err != nil {
				t.Fatal(err)
			}
			src += fmt.Sprintf("source %q %q {\n  path = %q\n  size = \"%dx%d\"\n  loop = true\n}\n", c.kind, c.name, c.file, w, h)
		case c.kind == "raw_file":
			writeRawClip(t, filepath.Join(dir, c.file), c.id, w, h, frames, rate)
			src += fmt.Sprintf("source %q %q {\n  path   = %q\n  size   = \"%dx%d\"\n  format = \"nv12\"\n  loop   = true\n}\n", c.kind, c.name, c.file, w, h)
		default:
			src += fmt.Sprintf("source %q %q {\n  pattern = \"bars\"\n  size    = \"%dx%d\"\n}\n", c.kind, c.name, w, h)
		}
		src += fmt.Sprintf("bus \"aux\" %q {\n  source = source.%s\n}\noutput \"record\" %q {\n  bus  = bus.%s\n  path = \"%s.y4m\"\n}\n", c.name, c.name, c.name, c.name, c.name)
	}
	path := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startShow(t, compile(t, path, nil))
	stopped := false
	defer func() {
		if !stopped {
			s.Stop()
		}
	}()
	// Five passes of every clip after each bus's first tick, and a frame
	// more so that the fifth loop point is behind.
	waitShow(t, s, fmt.Sprintf("every bus drew %d ticks", passes*frames+2), func(sum show.Summary) bool {
		for _, b := range sum.Buses {
			if b.Ticks < uint64(passes*frames+2) {
				return false
			}
		}
		return true
	})
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	sum := s.State.Summary()
	for _, src := range sum.Sources {
		if src.Underruns != 0 || src.Drops != 0 || src.Errors != 0 {
			t.Errorf("%s: %d underruns, %d drops, %d errors (%s), want none", src.Address, src.Underruns, src.Drops, src.Errors, src.LastError)
		}
	}
	buses := map[string]show.BusSummary{}
	for _, b := range sum.Buses {
		buses[b.Address] = b
		if b.Repeats != 0 {
			t.Errorf("%s: %d repeats, want none", b.Address, b.Repeats)
		}
	}
	for _, c := range clips {
		b := buses["bus."+c.name]
		recs := readY4M(t, filepath.Join(dir, c.name+".y4m"))
		// The output starts after its bus (the plan's group order): what it
		// records begins a tick or two later, and runs on from there.
		if uint64(len(recs)) > b.Ticks || len(recs) < passes*frames {
			t.Errorf("%s: %d frames recorded, the bus drew %d", c.name, len(recs), b.Ticks)
		}
		if b.OutputDrops != 0 {
			t.Errorf("%s: %d ticks the recording did not take", b.Address, b.OutputDrops)
		}
		var prev int64 = -1
		var loops, gaps int
		for i, f := range recs {
			id, n, ok := media.ReadStamp(f, frame.Rect{W: w, H: h})
			if !ok || (c.id != 0 && id != c.id) {
				t.Fatalf("%s: recorded frame %d carries no stamp of source %d (read %d, %v)", c.name, i, c.id, id, ok)
			}
			cur := int64(n)
			if prev >= 0 {
				next := prev + 1
				if c.loop > 0 {
					next %= int64(c.loop)
				}
				switch {
				case cur == next:
				case cur == prev:
					t.Errorf("%s: recorded frame %d repeats source frame %d", c.name, i, cur)
				default:
					gaps++ // a tick missed by the bus: counted below
					t.Logf("%s: recorded frame %d shows source frame %d after %d", c.name, i, cur, prev)
				}
				if c.loop > 0 && cur < prev {
					loops++
				}
			}
			prev = cur
		}
		if uint64(gaps) > b.Missed {
			t.Errorf("%s: the recording jumps %d times, the bus counted %d missed deadlines", c.name, gaps, b.Missed)
		}
		if c.loop > 0 && loops < passes {
			t.Errorf("%s: the recording crosses %d loop points, want %d", c.name, loops, passes)
		}
	}
}

// writeRawClip writes frames stamped pictures as raw NV12, back to back.
func writeRawClip(t *testing.T, path string, id uint16, w, h, frames int, rate frame.Rational) {
	t.Helper()
	showtest.WriteRawClip(t, path, id, w, h, frames, rate)
}

// stallingFile is a record output's file whose writes block once stalled
// is set, until release is closed: a disk that stops taking writes.
type stallingFile struct {
	media.RecordFile
	stalled *atomic.Bool
	release chan struct{}
}

func (f *stallingFile) Write(p []byte) (int, error) {
	if f.stalled.Load() {
		<-f.release
	}
	return f.RecordFile.Write(p)
}

// TestASlowOutputNeverHoldsItsBus: a bus with two outputs, a recording
// whose disk stops taking writes and a null output. The recording's queue
// fills; from then on each tick's hand-off waits for it at most until its
// limit and drops the tick for it alone, counted as its hand-off waits and
// drops (and the bus's output drops), while the bus goes on drawing and
// the null output takes every tick. Counts only: the bound on each wait is
// TestHandOffWaitIsBoundedAndCounted's, on a simulated clock.
func TestASlowOutputNeverHoldsItsBus(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	src := fmt.Sprintf(`show {
  name       = "slow-output"
  size       = "320x180"
  frame_rate = "%d"
  format     = "nv12"
}
source "test_pattern" "bars" {
  size = "320x180"
}
bus "aux" "pgm" {
  source = source.bars
}
output "record" "slow" {
  bus  = bus.pgm
  path = "slow.y4m"
}
output "null" "fast" {
  bus = bus.pgm
}
`, loopsRate)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var stalled atomic.Bool
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	open := func(name string, flag int, perm os.FileMode) (media.RecordFile, error) {
		f, err := media.OpenOSFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		return &stallingFile{RecordFile: f, stalled: &stalled, release: release}, nil
	}
	s, err := runShow(t, compile(t, path, nil), show.Options{OpenFile: open}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		unblock() // the recording's thread must return for the show to stop
		s.Stop()
	}()
	waitShow(t, s, "the recording writes 3 frames", func(sum show.Summary) bool { return output(s, "output.slow").Written >= 3 })
	stalled.Store(true) // the disk stops
	sum := waitShow(t, s, "5 ticks dropped for the stalled recording", func(sum show.Summary) bool {
		return output(s, "output.slow").HandOffDrops >= 5
	})
	slow, fast := output(s, "output.slow"), output(s, "output.fast")
	if slow.HandOffWaits < slow.HandOffDrops {
		t.Errorf("the recording: %d hand-off drops but %d waits: each drop waited first", slow.HandOffDrops, slow.HandOffWaits)
	}
	if fast.HandOffDrops != 0 {
		t.Errorf("the null output missed %d ticks: a stalled output held the bus", fast.HandOffDrops)
	}
	bus := sum.Buses[0]
	if bus.OutputDrops < slow.HandOffDrops {
		t.Errorf("the bus counts %d output drops, the recording %d hand-off drops", bus.OutputDrops, slow.HandOffDrops)
	}
	// The bus goes on: ticks after the recording's drops, all taken by the
	// null output (its queue holds 4 it may not have written yet).
	ticks := bus.Ticks
	after := waitShow(t, s, "5 more ticks", func(sum show.Summary) bool { return sum.Buses[0].Ticks >= ticks+5 })
	f := output(s, "output.fast")
	if drawn, wrote := after.Buses[0].Ticks-ticks, f.Written-fast.Written; wrote+4 < drawn || f.HandOffDrops != 0 {
		t.Errorf("the null output wrote %d of the %d ticks drawn meanwhile (%d hand-off drops)", wrote, drawn, f.HandOffDrops)
	}
}
