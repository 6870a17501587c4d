package media

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/internal/peer"
)

// trackSamples is what ffmpeg decodes of a file's sound, aligned to its
// pictures (AudioDecoder read whole): the peer FileSound's passes must
// carry.
func trackSamples(t *testing.T, path string) []float32 {
	t.Helper()
	info, ok, err := ProbeAudio("", path)
	if err != nil || !ok {
		t.Fatalf("probe: %v, %v", ok, err)
	}
	dec, err := OpenAudio("", path, info)
	if err != nil {
		t.Fatal(err)
	}
	var out []float32
	for {
		b, err := dec.Read(1600)
		out = append(out, b...)
		if err != nil {
			break
		}
	}
	if err := dec.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fakeFFmpeg puts an ffmpeg first on $PATH that runs script's lines, then
// the real ffmpeg with its arguments. The clips are made before.
func fakeFFmpeg(t *testing.T, script string) {
	t.Helper()
	real, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed")
	}
	dir := t.TempDir()
	sh := fmt.Sprintf("#!/bin/sh\n%s\nexec %q \"$@\"\n", script, real)
	if err := os.WriteFile(filepath.Join(dir, "ffmpeg"), []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// pictureSamples is picture k of a pass's share of the track (30 fps:
// 1600 sample frames each), silence past its end.
func pictureSamples(track []float32, k int) []float32 {
	out := make([]float32, 1600*audio.Channels)
	if i := k * 1600 * audio.Channels; i < len(track) {
		copy(out, track[i:])
	}
	return out
}

// The pictures never wait for the sound's decoder (issue 25: on the CUDA
// backend one decode loop serves ~50 sources, and a picture held on its
// ffmpeg held them all): while ffmpeg has not started, every picture
// goes on at once with silence, counted late; once it runs, the pictures
// carry the track where they stand in it (the late pictures' share left
// out), not where it was held.
func TestFileSoundNeverHoldsAPicture(t *testing.T) {
	peer.NeedFFmpeg(t)
	path, tone := toneClip(t, "aac")
	track := trackSamples(t, path)
	gate := filepath.Join(t.TempDir(), "gate")
	fakeFFmpeg(t, fmt.Sprintf("while [ ! -e %q ]; do sleep 0.02; done", gate))
	defer func(d time.Duration) { startLimit = d }(startLimit)
	startLimit = time.Hour // Started is false for as long as ffmpeg is held back
	var late atomic.Uint64
	s := NewFileSound(path, tone.Cadence, &late, func(m string) { t.Errorf("warning: %s", m) })
	defer s.wg.Wait()
	defer s.Close()
	s.Open()
	const held = 30
	done := make(chan [][]float32)
	go func() {
		var got [][]float32
		for n := range int64(held) {
			got = append(got, s.Frame(n, 0))
		}
		done <- got
	}()
	var got [][]float32
	select {
	case got = <-done:
	case <-time.After(time.Minute): // never on a working FileSound: it does not wait at all
		t.Fatal("Frame waited for the sound decoder: the pictures are held while ffmpeg has not started")
	}
	if s.Started() {
		t.Error("Started says the sound is ready while its ffmpeg has not run")
	}
	for n, b := range got {
		if len(b) != 1600*audio.Channels || slices.ContainsFunc(b, func(v float32) bool { return v != 0 }) {
			t.Fatalf("picture %d: %d values, want 3200 of silence", n, len(b))
		}
	}
	if s.Late() != held || late.Load() != held {
		t.Errorf("%d pictures counted late (the show's count %d), want %d", s.Late(), late.Load(), held)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for n := int64(held); n < 75; n++ {
		if b, want := s.FrameWait(n, 0), pictureSamples(track, int(n)); !slices.Equal(b, want) {
			t.Fatalf("picture %d does not carry the track's samples for picture %d", n, n)
		}
	}
	if s.Late() != held {
		t.Errorf("%d late after ffmpeg ran, want %d", s.Late(), held)
	}
}

// countFFmpeg makes every ffmpeg started write a line to the file it
// returns.
func countFFmpeg(t *testing.T) string {
	count := filepath.Join(t.TempDir(), "starts")
	fakeFFmpeg(t, fmt.Sprintf("echo started >> %q", count))
	return count
}

func starts(t *testing.T, count string) int {
	b, err := os.ReadFile(count)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "started")
}

// playPasses plays passes of a 75-picture clip's sound, the pictures'
// pass told once the first is over (as the decoders tell it), checking
// every picture carries its share of the track; opened again (a decoder
// started again) before the pass reopen.
func playPasses(t *testing.T, s *FileSound, track []float32, passes, reopen int) {
	t.Helper()
	s.Open()
	for n := int64(0); n < int64(75*passes); n++ {
		pass := 0
		if n >= 75 {
			pass = 75
		}
		if n == int64(75*reopen) {
			s.Open()
		}
		if b, want := s.FrameWait(n, pass), pictureSamples(track, int(n%75)); !slices.Equal(b, want) {
			t.Fatalf("picture %d (pass %d) does not carry its share of the track", n, n/75)
		}
	}
}

// A short track is decoded once: every later pass of a looping source,
// and a decoder opened again, plays it from memory with no ffmpeg (before,
// each pass of a 4-second clip started an ffmpeg, on the decode loop).
func TestFileSoundLoopsAShortTrackFromMemory(t *testing.T) {
	peer.NeedFFmpeg(t)
	path, tone := toneClip(t, "aac")
	track := trackSamples(t, path)
	count := countFFmpeg(t)
	s := NewFileSound(path, tone.Cadence, nil, func(m string) { t.Error(m) })
	defer s.wg.Wait()
	defer s.Close()
	playPasses(t, s, track, 4, 2)
	if n := starts(t, count); n != 1 {
		t.Errorf("ffmpeg started %d times for 4 passes of a 2.5 s track, want once", n)
	}
	if s.Late() != 0 {
		t.Errorf("%d pictures late while waiting for the sound", s.Late())
	}
}

// A track too long to keep streams, its next pass decoding ahead: every
// pass still carries the track from its start.
func TestFileSoundStreamsALongTrack(t *testing.T) {
	peer.NeedFFmpeg(t)
	path, tone := toneClip(t, "aac")
	track := trackSamples(t, path)
	count := countFFmpeg(t)
	defer func(v int) { holdValues = v }(holdValues)
	holdValues = audio.Rate / 2 * audio.Channels // half a second
	s := NewFileSound(path, tone.Cadence, nil, func(m string) { t.Error(m) })
	defer s.wg.Wait()
	defer s.Close()
	playPasses(t, s, track, 3, -1)
	if n := starts(t, count); n < 3 || n > 4 {
		t.Errorf("ffmpeg started %d times for 3 passes streamed, want 3 (and the next one's)", n)
	}
	if s.Late() != 0 {
		t.Errorf("%d pictures late while waiting for the sound", s.Late())
	}
}

// A file without sound is silent (nil blocks), said to no one.
func TestFileSoundOfASilentFile(t *testing.T) {
	peer.NeedFFmpeg(t)
	silent := filepath.Join(t.TempDir(), "silent.ts")
	if out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=s=64x64:d=0.5", "-c:v", "libx264", "-f", "mpegts", silent).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	cad, _ := audio.NewCadence(30, 1)
	s := NewFileSound(silent, cad, nil, func(m string) { t.Error(m) })
	defer s.wg.Wait()
	defer s.Close()
	s.Open()
	for n := range int64(40) {
		if b := s.FrameWait(n, 15*min(1, int(n/15))); b != nil {
			t.Fatalf("picture %d of a file without sound carries %d values", n, len(b))
		}
	}
	if !s.Started() || s.Late() != 0 {
		t.Errorf("started %v, %d late", s.Started(), s.Late())
	}
}

// A decoder opened again on another file at the path (a clip replaced)
// plays that file's sound, not the track kept of the one before.
func TestFileSoundOpensAReplacedFileAgain(t *testing.T) {
	peer.NeedFFmpeg(t)
	path, tone := toneClip(t, "aac")
	other, _ := toneClip(t, "mp2")
	first, second := trackSamples(t, path), trackSamples(t, other)
	if slices.Equal(pictureSamples(first, 0), pictureSamples(second, 0)) {
		t.Fatal("the two clips' sound does not differ: the test cannot tell them apart")
	}
	s := NewFileSound(path, tone.Cadence, nil, func(m string) { t.Error(m) })
	defer s.wg.Wait()
	defer s.Close()
	s.Open()
	for n := range 10 {
		if !slices.Equal(s.FrameWait(int64(n), 0), pictureSamples(first, n)) {
			t.Fatalf("picture %d does not carry the first file's track", n)
		}
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	s.Open()
	for n := range 10 {
		if !slices.Equal(s.FrameWait(int64(n), 0), pictureSamples(second, n)) {
			t.Fatalf("picture %d after the file was replaced does not carry the new file's track", n)
		}
	}
}
