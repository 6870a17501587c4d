package media

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
)

// TestFFmpegOutputTagsColour: the ffmpeg output tells ffmpeg the frames'
// range, matrix, primaries and transfer, and ffprobe reads them back from
// the file, for HD (BT.709, limited) and for HDR (BT.2020, PQ, full).
func TestFFmpegOutputTagsColour(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, c := range []struct {
		name                            string
		f                               frame.Format
		colour                          frame.Colour
		codec                           []string
		rng, space, primaries, transfer string
	}{
		{"hd", frame.NV12, frame.BT709, []string{"-c:v", "libx264", "-preset", "ultrafast"}, "tv", "bt709", "bt709", "bt709"},
		{"hdr", frame.P010, frame.Colour{Primaries: "bt2020", Transfer: "pq", Matrix: "bt2020nc", Range: "full"}, []string{"-c:v", "ffv1"}, "pc", "bt2020nc", "bt2020", "smpte2084"},
		{"sd", frame.NV12, frame.Colour{Primaries: "bt601", Transfer: "bt709", Matrix: "bt601", Range: "limited"}, []string{"-c:v", "ffv1"}, "tv", "smpte170m", "smpte170m", "bt709"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.codec[1] == "libx264" && exec.Command("ffmpeg", "-hide_banner", "-h", "encoder=libx264").Run() != nil {
				c.codec = []string{"-c:v", "ffv1"}
			}
			path := filepath.Join(t.TempDir(), "out.mkv")
			o, err := StartFFmpeg(FFmpegConfig{Args: append(c.codec, "-y", path), Format: c.f, Width: 320, Height: 180,
				Rate: frame.Rational{Num: 25, Den: 1}, Colour: c.colour, Queue: 16,
				StallTimeout: 30 * time.Second}) // a busy machine may start ffmpeg slowly: no restart, one file
			if err != nil {
				t.Fatal(err)
			}
			pool, _ := frame.NewPool(c.f, 320, 180, 0)
			tp, _ := NewTestPattern(TestPatternConfig{Pattern: Ramp, Format: c.f, Width: 320, Height: 180, Rate: frame.Rational{Num: 25, Den: 1}, Colour: c.colour})
			for i := 0; i < 10; i++ {
				fr, _ := pool.Get()
				tp.Next(fr)
				o.Write(fr)
				fr.Release()
			}
			if err := o.Close(); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
				"stream=color_range,color_space,color_primaries,color_transfer", "-of", "json", path).Output()
			if err != nil {
				var stderr []byte
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = ee.Stderr
				}
				t.Fatalf("ffprobe %s: %v %s (ffmpeg output stats %+v)", path, err, stderr, o.Stats())
			}
			var probe struct {
				Streams []struct {
					Range     string `json:"color_range"`
					Space     string `json:"color_space"`
					Primaries string `json:"color_primaries"`
					Transfer  string `json:"color_transfer"`
				}
			}
			if err := json.Unmarshal(out, &probe); err != nil || len(probe.Streams) != 1 {
				t.Fatalf("ffprobe's answer: %v %s", err, out)
			}
			s := probe.Streams[0]
			if s.Range != c.rng || s.Space != c.space || s.Primaries != c.primaries || s.Transfer != c.transfer {
				t.Errorf("ffprobe reads range %q, matrix %q, primaries %q, transfer %q; want %q, %q, %q, %q",
					s.Range, s.Space, s.Primaries, s.Transfer, c.rng, c.space, c.primaries, c.transfer)
			}
		})
	}
	if _, err := ColourArgs(frame.Colour{Primaries: "bt709", Transfer: "gamma28", Matrix: "bt709", Range: "limited"}); err == nil {
		t.Error("a transfer ffmpeg has no name for was accepted")
	}
}
