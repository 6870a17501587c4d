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
// error) in most of the sent frames, and each flash frame's blip starting
// on its first samples, within within samples. A flash frame the show
// dropped takes its blip with it, and one whose sound came after
// media.SoundLead goes on without it (a machine busy with more than the
// test): at least 3 flashes, and half of those the stream sent (one a
// second), must come with their blips, and no blip may start later than
// within in its flash's frame. It returns the latest blip's lateness, in
// samples, and the flashes that came with their blips.
func recordedSound(t *testing.T, dir string, cad audio.Cadence, sent int, within int64) (worst int64, paired int) {
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
	for _, at := range flashes {
		i := sort.Search(len(blips), func(i int) bool { return blips[i] >= at })
		if i == len(blips) || blips[i]-at >= int64(cad.Samples(0)) {
			continue // no blip in the flash's frame
		}
		if d := blips[i] - at; d > within {
			t.Errorf("the flash at sample %d has its blip at %d: %d samples (%.2f ms) late, want %d at most", at, blips[i], d, float64(d)*1000/audio.Rate, within)
		}
		worst = max(worst, blips[i]-at)
		paired++
	}
	if want := max(3, (sent/30+1)/2); paired < want {
		t.Fatalf("%d of %d flashes (at %v) came with their blips (at %v); want %d at least", paired, len(flashes), flashes, blips, want)
	}
	return worst, paired
}

// TestLiveSoundInStepWithItsPictures sends a transport stream of the test
// pattern (HEVC) with its line-up tone and blips (AAC, or MP2) over SRT
// from ffmpeg, at its own rate, to a live source, and reads the bus's
// recording: the WAV holds the tone at its −18 dBFS, and each flash
// frame's blip starts within the frame (the sound and the pictures come
// by two decoders; each picture waits for its samples; which flashes
// must come with their blips: recordedSound).
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
			stopAfterLoss(t, s, 150)
			worst, n := recordedSound(t, dir, cad, 150, 1600)
			t.Logf("%s: %d flashes with their blips; blips start %d samples (%.3f ms) after their flash frame's first sample at most", codec, n, worst, float64(worst)*1000/audio.Rate)
		})
	}
}

// stopAfterLoss waits for a show's source.one to have played its stream
// (over the sent frames, or dropped as early) and lost it (its on_error frames
// follow), and for Program to record after that, and stops the show.
func stopAfterLoss(t *testing.T, s *show.Show[Frame], sent uint64) {
	t.Helper()
	waitShow(t, s, "the stream played and lost", func(sum show.Summary) bool {
		l := sourceOf(sum, "source.one").Live
		return l != nil && l.Connections >= 1 && l.ErrorFrames > 0 && sourceOf(sum, "source.one").Produced > sent
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
// −18 dBFS, and each flash frame's blip starts within 1 ms (48 samples)
// of its first sample (the publisher's timestamps are whole
// milliseconds, its pictures' and its sound's rounded apart; which
// flashes must come with their blips: recordedSound).
func TestRTMPSoundInStepWithItsPictures(t *testing.T) {
	peer.NeedFFmpeg(t)
	port := freeTCPPort(t)
	path := writeShow(t, strings.Replace(liveRTMPShow, "PORT", fmt.Sprint(port), 1))
	dir := filepath.Dir(path)
	clip, cad := liveSoundClip(t, dir, "h264", "aac", 240)
	s := startShow(t, compile(t, path, nil))
	defer s.Stop()
	pushFLV(t, clip, fmt.Sprintf("rtmp://127.0.0.1:%d/live/cam", port))
	stopAfterLoss(t, s, 240)
	if src := sourceOf(s.State.Summary(), "source.one"); strings.Contains(src.LastError, "sound") || src.Live.SoundError != "" {
		t.Errorf("the source says its sound is not on air: last error %q, sound error %q", src.LastError, src.Live.SoundError)
	}
	worst, n := recordedSound(t, dir, cad, 240, audio.Rate/1000)
	t.Logf("%d flashes with their blips; blips start %d samples (%.3f ms) after their flash frame's first sample at most", n, worst, float64(worst)*1000/audio.Rate)
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

// TestRTMPSoundNotAACIsSaid: a publisher whose sound is MP3 (which
// gortmplib reads) or Speex (which it does not) pushes the test pattern
// with its flashes: the pictures go on air all the same, Program's sound
// is silent, and the source says why while it publishes, in its status
// (its last error, its live sound_error and onair status's text) and in
// a source_error event.
func TestRTMPSoundNotAACIsSaid(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"MP3", []string{"-c:v", "copy", "-c:a", "libmp3lame", "-ar", "44100"}},
		{"Speex", []string{"-c:v", "copy", "-c:a", "libspeex", "-ar", "16000", "-ac", "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			port := freeTCPPort(t)
			path := writeShow(t, strings.Replace(liveRTMPShow, "PORT", fmt.Sprint(port), 1))
			dir := filepath.Dir(path)
			clip, _ := liveSoundClip(t, dir, "h264", "aac", 150)
			s := startShow(t, compile(t, path, nil))
			defer s.Stop()
			why := c.name + " sound"
			pushed := make(chan struct{})
			go func() {
				defer close(pushed)
				pushFLV(t, clip, fmt.Sprintf("rtmp://127.0.0.1:%d/live/cam", port), c.args...)
			}()
			testwait.Until(t, generous, "the source's status to say why it is silent", func() bool {
				src := sourceOf(s.State.Summary(), "source.one")
				return strings.Contains(src.LastError, why) && src.Live != nil && strings.Contains(src.Live.SoundError, why)
			})
			if src := sourceOf(s.State.Summary(), "source.one"); !strings.Contains(src.Live.SoundError, "AAC") || src.Live.State != "live" {
				t.Errorf("while the publisher publishes, the source is %s, its sound error %q (it should say what sound it takes)", src.Live.State, src.Live.SoundError)
			}
			var text strings.Builder
			s.State.Summary().WriteText(&text)
			if !strings.Contains(text.String(), "no sound: the publisher sends "+why) {
				t.Errorf("the status text does not say why the source is silent:\n%s", text.String())
			}
			<-pushed
			stopAfterLoss(t, s, 150)
			evs, _, _ := s.State.Events().Since(0, nil)
			told := false
			for _, e := range evs {
				if d, ok := e.Data.(map[string]any); ok && e.Type == "source_error" && d["source"] == "source.one" && strings.Contains(fmt.Sprint(d["error"]), why) {
					told = true
				}
			}
			if !told {
				t.Errorf("no source_error event for source.one saying %q among %d events", why, len(evs))
			}
			frames := readY4M(t, filepath.Join(dir, "pgm.y4m"))
			flashes := 0
			for i, f := range frames {
				if flashed(f) && (i == 0 || !flashed(frames[i-1])) {
					flashes++
				}
			}
			if flashes < 4 {
				t.Errorf("%d flashes in %d recorded frames: the pictures did not go on", flashes, len(frames))
			}
			for i, v := range readWAV(t, filepath.Join(dir, "pgm.wav")) {
				if v != 0 {
					t.Fatalf("Program's sound is not silent: sample %d is %v", i/2, v)
				}
			}
		})
	}
}
