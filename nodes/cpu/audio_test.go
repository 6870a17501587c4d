package cpu

import (
	"encoding/binary"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/media"
)

const toneShow = `
show {
  name       = "sound"
  size       = "320x180"
  frame_rate = "RATE"
}
source "test_pattern" "one" {
  pattern = "bars"
}
source "test_pattern" "two" {
  pattern = "bars"
}
scene "one" {
  layer {
    source = source.one
  }
}
scene "two" {
  layer {
    source = source.two
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

// readWAV decodes a WAV file with ffmpeg (the peer) into interleaved
// stereo float samples at 48 kHz.
func readWAV(t *testing.T, path string) []float32 {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-i", path, "-f", "f32le", "-ac", "2", "-ar", "48000", "-").Output()
	if err != nil {
		t.Fatalf("ffmpeg reading %s: %v", path, err)
	}
	s := make([]float32, len(out)/4)
	for i := range s {
		s[i] = math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
	}
	return s
}

// flashed says whether a recorded frame shows the test pattern's flash:
// the middle of its flash box at peak white (bars never go above 75 %).
func flashed(f *frame.Frame) bool {
	cx := int((media.FlashBox[0] + media.FlashBox[2]/2) * float64(f.Width))
	cy := int((media.FlashBox[1] + media.FlashBox[3]/2) * float64(f.Height))
	var sum int
	for y := cy - 4; y < cy+4; y++ {
		for x := cx - 4; x < cx+4; x++ {
			sum += int(f.Data[0][y*f.Pitch[0]+x])
		}
	}
	return sum/64 > 220
}

// TestLipSyncThroughARecording records a bus of a flash-and-blip test
// pattern on the CPU backend and finds, in the Y4M, every frame that
// flashes and, in the WAV beside it, every blip (the first sample louder
// than the line-up tone can be): each blip starts on its flash frame's
// first samples, within a millisecond (the mixer's 2-sample slack and the
// first quarter cycle of the tone). At 30000/1001 too, where the ticks'
// sample counts vary.
func TestLipSyncThroughARecording(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, rate := range []string{"30", "30000/1001"} {
		t.Run(strings.ReplaceAll(rate, "/", "_"), func(t *testing.T) {
			path := writeShow(t, strings.Replace(toneShow, "RATE", rate, 1))
			p := compile(t, path, nil)
			s := startShow(t, p)
			waitShow(t, s, "100 ticks", ticksAtLeast("bus.pgm", 100))
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Dir(path)
			frames := readY4M(t, filepath.Join(dir, "pgm.y4m"))
			samples := readWAV(t, filepath.Join(dir, "pgm.wav"))
			num, den := int64(30), int64(1)
			if rate != "30" {
				num, den = 30000, 1001
			}
			cad, _ := audio.NewCadence(num, den)
			// The recording's first frame is the bus's first tick: its
			// number is the tick's (PTS), which the cadence counts from.
			k0 := frames[0].PTS
			var flashes, blips []int64 // in samples from the recording's start
			for i, f := range frames {
				// A flash frame the bus repeated (a busy machine) is one flash.
				if flashed(f) && (i == 0 || !flashed(frames[i-1])) {
					flashes = append(flashes, cad.Start(k0+int64(i))-cad.Start(k0))
				}
			}
			threshold := float32((audio.DBToGain(audio.ToneDBFS) + audio.DBToGain(audio.BlipDBFS)) / 2)
			last := int64(-1 << 40) // the last loud sample
			for i := int64(0); i < int64(len(samples)/2); i++ {
				if math.Abs(float64(samples[2*i])) <= float64(threshold) {
					continue
				}
				// A blip starts with a loud sample after a tick of none.
				if i-last > 1600 {
					blips = append(blips, i)
				}
				last = i
			}
			wantSamples := cad.Start(k0+int64(len(frames))) - cad.Start(k0)
			if got := int64(len(samples) / 2); got != wantSamples {
				t.Errorf("the WAV holds %d sample frames for %d video frames; the cadence says %d", got, len(frames), wantSamples)
			}
			if len(flashes) < 2 || len(flashes) != len(blips) {
				t.Fatalf("%d flashes at %v and %d blips at %v in %d frames", len(flashes), flashes, len(blips), blips, len(frames))
			}
			var worst int64
			for i := range flashes {
				d := blips[i] - flashes[i]
				if d < 0 || d > audio.Rate/1000 {
					t.Errorf("flash %d at sample %d, its blip at %d: %d samples (%.2f ms) apart", i, flashes[i], blips[i], d, float64(d)*1000/audio.Rate)
				}
				worst = max(worst, d)
			}
			t.Logf("%s: %d flashes in %d frames; blips start %d samples (%.3f ms) after their flash frame's first sample at most", rate, len(flashes), len(frames), worst, float64(worst)*1000/audio.Rate)
		})
	}
}

