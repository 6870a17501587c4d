package delivery

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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
func benchPictures(b *testing.B, bin string, w, h int) [][]byte {
	b.Helper()
	out, err := exec.Command(bin, "-hide_banner", "-nostdin", "-loglevel", "error",
		"-f", "lavfi", "-i", fmt.Sprintf("testsrc2=s=%dx%d:r=%d", w, h, benchRate),
		"-frames:v", fmt.Sprint(benchDistinct), "-f", "rawvideo", "-pix_fmt", "nv12", "pipe:1").Output()
	size := w * h * 3 / 2
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
	pics := benchPictures(b, bin, benchW, benchH)
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

// pacedCase is one encoder setting BenchmarkEncoderCPUPaced runs, at
// each of its concurrencies.
type pacedCase struct {
	encoder, codec, preset string
	w, h                   int
	bitrate                string
	concurrent             []int
}

// pacedCases: the profile's three 1080p30 settings at 1, 2 and 4
// outputs at once (x264 veryfast at 8 too, where the seeds' show missed
// deadlines on the H200), and 360p x264 ultrafast at 1 and 2, which the
// 2-core development machine keeps up with.
var pacedCases = []pacedCase{
	{"libx264", "h264", "veryfast", 1920, 1080, "6M", []int{1, 2, 4, 8}},
	{"libx264", "h264", "medium", 1920, 1080, "6M", []int{1, 2, 4}},
	{"libx265", "hevc", "ultrafast", 1920, 1080, "6M", []int{1, 2, 4}},
	{"libx264", "h264", "ultrafast", 640, 360, "1M", []int{1, 2}},
}

// BenchmarkEncoderCPUPaced measures what a delivery output costs the
// machine as a show runs it: N outputs at once, each an ffmpeg with the
// arguments Args generates with sound (an MPEG-TS file, the bus's video
// on stdin and its sound, a 1 kHz tone as 48 kHz stereo float PCM, on a
// pipe of its own, encoded to AAC), each fed one picture and one
// picture's sound every 1/30 s as a bus feeds its outputs, not as fast
// as it takes them (BenchmarkEncoderCPU). core-%/output is the children's
// user + system time per second of video over the N outputs: the share
// of one core each output takes; slowest-x is the slowest output's
// speed against the show's rate (1: it kept up; under 1 its pictures
// waited for it, and its figure is for a machine it overloads). Run one
// setting and concurrency:
//
//	go test -run '^$' -bench 'EncoderCPUPaced/libx264-ultrafast-360p/N=1$' -benchtime 1x ./delivery/
//
// (ONAIR_FFMPEG=/path/ffmpeg picks the ffmpeg). Each op is ten seconds
// of video, so ten seconds of wall time at least.
func BenchmarkEncoderCPUPaced(b *testing.B) {
	bin := benchFFmpeg(b)
	pics := map[[2]int][][]byte{} // by size, made once the first case of the size runs
	for _, c := range pacedCases {
		b.Run(fmt.Sprintf("%s-%s-%dp", c.encoder, c.preset, c.h), func(b *testing.B) {
			for _, n := range c.concurrent {
				b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
					size := [2]int{c.w, c.h}
					if pics[size] == nil {
						pics[size] = benchPictures(b, bin, c.w, c.h)
						b.ResetTimer()
					}
					benchPaced(b, bin, c, n, pics[size])
				})
			}
		})
	}
}

