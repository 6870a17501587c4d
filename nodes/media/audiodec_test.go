package media

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
)

// toneClip encodes a two-second 30 fps HEVC transport stream whose sound
// track (codec) is the line-up tone, as onair media makes them.
func toneClip(t testing.TB, codec string) (string, audio.Tone) {
	t.Helper()
	cad, _ := audio.NewCadence(30, 1)
	tone, _ := audio.NewTone(audio.ToneHz, audio.ToneDBFS, cad)
	rate := frame.Rational{Num: 30, Den: 1}
	tp, err := NewTestPattern(TestPatternConfig{Pattern: Bars, Format: frame.NV12, Width: 160, Height: 96, Rate: rate, Tone: &tone})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "clip-"+codec+".ts")
	cfg := EncodeConfig{Path: path, Codec: "hevc", Container: "ts", Format: frame.NV12, Width: 160, Height: 96, Rate: rate, GOP: 30, Audio: codec, Tone: &tone}
	if err := Encode(cfg, tp, 75); err != nil {
		t.Fatal(err)
	}
	return path, tone
}

// A transport stream's AAC or MP2 track (made by ffmpeg here) decodes to
// 48 kHz stereo aligned to its pictures: each blip starts on the first
// samples of the frame that flashes (within a millisecond: the codec's own
// smearing of the onset), and the tone's level survives the codec.
func TestTSAudioDecodesAlignedToItsPictures(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, codec := range []string{"aac", "mp2"} {
		t.Run(codec, func(t *testing.T) {
			path, tone := toneClip(t, codec)
			info, ok, err := ProbeAudio("", path)
			if err != nil || !ok {
				t.Fatalf("probe: %v, %v", ok, err)
			}
			if info.Codec != codec || info.Channels != 2 || info.SampleRate != 48000 {
				t.Errorf("probe: %+v", info)
			}
			dec, err := OpenAudio("", path, info)
			if err != nil {
				t.Fatal(err)
			}
			var samples []float32
			for n := int64(0); ; n++ {
				b, err := dec.Read(tone.Cadence.Samples(n))
				if len(b) != tone.Cadence.Samples(n)*audio.Channels {
					t.Fatalf("frame %d: %d values", n, len(b))
				}
				if errors.Is(err, io.EOF) {
					break
				}
				samples = append(samples, b...)
				if n > 1000 {
					t.Fatal("the track never ended")
				}
			}
			if err := dec.Close(); err != nil {
				t.Fatal(err)
			}
			thr := (audio.DBToGain(audio.ToneDBFS) + audio.DBToGain(audio.BlipDBFS)) / 2
			var blips []int64
			last := int64(-1 << 40)
			var peak float64
			for i := int64(0); i < int64(len(samples)/2); i++ {
				v := math.Abs(float64(samples[2*i]))
				if v > thr {
					if i-last > 1600 {
						blips = append(blips, i)
					}
					last = i
				}
				if i >= tone.Cadence.Start(10) && i < tone.Cadence.Start(20) { // between blips
					peak = math.Max(peak, v)
				}
			}
			want := []int64{tone.Cadence.Start(0), tone.Cadence.Start(30), tone.Cadence.Start(60)}
			if len(blips) != len(want) {
				t.Fatalf("blips at %v, want them at the flash frames' first samples %v", blips, want)
			}
			for i := range want {
				if d := blips[i] - want[i]; d < -48 || d > 48 {
					t.Errorf("blip %d at sample %d, its frame starts at %d: %d samples off", i, blips[i], want[i], d)
				}
			}
			if lvl := 20 * math.Log10(peak); math.Abs(lvl-audio.ToneDBFS) > 0.5 {
				t.Errorf("the tone's peak reads %.2f dBFS after %s, want %v", lvl, codec, audio.ToneDBFS)
			}
			t.Logf("%s: %d sample frames, blips at %v (frames start at %v), offset %d", codec, len(samples)/2, blips, want, info.Offset)
		})
	}
}

// A file with no sound track says so; a track onair cannot use is refused
// saying why; one at another sample rate is resampled.
func TestProbeAudioRefusesWhatItCannotUse(t *testing.T) {
	peer.NeedFFmpeg(t)
	dir := t.TempDir()
	silent := filepath.Join(dir, "silent.ts")
	if out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=s=64x64:d=0.5", "-c:v", "libx264", "-f", "mpegts", silent).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, ok, err := ProbeAudio("", silent); ok || err != nil {
		t.Errorf("a file with no audio: %v, %v", ok, err)
	}
	many := filepath.Join(dir, "many.mka")
	if out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=d=0.5", "-af", "aformat=channel_layouts=hexadecagonal", "-c:a", "pcm_s16le", many).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if _, ok, err := ProbeAudio("", many); !ok || err == nil || !strings.Contains(err.Error(), "16 channels") {
		t.Errorf("a 16-channel track: %v, %v", ok, err)
	}
	// A 44.1 kHz track is resampled to 48 kHz: two seconds of it are two
	// seconds of samples.
	cd := filepath.Join(dir, "cd.ts")
	if out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=f=1000:d=2:sample_rate=44100", "-ac", "2", "-c:a", "mp2", "-f", "mpegts", cd).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	info, ok, err := ProbeAudio("", cd)
	if !ok || err != nil || info.SampleRate != 44100 {
		t.Fatalf("a 44.1 kHz track: %+v %v %v", info, ok, err)
	}
	dec, err := OpenAudio("", cd, info)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for {
		b, err := dec.Read(1600)
		if errors.Is(err, io.EOF) {
			break
		}
		n += len(b) / 2
	}
	dec.Close()
	if n < 2*48000-1600 || n > 2*48000+1600 {
		t.Errorf("two seconds at 44.1 kHz decode to %d samples at 48 kHz", n)
	}
	if _, _, err := ProbeAudio("", filepath.Join(dir, "none.ts")); err == nil {
		t.Error("a missing file was probed")
	}
}

// The decoder hands out ffmpeg's own samples, bit for bit (read straight
// into each block), in blocks of any length: the last block holds what the
// track had left and silence after it.
func TestAudioDecoderReadsFFmpegsSamples(t *testing.T) {
	peer.NeedFFmpeg(t)
	path, _ := toneClip(t, "aac")
	info, ok, err := ProbeAudio("", path)
	if err != nil || !ok {
		t.Fatalf("probe: %v, %v", ok, err)
	}
	info.Offset = 0 // no lead or lag to make up: the track as ffmpeg decodes it
	raw, err := exec.Command("ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-i", path, "-map", "0:a:0", "-vn",
		"-ac", "2", "-ar", "48000", "-f", "f32le", "pipe:1").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, len(raw)/4)
	for i := range want {
		want[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	dec, err := OpenAudio("", path, info)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var got []float32
	for n := 0; ; n++ {
		b, err := dec.Read(1601 + n%3)
		got = append(got, b...)
		if errors.Is(err, io.EOF) {
			break
		}
		if n > 1000 {
			t.Fatal("the track never ended")
		}
	}
	if len(got) < len(want) || len(want) == 0 {
		t.Fatalf("%d samples read, ffmpeg decodes %d", len(got), len(want))
	}
	for i, v := range got {
		if i < len(want) {
			if math.Float32bits(v) != math.Float32bits(want[i]) {
				t.Fatalf("sample %d reads %v, ffmpeg's %v", i, v, want[i])
			}
		} else if v != 0 {
			t.Fatalf("sample %d, after the track's end, reads %v", i, v)
		}
	}
}
