package media

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
)

// A live transport stream's sound (AAC, MP2), tapped from the bytes its
// pictures are decoded from, comes out with each picture on the pictures'
// clock: the blips start on the first samples of the frames that flash
// (within a millisecond), the tone keeps its level, and every frame of the
// stream gets its cadence's samples.
func TestLiveAudioInStepWithThePictures(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, codec := range []string{"aac", "mp2"} {
		t.Run(codec, func(t *testing.T) {
			path, tone := toneClip(t, codec)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			aud, rd := TapAudio(f, path, tone.Cadence)
			defer aud.Close()
			dec, err := OpenDecoder(DecodeConfig{Path: path, Live: rd, Format: frame.NV12, Width: 160, Height: 96})
			if err != nil {
				t.Fatal(err)
			}
			defer dec.Close()
			if err := aud.Start("", dec.Start()); err != nil {
				t.Fatal(err)
			}
			q := NewSoundQueue[*frame.Frame](aud, 0)
			var flashes []int64
			var samples []float32
			var k int64
			take := func(f *frame.Frame, b []float32) {
				if len(b) != tone.Cadence.Samples(k)*audio.Channels {
					t.Fatalf("frame %d: %d samples", k, len(b))
				}
				if flashedFrame(f) {
					flashes = append(flashes, tone.Cadence.Start(k))
				}
				samples = append(samples, b...)
				k++
			}
			for {
				f, _ := frame.New(frame.NV12, 160, 96)
				if err := dec.Next(f); err != nil {
					break
				}
				q.Push(f)
				for {
					f, b, ok := q.Pop()
					if !ok {
						break
					}
					take(f, b)
				}
			}
			q.Flush(take)
			if err := aud.Err(); err != nil {
				t.Fatal(err)
			}
			if k < 70 {
				t.Fatalf("%d frames of the stream's 75", k)
			}
			thr := (audio.DBToGain(audio.ToneDBFS) + audio.DBToGain(audio.BlipDBFS)) / 2
			var blips []int64
			last := int64(-1 << 40)
			var peaks []float64 // each frame's, but for the blips'
			for n := range k {
				var peak float64
				for i := tone.Cadence.Start(n); i < tone.Cadence.Start(n+1); i++ {
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
				t.Errorf("the tone peaks at %.2f dBFS (the median frame's), want %v", db, audio.ToneDBFS)
			}
			if len(flashes) < 2 || len(blips) != len(flashes) {
				t.Fatalf("%d frames: flashes at %v, blips at %v", k, flashes, blips)
			}
			for i := range flashes {
				if d := blips[i] - flashes[i]; d < 0 || d > audio.Rate/1000 {
					t.Errorf("flash %d at sample %d, its blip at %d", i, flashes[i], blips[i])
				}
			}
		})
	}
}

// flashedFrame says whether a frame shows the test pattern's flash.
func flashedFrame(f *frame.Frame) bool {
	cx := int((FlashBox[0] + FlashBox[2]/2) * float64(f.Width))
	cy := int((FlashBox[1] + FlashBox[3]/2) * float64(f.Height))
	var sum int
	for y := cy - 2; y < cy+2; y++ {
		for x := cx - 2; x < cx+2; x++ {
			sum += int(f.Data[0][y*f.Pitch[0]+x])
		}
	}
	return sum/16 > 220
}

// A live stream without sound is silent, with no error and no ffmpeg for
// it: its pictures go on at once, each with no samples.
func TestLiveAudioOfAStreamWithoutSound(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, path := range []string{filepath.Join("es", "testdata", "h264.ts")} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cad, _ := audio.NewCadence(30, 1)
		aud, rd := TapAudio(f, path, cad)
		dec, err := OpenDecoder(DecodeConfig{Path: path, Live: rd, Format: frame.NV12, Width: 640, Height: 360})
		if err != nil {
			t.Fatal(err)
		}
		if err := aud.Start("", dec.Start()); err != nil {
			t.Fatal(err)
		}
		q := NewSoundQueue[*frame.Frame](aud, 0)
		var n int
		for {
			fr, _ := frame.New(frame.NV12, 640, 360)
			if err := dec.Next(fr); err != nil {
				break
			}
			q.Push(fr)
			for {
				_, b, ok := q.Pop()
				if !ok {
					break
				}
				if b != nil && slices.ContainsFunc(b, func(v float32) bool { return v != 0 }) {
					t.Fatalf("%s: picture %d carries sound", path, n)
				}
				n++
			}
		}
		q.Flush(func(*frame.Frame, []float32) { n++ })
		if n < 30 {
			t.Errorf("%s: %d pictures came out", path, n)
		}
		if err := aud.Err(); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		aud.Close()
		dec.Close()
		f.Close()
	}
}