func benchPaced(b *testing.B, bin string, c pacedCase, n int, pics [][]byte) {
	var cpu time.Duration
	var bytesOut int64
	slowest := math.Inf(1)
	for range b.N {
		runs := make([]pacedRun, n)
		var wg sync.WaitGroup
		for i := range runs {
			o := Output{Kind: "file", Dest: filepath.Join(b.TempDir(), fmt.Sprintf("out-%d.ts", i)),
				Video: Video{Codec: c.codec, Encoder: c.encoder, Bitrate: c.bitrate, GOP: 2 * benchRate, Preset: c.preset},
				Audio: Audio{Codec: "aac", Bitrate: "128k"}}
			wg.Add(1)
			go func() {
				defer wg.Done()
				runs[i] = encodePaced(bin, o, c.w, c.h, pics)
			}()
		}
		wg.Wait()
		for _, r := range runs {
			if r.err != nil {
				b.Fatal(r.err)
			}
			cpu += r.cpu
			bytesOut += r.written
			slowest = min(slowest, r.speed)
		}
	}
	video := time.Duration(b.N*n*benchFrames) * time.Second / benchRate // over all the outputs
	b.ReportMetric(100*cpu.Seconds()/video.Seconds(), "core-%/output")
	b.ReportMetric(100*cpu.Seconds()/video.Seconds()*float64(n), "core-%/all")
	b.ReportMetric(slowest, "slowest-x")
	b.ReportMetric(float64(bytesOut)*8/video.Seconds()/1e6, "Mbit/s/output")
}

// pacedRun is what one paced ffmpeg took: its CPU (user + system), its
// speed (the video's length over the time from the first picture written
// to the last one taken) and the bytes it wrote.
type pacedRun struct {
	cpu     time.Duration
	speed   float64
	written int64
	err     error
}

// encodePaced runs one ffmpeg over benchFrames pictures of w×h, each
// written at its time (the first at once, then one every 1/benchRate s;
// a picture ffmpeg has not taken by its time delays the rest, as the
// frames queued for a slow output wait), with its sound on fd 3 at the
// same pace.
func encodePaced(bin string, o Output, w, h int, pics [][]byte) pacedRun {
	const sampleRate, channels = 48000, 2
	samples := sampleRate / benchRate // per picture
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y",
		"-f", "rawvideo", "-pix_fmt", "nv12", "-s", fmt.Sprintf("%dx%d", w, h), "-r", fmt.Sprint(benchRate),
		"-thread_queue_size", "1024", "-i", "pipe:0", "-thread_queue_size", "1024"}
	args = append(append(args, AudioInputArgs(3)...), Args(o, o.Video.Encoder, true)...)
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	video, err := cmd.StdinPipe()
	if err != nil {
		return pacedRun{err: err}
	}
	soundR, sound, err := os.Pipe()
	if err != nil {
		return pacedRun{err: err}
	}
	cmd.ExtraFiles = []*os.File{soundR}
	if err := cmd.Start(); err != nil {
		soundR.Close()
		sound.Close()
		return pacedRun{err: err}
	}
	soundR.Close()
	// A second of a 1 kHz tone at -20 dBFS, both channels: 30 pictures'
	// sound, looped.
	tone := make([]byte, sampleRate*channels*4)
	for i := range sampleRate {
		v := math.Float32bits(float32(0.1 * math.Sin(2*math.Pi*1000*float64(i)/sampleRate)))
		for ch := range channels {
			binary.LittleEndian.PutUint32(tone[(i*channels+ch)*4:], v)
		}
	}
	chunk := samples * channels * 4
	start := time.Now()
	paced := func(wr io.WriteCloser, part func(i int) []byte) time.Time {
		defer wr.Close()
		for i := range benchFrames {
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / benchRate)))
			if _, err := wr.Write(part(i)); err != nil {
				break // ffmpeg died: Wait says why
			}
		}
		return time.Now()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		paced(sound, func(i int) []byte { off := (i % benchRate) * chunk; return tone[off : off+chunk] })
	}()
	last := paced(video, func(i int) []byte { return pics[i%len(pics)] })
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		return pacedRun{err: fmt.Errorf("%s %v: %v: %s", bin, args, err, stderr.String())}
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return pacedRun{err: fmt.Errorf("no rusage for the child")}
	}
	fi, err := os.Stat(o.Dest)
	if err != nil {
		return pacedRun{err: err}
	}
	// The last picture is due (benchFrames-1)/benchRate after the first.
	due := time.Duration(benchFrames-1) * time.Second / benchRate
	return pacedRun{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), speed: due.Seconds() / last.Sub(start).Seconds(), written: fi.Size()}
}
