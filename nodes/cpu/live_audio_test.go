package cpu

import (
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
)

// liveSoundShow: an SRT listener on Program, recorded.
const liveSoundShow = `
show {
  name       = "live sound"
  size       = "320x180"
  frame_rate = "30"
}
source "srt" "one" {
  port            = PORT
  loss_timeout_ms = 2000
}
scene "one" {
  layer {
    source = source.one
  }
}
bus "program" "pgm" {
  scene = scene.one
}
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`

// liveSoundClip writes a transport stream of the test pattern (codec)
// with its line-up tone and blips (sound, an ffmpeg encoder) into dir:
// frames frames at 30 fps.
func liveSoundClip(t *testing.T, dir, codec, sound string, frames int) (string, audio.Cadence) {
	t.Helper()
	cad, _ := audio.NewCadence(30, 1)
	tone, _ := audio.NewTone(audio.ToneHz, audio.ToneDBFS, cad)
	rate := frame.Rational{Num: 30, Den: 1}
	tp, _ := media.NewTestPattern(media.TestPatternConfig{Pattern: media.Bars, Format: frame.NV12, Width: 320, Height: 180, Rate: rate, Tone: &tone})
	clip := filepath.Join(dir, "clip.ts")
	if err := media.Encode(media.EncodeConfig{Path: clip, Codec: codec, Container: "ts", Format: frame.NV12, Width: 320, Height: 180,
		Rate: rate, GOP: 30, Audio: sound, Tone: &tone}, tp, frames); err != nil {
		t.Fatal(err)
	}
	return clip, cad
}

// recordedSound reads a stopped show's recording of Program (pgm.y4m and
// pgm.wav in dir) and checks the stream's sound in it: the tone at its
// −18 dBFS (the median of the frames' peaks, within 0.5 dB: AAC's coding
// error) in most of the sent frames, and a blip starting on each flash
// frame's first samples, within within samples. It returns the latest
// blip's lateness, in samples, and the number of flashes.
func recordedSound(t *testing.T, dir string, cad audio.Cadence, sent int, within int64) (worst int64, n int) {
	t.Helper()
	frames := readY4M(t, filepath.Join(dir, "pgm.y4m"))
	samples := readWAV(t, filepath.Join(dir, "pgm.wav"))
	var flashes, blips []int64
	for i, f := range frames {
		if flashed(f) && (i == 0 || !flashed(frames[i-1])) {
			flashes = append(flashes, cad.Start(int64(i)))
		}
	}
	threshold := float32((audio.DBToGain(audio.ToneDBFS) + audio.DBToGain(audio.BlipDBFS)) / 2)
	last := int64(-1 << 40)
	var peaks []float64 // each frame's peak, of the frames with sound but no blip
	for k := int64(0); k < int64(len(frames)); k++ {
		var peak float64
		for i := cad.Start(k); i < cad.Start(k+1) && int(2*i+1) < len(samples); i++ {
			v := math.Abs(float64(samples[2*i]))
			peak = max(peak, v)
			if v <= float64(threshold) {
				continue
			}
			if i-last > 1600 {
				blips = append(blips, i)
			}
			last = i
		}
		if peak > 0.01 && peak <= float64(threshold) {
			peaks = append(peaks, peak)
		}
	}
	if len(peaks) < sent*2/3 {
		t.Fatalf("%d of %d recorded frames carry the tone (the stream sent %d)", len(peaks), len(frames), sent)
	}
	sort.Float64s(peaks)
	if db := 20 * math.Log10(peaks[len(peaks)/2]); math.Abs(db-audio.ToneDBFS) > 0.5 {
		t.Errorf("the recorded tone peaks at %.2f dBFS (median of %d frames), want %v", db, len(peaks), audio.ToneDBFS)
	}
	if len(flashes) < 4 || len(flashes) != len(blips) {
		t.Fatalf("%d flashes at %v and %d blips at %v in %d frames", len(flashes), flashes, len(blips), blips, len(frames))
	}
	for i := range flashes {
		d := blips[i] - flashes[i]
		if d < 0 || d > within {
			t.Errorf("flash %d at sample %d, its blip at %d: %d samples (%.2f ms) apart, want 0 to %d", i, flashes[i], blips[i], d, float64(d)*1000/audio.Rate, within)
		}
		worst = max(worst, d)
	}
	return worst, len(flashes)
}

