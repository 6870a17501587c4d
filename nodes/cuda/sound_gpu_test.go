package cuda_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
)

// TestNVDECSourcesCarryTheirSound plays an HEVC transport stream with the
// line-up tone in AAC (onair's encoder through ffmpeg), looping, on NVDEC
// as nvdec_file (input routing on the decode loops) and as dec_video fed
// by input_rec (demux routing, a thread per decoder: the seeds' layout),
// recorded: the WAV beside the Y4M holds the tone at −18 dBFS (the median
// frame's peak, within 0.5 dB) and each blip starts on its flash frame's
// first samples, within a millisecond, across the loop's seam: the GPU's
// sources play their files' sound as the CPU's do (media.FileSound).
func TestNVDECSourcesCarryTheirSound(t *testing.T) {
	needGPU(t)
	peer.NeedFFmpeg(t)
	dir := t.TempDir()
	cad, _ := audio.NewCadence(30, 1)
	tone, _ := audio.NewTone(audio.ToneHz, audio.ToneDBFS, cad)
	rate := frame.Rational{Num: 30, Den: 1}
	tp, err := media.NewTestPattern(media.TestPatternConfig{Pattern: media.Bars, Format: frame.NV12, Width: 640, Height: 360, Rate: rate, Tone: &tone})
	if err != nil {
		t.Fatal(err)
	}
	clip := filepath.Join(dir, "clip.ts")
	if err := media.Encode(media.EncodeConfig{Path: clip, Codec: "hevc", Container: "ts", Format: frame.NV12, Width: 640, Height: 360,
		Rate: rate, GOP: 30, Audio: "aac", Tone: &tone}, tp, 60); err != nil {
		t.Fatal(err)
	}
	for _, cv := range []struct{ routing, placement string }{{"input", "decode_loops"}, {"demux", "thread"}} {
		t.Run(cv.routing+"/"+cv.placement, func(t *testing.T) {
			sub := t.TempDir()
			hcl := fmt.Sprintf(`show {
  name       = "sound"
  size       = "640x360"
  frame_rate = "30"
}
canvas {
  input_routing     = %q
  decoder_placement = %q
}
source "hevc_file" "one" {
  path = %q
  loop = true
}
scene "one" {
  layer { source = source.one }
}
bus "program" "pgm" { scene = scene.one }
output "record" "pgm" {
  bus  = bus.pgm
  path = "pgm.y4m"
}
`, cv.routing, cv.placement, clip)
			path := filepath.Join(sub, "show.hcl")
			if err := os.WriteFile(path, []byte(hcl), 0o644); err != nil {
				t.Fatal(err)
			}
			runShow(t, path, nil, func(sum show.Summary) bool { return recorded(t, sum, "output.pgm") >= 150 }) // two loops and a half
			frames := readY4M(t, filepath.Join(sub, "pgm.y4m"))
			samples := readWAV(t, filepath.Join(sub, "pgm.wav"))
			if want := int(cad.Start(int64(len(frames)))) * 2; len(samples) != want {
				t.Errorf("the WAV holds %d values for %d frames, want %d", len(samples), len(frames), want)
			}
			var flashes, blips []int64
			var peaks []float64
			thr := (audio.DBToGain(audio.ToneDBFS) + audio.DBToGain(audio.BlipDBFS)) / 2
			last := int64(-1 << 40)
			for k, f := range frames {
				if flashedGPU(f) && (k == 0 || !flashedGPU(frames[k-1])) {
					flashes = append(flashes, cad.Start(int64(k)))
				}
				var peak float64
				for i := cad.Start(int64(k)); i < cad.Start(int64(k)+1) && int(2*i) < len(samples); i++ {
					v := math.Abs(float64(samples[2*i]))
					peak = max(peak, v)
					if v > thr {
						if i-last > 1600 {
							blips = append(blips, i)
						}
						last = i
					}
				}
				peaks = append(peaks, peak)
			}
			slices.Sort(peaks)
			if db := 20 * math.Log10(peaks[len(peaks)/2]); math.Abs(db-audio.ToneDBFS) > 0.5 {
				t.Errorf("the recorded tone peaks at %.2f dBFS (the median frame's), want %v", db, audio.ToneDBFS)
			}
			if len(flashes) < 4 || len(flashes) != len(blips) {
				t.Fatalf("%d frames: flashes at %v, blips at %v", len(frames), flashes, blips)
			}
			for i := range flashes {
				if d := blips[i] - flashes[i]; d < 0 || d > audio.Rate/1000 {
					t.Errorf("flash %d at sample %d, its blip at %d (%d samples)", i, flashes[i], blips[i], d)
				}
			}
			t.Logf("%d frames, %d flashes, each blip within a millisecond of its flash", len(frames), len(flashes))
		})
	}
}

// flashedGPU says whether a recorded frame shows the test pattern's flash.
func flashedGPU(f *frame.Frame) bool {
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

// readWAV decodes a WAV with ffmpeg (the peer) into interleaved stereo
// float samples at 48 kHz.
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
