package media

import (
	"errors"
	"io"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/onairhq/onair/audio"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
)

// An ffmpeg output with Audio gets each frame's sound as input 1, so its
// args can encode it: a TS with AAC made from a flash-and-blip pattern
// carries its blips on the flash frames' first samples, as ffmpeg decodes
// it again.
func TestFFmpegOutputEncodesTheSound(t *testing.T) {
	peer.NeedFFmpeg(t)
	rate := frame.Rational{Num: 30, Den: 1}
	cad, _ := audio.NewCadence(30, 1)
	tone, _ := audio.NewTone(audio.ToneHz, audio.ToneDBFS, cad)
	path := filepath.Join(t.TempDir(), "out.ts")
	o, err := StartFFmpeg(FFmpegConfig{Args: []string{"-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-c:a", "aac", "-f", "mpegts", "-y", path},
		Format: frame.NV12, Width: 160, Height: 90, Rate: rate, Queue: 64, StallTimeout: 20 * time.Second, Audio: true})
	if err != nil {
		t.Fatal(err)
	}
	tp, _ := NewTestPattern(TestPatternConfig{Pattern: Bars, Format: frame.NV12, Width: 160, Height: 90, Rate: rate, Tone: &tone})
	const frames = 61
	for range frames {
		f, _ := frame.New(frame.NV12, 160, 90)
		if err := tp.Next(f); err != nil {
			t.Fatal(err)
		}
		if err := o.Write(f); err != nil {
			t.Fatal(err)
		}
		f.Release()
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if st := o.Stats(); st.Written != frames || st.Dropped != 0 {
		t.Fatalf("ffmpeg took %d frames and dropped %d of %d", st.Written, st.Dropped, frames)
	}
	info, ok, err := ProbeAudio("", path)
	if err != nil || !ok || info.Codec != "aac" {
		t.Fatalf("the output's sound: %+v, %v, %v", info, ok, err)
	}
	dec, err := OpenAudio("", path, info)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	thr := (audio.DBToGain(audio.ToneDBFS) + audio.DBToGain(audio.BlipDBFS)) / 2
	var blips []int64
	last, s := int64(-1<<40), int64(0)
	for {
		b, err := dec.Read(1600)
		for i := 0; i < len(b)/2; i++ {
			if math.Abs(float64(b[2*i])) > thr {
				if s+int64(i)-last > 1600 {
					blips = append(blips, s+int64(i))
				}
				last = s + int64(i)
			}
		}
		s += int64(len(b) / 2)
		if errors.Is(err, io.EOF) {
			break
		}
	}
	want := []int64{cad.Start(0), cad.Start(30), cad.Start(60)}
	if len(blips) != len(want) {
		t.Fatalf("blips at %v, want %v", blips, want)
	}
	for i := range want {
		if d := blips[i] - want[i]; d < 0 || d > 48 {
			t.Errorf("blip %d at %d, its flash frame starts at %d", i, blips[i], want[i])
		}
	}
}
