package media_test

import (
	"bytes"
	"github.com/onairhq/onair/internal/peer"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
	. "github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/mediatest"
)

func TestRecordHeader(t *testing.T) {
	for _, tc := range []struct {
		f    frame.Format
		rate frame.Rational
		want string
	}{
		{frame.NV12, frame.Rational{Num: 30, Den: 1}, "YUV4MPEG2 W64 H48 F30:1 Ip A1:1 C420jpeg\n"},
		{frame.P010, frame.Rational{Num: 30000, Den: 1001}, "YUV4MPEG2 W64 H48 F30000:1001 Ip A1:1 C420p10 XYSCSS=420P10\n"},
	} {
		var buf bytes.Buffer
		r := NewRecord(&buf, tc.f, 64, 48, tc.rate)
		fr, _ := frame.New(tc.f, 64, 48)
		r.Write(fr)
		r.Close()
		if !strings.HasPrefix(buf.String(), tc.want+"FRAME\n") {
			t.Errorf("%v: stream starts %q, want %q", tc.f, buf.String()[:60], tc.want)
		}
		if want := len(tc.want) + 6 + tc.f.Size(64, 48); buf.Len() != want {
			t.Errorf("%v: %d bytes, want %d", tc.f, buf.Len(), want)
		}
	}
}

// TestY4MRoundTrip writes frames with Record and reads them back with
// Y4MReader: the pixels come back exactly, and the reader loops.
func TestY4MRoundTrip(t *testing.T) {
	for _, f := range []frame.Format{frame.NV12, frame.P010} {
		path := filepath.Join(t.TempDir(), "rt.y4m")
		frames, err := mediatest.RecordPattern(path, f, Ramp, 96, 64, 4, 3)
		if err != nil {
			t.Fatal(err)
		}
		y, err := OpenY4M(path, "clip", true)
		if err != nil {
			t.Fatal(err)
		}
		if y.Format() != f || y.Width() != 96 || y.Height() != 64 || y.Rate() != (frame.Rational{Num: 30, Den: 1}) {
			t.Errorf("%v: header read as %v %dx%d %v", f, y.Format(), y.Width(), y.Height(), y.Rate())
		}
		got, _ := frame.New(f, 96, 64)
		for n := 0; n < 7; n++ {
			if err := y.Next(got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), frames[n%3].Bytes()) {
				t.Errorf("%v: frame %d differs from what was written", f, n)
			}
			if got.PTS != int64(n) || got.Source != "clip" {
				t.Errorf("%v: frame %d PTS %d source %q", f, n, got.PTS, got.Source)
			}
		}
		y.Close()
		y, _ = OpenY4M(path, "clip", false)
		for n := 0; n < 3; n++ {
			y.Next(got)
		}
		if err := y.Next(got); err != io.EOF {
			t.Errorf("%v: after the last frame without loop: %v, want io.EOF", f, err)
		}
		y.Close()
	}
}

func TestY4MReaderBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"not y4m", "RIFF....\n", "YUV4MPEG2"},
		{"no header line", "YUV4MPEG2 W64", "header"},
		{"interlaced", "YUV4MPEG2 W64 H48 F25:1 It C420jpeg\n", "interlaced"},
		{"422", "YUV4MPEG2 W64 H48 F25:1 Ip C422\n", "C422"},
		{"odd size", "YUV4MPEG2 W63 H48 F25:1\n", "even"},
		{"bad rate", "YUV4MPEG2 W64 H48 F25:0\n", "frame rate"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".y4m")
		os.WriteFile(path, []byte(tc.content), 0o644)
		if _, err := OpenY4M(path, "x", false); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.name, err, tc.want)
		}
	}
	// A file cut inside a frame.
	path := filepath.Join(dir, "cut.y4m")
	os.WriteFile(path, []byte("YUV4MPEG2 W64 H48 F25:1\nFRAME\n"+strings.Repeat("x", 100)), 0o644)
	y, err := OpenY4M(path, "x", false)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	fr, _ := frame.New(frame.NV12, 64, 48)
	if err := y.Next(fr); err == nil || !strings.Contains(err.Error(), "ends inside") {
		t.Errorf("cut frame: %v", err)
	}
}

// TestFFprobeReadsRecord asserts that ffprobe reads what Record writes with
// the right size, rate, pixel format and frame count.
func TestFFprobeReadsRecord(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, tc := range []struct {
		f    frame.Format
		rate frame.Rational
		pix  string
	}{
		{frame.NV12, frame.Rational{Num: 30, Den: 1}, "yuv420p"},
		{frame.P010, frame.Rational{Num: 30000, Den: 1001}, "yuv420p10le"},
	} {
		path := filepath.Join(t.TempDir(), "rec.y4m")
		rec, err := CreateRecord(path, tc.f, 320, 180, tc.rate)
		if err != nil {
			t.Fatal(err)
		}
		tp, _ := NewTestPattern(TestPatternConfig{Pattern: Bars, Format: tc.f, Width: 320, Height: 180, Rate: tc.rate})
		fr, _ := frame.New(tc.f, 320, 180)
		for i := 0; i < 17; i++ {
			tp.Next(fr)
			if err := rec.Write(fr); err != nil {
				t.Fatal(err)
			}
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
			"-show_entries", "stream=width,height,r_frame_rate,pix_fmt,nb_read_frames", "-of", "default=nw=1", path).CombinedOutput()
		if err != nil {
			t.Fatalf("ffprobe: %v\n%s", err, out)
		}
		want := []string{"width=320", "height=180", "pix_fmt=" + tc.pix, "r_frame_rate=" + tc.rate.String(), "nb_read_frames=17"}
		if tc.rate.Den == 1 {
			want[3] = "r_frame_rate=30/1"
		}
		for _, w := range want {
			if !strings.Contains(string(out), w+"\n") {
				t.Errorf("%v: ffprobe says\n%s\nwant %s", tc.f, out, w)
			}
		}
	}
}

