package cpu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/browser"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
)

// TestEverySourceKindIsCleanFromItsFirstTickOnAir: a show of every kind of
// source the CPU backend runs (an HEVC, an H.264 and an MPEG-TS clip
// decoded by ffmpeg, a raw file, a test pattern and a browser source fed
// by the pattern producer), each on a bus of its own, started as onair run
// starts it: the show goes on air once every part is ready, says how long
// it waited and for which source, and from that moment no source underruns
// or drops and no bus repeats a frame, over every loop point of the clips,
// but for a tick a bus counted missed (a machine busy with other work).
// At loopsRate (5 fps), so that a busy machine's scheduling delay does not
// become a late frame; the producer paints at twice the show's rate (the
// smoother shows the newest picture; the rest are counted early).
func TestEverySourceKindIsCleanFromItsFirstTickOnAir(t *testing.T) {
	peer.NeedFFmpeg(t)
	const w, h, frames, passes = 320, 180, 2 * loopsRate, 3
	dir, err := os.MkdirTemp("", "oair") // short: the socket's path must fit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rate := frame.Rational{Num: loopsRate, Den: 1}
	src := fmt.Sprintf("show {\n  name = \"start\"\n  size = \"%dx%d\"\n  frame_rate = \"%d\"\n  format = \"nv12\"\n}\n", w, h, loopsRate)
	for _, c := range []struct{ name, kind, file, codec, container string }{
		{"hevc", "hevc_file", "clip.hevc", "hevc", "es"},
		{"h264", "h264_file", "clip.264", "h264", "es"},
		{"ts", "h264_file", "clip.ts", "h264", "ts"},
	} {
		tp, err := media.NewTestPattern(media.TestPatternConfig{ID: c.name, Pattern: media.Bars, Format: frame.NV12, Width: w, Height: h, Rate: rate})
		if err != nil {
			t.Fatal(err)
		}
		if err := media.Encode(media.EncodeConfig{Path: filepath.Join(dir, c.file), Codec: c.codec, Container: c.container, Format: frame.NV12, Width: w, Height: h, Rate: rate, GOP: loopsRate}, tp, frames); err != nil {
			t.Fatal(err)
		}
		src += fmt.Sprintf("source %q %q {\n  path = %q\n  loop = true\n}\n", c.kind, c.name, c.file)
	}
	writeRawClip(t, filepath.Join(dir, "clip.nv12"), 14, w, h, frames, rate)
	src += fmt.Sprintf("source \"raw_file\" \"raw\" {\n  path = \"clip.nv12\"\n  size = \"%dx%d\"\n  format = \"nv12\"\n  loop = true\n}\n", w, h)
	src += "source \"test_pattern\" \"pattern\" {\n  pattern = \"bars\"\n}\n"
	src += "source \"browser\" \"gfx\" {\n  socket = \"gfx.sock\"\n}\n"
	names := []string{"hevc", "h264", "ts", "raw", "pattern", "gfx"}
	for _, n := range names {
		src += fmt.Sprintf("bus \"aux\" %q {\n  source = source.%s\n}\noutput \"null\" %q {\n  bus = bus.%s\n}\n", n, n, n, n)
	}
	path := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p := compile(t, path, nil)

	ctx, cancel := context.WithCancel(context.Background())
	produced := make(chan error, 1)
	go func() {
		produced <- browser.RunPattern(ctx, browser.PatternConfig{Socket: filepath.Join(dir, "gfx.sock"), Width: w, Height: h,
			Period: time.Second / (2 * loopsRate), Name: "pattern"}, &browser.PatternStats{})
	}()
	defer func() {
		cancel()
		if err := <-produced; err != nil {
			t.Error(err)
		}
	}()
	s := startShow(t, p)
	stopped := false
	defer func() {
		if !stopped {
			s.Stop()
		}
	}()
	sum := s.State.Summary()
	if sum.Start == nil || sum.Start.WaitedMs <= 0 || sum.Start.Slowest == "" || sum.Start.WaitedMs > sum.Start.StartedMs {
		t.Fatalf("the summary does not say how long the start waited to go on air: %+v", sum.Start)
	}
	if st := s.Status().(show.StatusReport).Summary.Start; st == nil || *st != *sum.Start {
		t.Errorf("/status says the start was %+v, the summary %+v", st, sum.Start)
	}
	// Every clip's loop point passed several times over on air.
	atOnAir := map[string]uint64{}
	for _, b := range sum.Buses {
		atOnAir[b.Address] = b.Ticks
	}
	waitShow(t, s, fmt.Sprintf("every bus drew %d ticks on air", passes*frames+2), func(sum show.Summary) bool {
		for _, b := range sum.Buses {
			if b.Ticks < atOnAir[b.Address]+uint64(passes*frames+2) {
				return false
			}
		}
		return true
	})
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	sum = s.State.Summary()
	if len(sum.Sources) != len(names) || len(sum.Buses) != len(names) {
		t.Fatalf("%d sources and %d buses, want %d of each", len(sum.Sources), len(sum.Buses), len(names))
	}
	// A tick the bus missed (counted: the machine held the show past a
	// deadline) may cost that bus a dropped frame, a repeat, and the
	// browser's producer, stalled with it, an underrun: the only faults
	// allowed, and no more of them than the bus counted missed.
	buses := map[string]show.BusSummary{}
	for _, b := range sum.Buses {
		buses[b.Address] = b
		if b.OutputDrops != 0 || b.Repeats > b.Missed {
			t.Errorf("%s: %d repeats, %d output drops, %d missed deadlines on air, want no output drop and no repeat but for a missed tick", b.Address, b.Repeats, b.OutputDrops, b.Missed)
		}
	}
	for _, src := range sum.Sources {
		missed := buses["bus."+strings.TrimPrefix(src.Address, "source.")].Missed
		if src.Underruns > missed || src.Drops > missed || src.Errors != 0 {
			t.Errorf("%s: %d underruns, %d drops, %d errors (%s) on air with its bus's %d missed deadlines, want none but for a missed tick (while starting: %d underruns, %d refused)",
				src.Address, src.Underruns, src.Drops, src.Errors, src.LastError, missed, src.StartUnderruns, src.StartDrops)
		}
	}
	var text strings.Builder
	sum.WriteText(&text)
	if !strings.Contains(text.String(), "Start: on air after ") || !strings.Contains(text.String(), "for every part to be ready before going on air") {
		t.Errorf("the summary does not say how the show went on air:\n%s", text.String())
	}
}
