package delivery

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchFFmpeg is the ffmpeg the encoder benchmarks run: $ONAIR_FFMPEG
// (a static build carried to the device machine, with its libraries on
// LD_LIBRARY_PATH), else ffmpeg on $PATH. Absent, they skip.
func benchFFmpeg(b *testing.B) string {
	bin := os.Getenv("ONAIR_FFMPEG")
	if bin == "" {
		bin = "ffmpeg"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		b.Skipf("no ffmpeg (%v): set ONAIR_FFMPEG or put ffmpeg on $PATH", err)
	}
	return path
}

// Encoder benchmark picture: 1080p at 30 fps, as onair hands a bus to an
// output (NV12 on ffmpeg's stdin).
const (
	benchW, benchH, benchRate = 1920, 1080, 30
	benchFrames               = 300 // ten seconds of pictures per op: the encoder's start and lookahead weigh little
	benchDistinct             = 60  // distinct pictures, looped
	benchGrain                = 12  // the grain's amplitude in 8-bit steps
)

// benchPictures are benchDistinct NV12 pictures of ffmpeg's testsrc2 with
// grain over it that changes every picture (a camera's noise: a clean
// synthetic picture costs an encoder far less than a real one): uniform,
// ±benchGrain on every sample, from a fixed seed, so that every run and
// machine encodes the same pictures. The grain is added here, not by an
// ffmpeg filter: the device machine's ffmpeg has testsrc2 and few others.
func benchPictures(b *testing.B, bin string) [][]byte {
	b.Helper()
	out, err := exec.Command(bin, "-hide_banner", "-nostdin", "-loglevel", "error",
		"-f", "lavfi", "-i", fmt.Sprintf("testsrc2=s=%dx%d:r=%d", benchW, benchH, benchRate),
		"-frames:v", fmt.Sprint(benchDistinct), "-f", "rawvideo", "-pix_fmt", "nv12", "pipe:1").Output()
	size := benchW * benchH * 3 / 2
	if err != nil || len(out) != benchDistinct*size {
		b.Fatalf("making the benchmark's pictures: %v (%d bytes, want %d)", err, len(out), benchDistinct*size)
	}
	rng := rand.New(rand.NewPCG(26, 1080))
	for i, v := range out {
		out[i] = byte(min(max(int(v)+rng.IntN(2*benchGrain+1)-benchGrain, 0), 255))
	}
	pics := make([][]byte, benchDistinct)
	for i := range pics {
		pics[i] = out[i*size : (i+1)*size]
	}
	return pics
}

// BenchmarkEncoderCPU measures what one 1080p30 delivery output costs the
// machine: ffmpeg run with the arguments Args generates (a file output,
// MPEG-TS, 6 Mbit/s, a keyframe every two seconds), fed NV12 pictures on
// stdin as onair feeds them, as fast as it takes them. The CPU is the
// child's own (user + system time from its rusage) per second of video:
// core-%/output is the share of one core the output takes at 30 fps. Run:
//
//	go test -run '^$' -bench EncoderCPU -benchtime 1x ./delivery/
//
// (ONAIR_FFMPEG=/path/ffmpeg picks the ffmpeg).
func BenchmarkEncoderCPU(b *testing.B) {
	bin := benchFFmpeg(b)
	pics := benchPictures(b, bin)
	for _, c := range []struct{ encoder, codec, preset string }{
		{"libx264", "h264", "veryfast"},
		{"libx264", "h264", "medium"},
		{"libx265", "hevc", "ultrafast"},
	} {
		b.Run(c.encoder+"-"+c.preset, func(b *testing.B) {
			o := Output{Kind: "file", Dest: filepath.Join(b.TempDir(), "out.ts"),
				Video: Video{Codec: c.codec, Encoder: c.encoder, Bitrate: "6M", GOP: 2 * benchRate, Preset: c.preset}}
			var cpu, wall time.Duration
			var bytesOut int64
			for range b.N {
				u, w, n := encodeOnce(b, bin, o, pics)
				cpu += u
				wall += w
				bytesOut += n
			}
			video := time.Duration(b.N*benchFrames) * time.Second / benchRate
			b.ReportMetric(100*cpu.Seconds()/video.Seconds(), "core-%/output")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N*benchFrames), "cpu-ms/frame")
			b.ReportMetric(float64(b.N*benchFrames)/wall.Seconds(), "encode-fps")
			b.ReportMetric(float64(bytesOut)*8/video.Seconds()/1e6, "Mbit/s")
		})
	}
}

// encodeOnce runs one ffmpeg over benchFrames pictures and returns its
// CPU time (user + system), the wall time and the bytes it wrote.
func encodeOnce(b *testing.B, bin string, o Output, pics [][]byte) (cpu, wall time.Duration, written int64) {
	b.Helper()
	args := append([]string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y",
		"-f", "rawvideo", "-pix_fmt", "nv12", "-s", fmt.Sprintf("%dx%d", benchW, benchH), "-r", fmt.Sprint(benchRate), "-i", "pipe:0"},
		Args(o, o.Video.Encoder, false)...)
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	for i := range benchFrames {
		if _, err := in.Write(pics[i%len(pics)]); err != nil {
			break // ffmpeg died: Wait says why
		}
	}
	_ = in.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s %v: %v: %s", bin, args, err, stderr.String())
	}
	wall = time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Fatal("no rusage for the child")
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fi, err := os.Stat(o.Dest)
	if err != nil {
		b.Fatal(err)
	}
	return cpu, wall, fi.Size()
}