func TestCreateRecordErrors(t *testing.T) {
	if _, err := CreateRecord("/nonexistent/dir/x.y4m", frame.NV12, 64, 48, frame.Rational{Num: 30, Den: 1}); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("unwritable path: %v", err)
	}
	if _, err := CreateRecord(filepath.Join(t.TempDir(), "x.y4m"), frame.NV12, 64, 48, frame.Rational{}); err == nil || !strings.Contains(err.Error(), "frame rate") {
		t.Errorf("zero rate: %v", err)
	}
	rec, _ := CreateRecord(filepath.Join(t.TempDir(), "x.y4m"), frame.NV12, 64, 48, frame.Rational{Num: 30, Den: 1})
	defer rec.Close()
	other, _ := frame.New(frame.NV12, 32, 32)
	if err := rec.Write(other); err == nil || !strings.Contains(err.Error(), "32x32") {
		t.Errorf("wrong size: %v", err)
	}
}

// TestY4MReaderReadsFFmpegsY4M reads a Y4M that ffmpeg wrote and compares
// every frame with ffmpeg's own nv12/p010le conversion of that file.
func TestY4MReaderReadsFFmpegsY4M(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, tc := range []struct {
		f           frame.Format
		y4mPix, raw string
	}{
		{frame.NV12, "yuv420p", "nv12"},
		{frame.P010, "yuv420p10le", "p010le"},
	} {
		dir := t.TempDir()
		y4m, raw := filepath.Join(dir, "src.y4m"), filepath.Join(dir, "src.raw")
		src := []string{"-v", "error", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=25", "-frames:v", "5"}
		for _, args := range [][]string{
			append(append([]string{}, src...), "-pix_fmt", tc.y4mPix, "-strict", "-1", y4m),
			{"-v", "error", "-i", y4m, "-pix_fmt", tc.raw, "-f", "rawvideo", raw},
		} {
			if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
				t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
			}
		}
		want, _ := os.ReadFile(raw)
		y, err := OpenY4M(y4m, "ff", false)
		if err != nil {
			t.Fatal(err)
		}
		if y.Format() != tc.f || y.Rate() != (frame.Rational{Num: 25, Den: 1}) {
			t.Errorf("%v: read as %v at %v", tc.f, y.Format(), y.Rate())
		}
		fr, _ := frame.New(tc.f, 320, 180)
		size := tc.f.Size(320, 180)
		n := 0
		for ; ; n++ {
			err := y.Next(fr)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fr.Bytes(), want[n*size:(n+1)*size]) {
				t.Errorf("%v: frame %d differs from ffmpeg's %s", tc.f, n, tc.raw)
			}
		}
		y.Close()
		if n != 5 {
			t.Errorf("%v: read %d frames, want 5", tc.f, n)
		}
	}
}

// TestY4MColourRange: a recording tagged with its range reads back with it
// here and in ffprobe (tv for limited, pc for full), and ffmpeg's own
// tagged Y4M reads back with the range ffmpeg wrote.
func TestY4MColourRange(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, tc := range []struct{ rng, probe string }{{"limited", "tv"}, {"full", "pc"}} {
		path := filepath.Join(t.TempDir(), "rec.y4m")
		rec, err := OpenRecord(path, frame.NV12, 64, 48, frame.Rational{Num: 25, Den: 1}, RecordOptions{Range: tc.rng})
		if err != nil {
			t.Fatal(err)
		}
		fr, _ := frame.New(frame.NV12, 64, 48)
		if err := rec.Write(fr); err != nil {
			t.Fatal(err)
		}
		rec.Close()
		out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=color_range", "-of", "csv=p=0", path).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != tc.probe {
			t.Errorf("%s: ffprobe reads the range as %q (%v), want %s", tc.rng, out, err, tc.probe)
		}
		y, err := OpenY4M(path, "r", false)
		if err != nil {
			t.Fatal(err)
		}
		if err := y.Next(fr); err != nil || fr.Colour.Range != tc.rng {
			t.Errorf("%s: read back as %q (%v)", tc.rng, fr.Colour.Range, err)
		}
		y.Close()
		// ffmpeg's own tag.
		ff := filepath.Join(t.TempDir(), "ff.y4m")
		if out, err := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=s=64x48:r=25", "-frames:v", "1", "-pix_fmt", "yuv420p", "-color_range", tc.probe, "-strict", "-1", ff).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v\n%s", err, out)
		}
		if y, err = OpenY4M(ff, "ff", false); err != nil {
			t.Fatal(err)
		}
		if err := y.Next(fr); err != nil || fr.Colour.Range != tc.rng {
			t.Errorf("ffmpeg's %s Y4M reads back as %q (%v)", tc.rng, fr.Colour.Range, err)
		}
		y.Close()
	}
}

// BenchmarkY4MWrite: the record output's per-frame work, a 1080p NV12
// frame written to a Y4M stream (issue 29: nothing on the per-frame path
// allocates).
func BenchmarkY4MWrite(b *testing.B) {
	fr, _ := frame.New(frame.NV12, 1920, 1080)
	r := NewRecord(io.Discard, frame.NV12, 1920, 1080, frame.Rational{Num: 30, Den: 1})
	if err := r.Write(fr); err != nil { // the header
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(fr.Bytes())))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := r.Write(fr); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(testing.AllocsPerRun(10, func() { r.Write(fr) }), "allocs/frame")
}
