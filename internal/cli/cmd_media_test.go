package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/media"
)

func TestMediaWritesRawAndY4M(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args  []string
		file  string
		bytes int
	}{
		{[]string{"-size", "640x360", "-rate", "30"}, "a.nv12", 60 * 640 * 360 * 3 / 2},
		{[]string{"-size", "320x180", "-frames", "5", "-format", "p010", "-pattern", "ramp"}, "b.p010", 5 * 320 * 180 * 3},
		{[]string{"-size", "320x180", "-rate", "25", "-pattern", "checker"}, "c.y4m", -1},
	} {
		path := filepath.Join(dir, tc.file)
		rc, out, errs := runCLI(t, append(append([]string{"media"}, tc.args...), "-o", path)...)
		if rc != 0 {
			t.Fatalf("media %v: rc %d\n%s%s", tc.args, rc, out, errs)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if tc.bytes >= 0 && st.Size() != int64(tc.bytes) {
			t.Errorf("%s: %d bytes, want %d", tc.file, st.Size(), tc.bytes)
		}
	}
	// The raw clip reads back through raw_file with its frame numbers.
	r, err := media.OpenRawFile(media.RawFileConfig{Path: filepath.Join(dir, "a.nv12"), Format: frame.NV12, Width: 640, Height: 360, Rate: frame.Rational{Num: 30, Den: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fr, _ := frame.New(frame.NV12, 640, 360)
	for i := 0; i < 60; i++ {
		if err := r.Next(fr); err != nil {
			t.Fatal(err)
		}
		if id, n, ok := media.ReadStamp(fr, frame.Rect{W: 640, H: 360}); !ok || id != 1 || n != uint32(i) {
			t.Fatalf("frame %d: stamp %d/%d ok %v", i, id, n, ok)
		}
	}
	y, err := media.OpenY4M(filepath.Join(dir, "c.y4m"), "c", false)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if y.Rate() != (frame.Rational{Num: 25, Den: 1}) || y.Width() != 320 {
		t.Errorf("y4m header: %v %d", y.Rate(), y.Width())
	}
}

// TestMediaIsFast: making a clip costs well under a second of CPU. The
// process's CPU time is what is measured, not the wall clock, which a
// machine busy with other work stretches at will.
func TestMediaIsFast(t *testing.T) {
	dir := t.TempDir()
	start, cpu0 := time.Now(), cpuTime(t)
	for i := 0; i < 4; i++ {
		if rc, _, errs := runCLI(t, "media", "-o", filepath.Join(dir, "clip"+string(rune('0'+i))+".nv12")); rc != 0 {
			t.Fatal(errs)
		}
	}
	cpu := cpuTime(t) - cpu0
	t.Logf("four 640x360 two-second clips in %v of CPU (%v of wall time)", cpu, time.Since(start))
	if cpu > 2*time.Second {
		t.Errorf("four clips took %v of CPU, want well under a second each", cpu)
	}
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestMediaBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "-o FILE is required"},
		{[]string{"-o", "x.nv12", "-size", "641x360"}, "even"},
		{[]string{"-o", "x.nv12", "-rate", "fast"}, "not a frame rate"},
		// No rate a show would refuse: 691 GB for two seconds at a million fps.
		{[]string{"-o", "x.nv12", "-rate", "1000000"}, `-rate "1000000": a frame rate is between 1 and 1000 frames per second`},
		{[]string{"-o", "x.nv12", "-rate", "1/2"}, "between 1 and 1000"},
		{[]string{"-o", "x.nv12", "-format", "rgb"}, "nv12 or p010"},
		{[]string{"-o", "x.nv12", "-pattern", "zebra"}, "bars, ramp"},
		{[]string{"-o", "x.nv12", "-kind", "mp4"}, "raw, y4m, hevc, h264 or ts"},
		// No size a show would refuse: 15 GB for one 100000x100000 frame.
		{[]string{"-o", "x.nv12", "-size", "100000x100000", "-frames", "1"}, "between 2 and 16384"},
		{[]string{"-o", "x.nv12", "-size", "16386x16384", "-frames", "1"}, "between 2 and 16384"},
		{[]string{"-o", "x.nv12", "-size", "0x2"}, "between 2 and 16384"},
		// The extension says the kind of file; nothing else is written.
		{[]string{"-o", "x.nv12", "-format", "p010"}, "-format p010 disagrees with -o"},
		{[]string{"-o", "x.mp4"}, "-o x.mp4: the name must end in .nv12, .p010, .yuv or .raw (raw frames back to back), .y4m (Y4M), .hevc, .h265, .264, .h264 or .ts (encoded video)"},
		// Encoded files: the name, -kind and -codec agree; H.264 is 8-bit.
		{[]string{"-o", "x.hevc", "-codec", "h264"}, "-codec h264 disagrees with -o x.hevc"},
		{[]string{"-o", "x.264", "-format", "p010"}, "H.264 clips are 8-bit nv12"},
		{[]string{"-o", "x.ts", "-codec", "vp9"}, "-codec \"vp9\": use hevc or h264"},
		{[]string{"-o", "x.nv12", "-codec", "hevc"}, "a raw file is not encoded"},
		{[]string{"-o", "x.nv12", "-gop", "10"}, "-gop, -bitrate and -noise are for encoded files"},
		{[]string{"-o", "x.hevc", "-gop", "-1"}, "-gop -1: must be positive"},
		{[]string{"-o", "x.h265", "-kind", "ts"}, "-kind ts disagrees with -o x.h265"},
		{[]string{"-o", "x"}, "the name must end in"},
		{[]string{"-o", "x.nv12", "-kind", "y4m"}, "-kind y4m disagrees with -o x.nv12"},
		{[]string{"-o", "x.y4m", "-kind", "raw"}, "-kind raw disagrees with -o x.y4m"},
	} {
		dir := t.TempDir()
		args := append([]string(nil), tc.args...)
		for i := range args {
			if i > 0 && args[i-1] == "-o" {
				args[i] = filepath.Join(dir, args[i])
			}
		}
		rc, _, errs := runCLI(t, append([]string{"media"}, args...)...)
		if rc != 2 || !strings.Contains(errs, strings.ReplaceAll(tc.want, "-o x", "-o "+filepath.Join(dir, "x"))) {
			t.Errorf("media %v: rc %d, stderr %q; want 2 and %q", tc.args, rc, errs, tc.want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			t.Errorf("media %v wrote %s", tc.args, ents[0].Name())
		}
	}
	// The raw extensions and -kind that agrees with them are accepted.
	dir := t.TempDir()
	for _, tc := range [][]string{
		{"-o", "a.yuv"}, {"-o", "b.RAW", "-kind", "raw"}, {"-o", "c.p010", "-format", "p010"}, {"-o", "d.y4m", "-kind", "y4m"},
	} {
		tc[1] = filepath.Join(dir, tc[1])
		if rc, _, errs := runCLI(t, append([]string{"media", "-size", "32x32", "-frames", "1"}, tc...)...); rc != 0 {
			t.Errorf("media %v: rc %d %q", tc, rc, errs)
		}
	}
	if rc, _, errs := runCLI(t, "media", "-o", "/nonexistent/dir/x.nv12"); rc != 1 || !strings.Contains(errs, "directory") {
		t.Errorf("unwritable: rc %d %q", rc, errs)
	}
}

// TestMediaRefusesWhatWillNotFit: a file larger than the free space of its
// disk is refused before anything is written, with the sizes and what to do.
func TestMediaRefusesWhatWillNotFit(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "huge.y4m")
	// 1,000,000 16384x16384 frames: 403 TB.
	rc, _, errs := runCLI(t, "media", "-size", "16384x16384", "-frames", "1000000", "-o", out)
	if rc != 1 || !strings.Contains(errs, "1000000 frames of 16384x16384 nv12 need 402653.2 GB") || !strings.Contains(errs, "use fewer -frames") {
		t.Errorf("rc %d, stderr %q", rc, errs)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("wrote %s", ents[0].Name())
	}
}

// Encoded clips: ffmpeg (the peer) reads the codec, size, depth and frame
// count back, an IDR every -gop frames, and every decoded picture carries
// its source number and frame number.
func TestMediaWritesEncodedVideo(t *testing.T) {
	peer.NeedFFmpeg(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args               []string
		file, codec, pixel string
	}{
		{[]string{"-format", "nv12"}, "a.hevc", "hevc", "yuv420p"},
		{[]string{"-format", "p010", "-pattern", "ramp"}, "b.h265", "hevc", "yuv420p10le"},
		{[]string{"-pattern", "checker"}, "c.264", "h264", "yuv420p"},
		{[]string{"-codec", "h264"}, "d.ts", "h264", "yuv420p"},
		{[]string{"-format", "p010", "-bitrate", "500k", "-noise", "10"}, "e.ts", "hevc", "yuv420p10le"},
	} {
		path := filepath.Join(dir, tc.file)
		args := append([]string{"media", "-size", "320x180", "-frames", "12", "-gop", "4", "-id", "77"}, tc.args...)
		rc, out, errs := runCLI(t, append(args, "-o", path)...)
		if rc != 0 {
			t.Fatalf("media %v: rc %d\n%s%s", tc.args, rc, out, errs)
		}
		probe, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames",
			"-show_entries", "stream=codec_name,width,height,pix_fmt,nb_read_frames", "-of", "csv=p=0", path).Output()
		if err != nil {
			t.Fatal(err)
		}
		// A transport stream's stream is listed twice, with its program.
		if got, want := strings.Fields(string(probe))[0], tc.codec+",320,180,"+tc.pixel+",12"; got != want {
			t.Errorf("%s: ffprobe %q, want %q", tc.file, got, want)
		}
		keys, _ := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=flags", "-of", "csv=p=0", path).Output()
		var k []int
		for i, f := range strings.Fields(string(keys)) {
			if strings.HasPrefix(f, "K") {
				k = append(k, i)
			}
		}
		if fmt.Sprint(k) != "[0 4 8]" {
			t.Errorf("%s: key frames at %v, want every 4th", tc.file, k)
		}
		f := frame.NV12
		if tc.pixel != "yuv420p" {
			f = frame.P010
		}
		raw, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", map[frame.Format]string{frame.NV12: "nv12", frame.P010: "p010le"}[f], "-").Output()
		if err != nil {
			t.Fatal(err)
		}
		size := f.Size(320, 180)
		for i := 0; i*size < len(raw); i++ {
			fr, _ := frame.New(f, 320, 180)
			copy(fr.Bytes(), raw[i*size:])
			if id, n, ok := media.ReadStamp(fr, frame.Rect{W: 320, H: 180}); !ok || id != 77 || n != uint32(i) {
				t.Errorf("%s: picture %d reads stamp %d/%d (ok %v)", tc.file, i, id, n, ok)
			}
		}
	}
}