// TestLiveSoundInStepWithItsPictures sends a transport stream of the test
// pattern (HEVC) with its line-up tone and blips (AAC, or MP2) over SRT
// from ffmpeg, at its own rate, to a live source, and reads the bus's
// recording: the WAV holds the tone at its −18 dBFS, and every blip
// starts on its flash frame's first samples, within a frame (the sound
// and the pictures come by two decoders; each picture waits for its
// samples).
func TestLiveSoundInStepWithItsPictures(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, codec := range []string{"aac", "mp2"} {
		t.Run(codec, func(t *testing.T) {
			port := freePort(t, "udp")
			path := writeShow(t, strings.Replace(liveSoundShow, "PORT", fmt.Sprint(port), 1))
			dir := filepath.Dir(path)
			clip, cad := liveSoundClip(t, dir, "hevc", codec, 150)
			s := startShow(t, compile(t, path, nil))
			defer s.Stop()
			out, err := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re", "-i", clip, "-c", "copy", "-f", "mpegts",
				fmt.Sprintf("srt://127.0.0.1:%d?mode=caller&latency=120000", port)).CombinedOutput()
			if err != nil {
				t.Fatalf("sender: %v: %s", err, out)
			}
			stopAfterLoss(t, s)
			worst, n := recordedSound(t, dir, cad, 150, 1600)
			t.Logf("%s: %d flashes; blips start %d samples (%.3f ms) after their flash frame's first sample at most", codec, n, worst, float64(worst)*1000/audio.Rate)
		})
	}
}

// stopAfterLoss waits for a show's source.one to have played its stream
// (over 150 frames, or dropped as early) and lost it (its on_error frames
// follow), and for Program to record after that, and stops the show.
func stopAfterLoss(t *testing.T, s *show.Show[Frame]) {
	t.Helper()
	waitShow(t, s, "the stream played and lost", func(sum show.Summary) bool {
		l := sourceOf(sum, "source.one").Live
		return l != nil && l.Connections >= 1 && l.ErrorFrames > 0 && sourceOf(sum, "source.one").Produced > 150
	})
	testwait.Until(t, generous, "frames after the loss recorded", func() bool { return busOf(s.State.Summary(), "bus.pgm").Ticks > 0 })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
}

// liveRTMPShow: an RTMP listener on Program, recorded.
var liveRTMPShow = strings.Replace(liveSoundShow, `source "srt" "one" {
  port            = PORT`, `source "rtmp" "one" {
  port            = PORT
  key             = "cam"`, 1)

// TestRTMPSoundInStepWithItsPictures: ffmpeg pushes FLV over RTMP, at
// its own rate, of the test pattern (H.264) with its tone and blips in
// AAC, to an rtmp source: the bus's recording holds the tone at its
// −18 dBFS, and every blip starts within 1 ms (48 samples) of its flash
// frame's first sample (the publisher's timestamps are whole
// milliseconds, its pictures' and its sound's rounded apart).
func TestRTMPSoundInStepWithItsPictures(t *testing.T) {
	peer.NeedFFmpeg(t)
	port := freeTCPPort(t)
	path := writeShow(t, strings.Replace(liveRTMPShow, "PORT", fmt.Sprint(port), 1))
	dir := filepath.Dir(path)
	clip, cad := liveSoundClip(t, dir, "h264", "aac", 150)
	s := startShow(t, compile(t, path, nil))
	defer s.Stop()
	pushFLV(t, clip, fmt.Sprintf("rtmp://127.0.0.1:%d/live/cam", port))
	stopAfterLoss(t, s)
	if e := sourceOf(s.State.Summary(), "source.one").LastError; strings.Contains(e, "sound") {
		t.Errorf("the source's last error speaks of its sound: %q", e)
	}
	worst, n := recordedSound(t, dir, cad, 150, audio.Rate/1000)
	t.Logf("%d flashes; blips start %d samples (%.3f ms) after their flash frame's first sample at most", n, worst, float64(worst)*1000/audio.Rate)
}

// pushFLV runs ffmpeg pushing clip at its own rate as FLV to url (args:
// its encoding options; the streams copied when none), and waits for it
// to end.
func pushFLV(t *testing.T, clip, url string, args ...string) {
	t.Helper()
	if len(args) == 0 {
		args = []string{"-c", "copy"}
	}
	cmd := append([]string{"-hide_banner", "-nostdin", "-loglevel", "error", "-re", "-i", clip}, args...)
	out, err := exec.Command("ffmpeg", append(cmd, "-f", "flv", url)...).CombinedOutput()
	if err != nil {
		t.Fatalf("publisher: %v: %s", err, out)
	}
}
