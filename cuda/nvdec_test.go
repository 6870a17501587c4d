package cuda

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media/es"
)

// nvdecMedia is where the clips and reference.md5 are: the repository's
// test clips, or $ONAIR_NVDEC_MEDIA (a test binary carried to the GPU
// machine runs with the clips beside it).
func nvdecMedia() string {
	if d := os.Getenv("ONAIR_NVDEC_MEDIA"); d != "" {
		return d
	}
	return "../nodes/media/es/testdata"
}

// openNVDEC opens NVDEC or skips the test, saying why.
func openNVDEC(t testing.TB) *NVDEC {
	t.Helper()
	sched := SchedBlockingSync
	if os.Getenv("ONAIR_NVDEC_SPIN") != "" {
		sched = SchedSpin
	}
	ctx, err := NewContext(sched)
	if err != nil {
		t.Skipf("no GPU here: %v", err)
	}
	t.Cleanup(func() { ctx.Close() })
	n, err := OpenNVDEC(ctx)
	if err != nil {
		t.Skipf("no GPU with NVDEC here: %v", err)
	}
	return n
}

func nvdecReference(t testing.TB) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(nvdecMedia(), "reference.md5"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) == 3 && !strings.HasPrefix(fs[0], "#") {
			ref[fs[0]] = append(ref[fs[0]], fs[2])
		}
	}
	return ref
}

// esSource reads a stream's access units pass after pass; passes 0 loops
// for ever.
func esSource(r *es.Reader, passes int) NVDECSource {
	pass := 0
	return func() (NVDECUnit, error) {
		for {
			au, err := r.Next()
			if err == io.EOF {
				pass++
				if passes > 0 && pass >= passes {
					return NVDECUnit{}, io.EOF
				}
				if err := r.Rewind(); err != nil {
					return NVDECUnit{}, err
				}
				continue
			}
			if err != nil {
				return NVDECUnit{}, err
			}
			return NVDECUnit{Data: au.Data, NALs: au.NALs, Timestamp: au.Index}, nil
		}
	}
}

var nvdecClips = []struct {
	name   string
	codec  NVDECCodec
	format frame.Format
}{
	{"hevc8.hevc", NVDECHEVC, frame.NV12},
	{"hevc10.hevc", NVDECHEVC, frame.P010},
	{"h264.264", NVDECH264, frame.NV12},
	{"hevc8.ts", NVDECHEVC, frame.NV12},
	{"hevc10.ts", NVDECHEVC, frame.P010},
	{"h264.ts", NVDECH264, frame.NV12},
}

func TestNVDECCaps(t *testing.T) {
	n := openNVDEC(t)
	defer n.Close()
	for _, c := range []struct {
		codec NVDECCodec
		depth int
	}{{NVDECHEVC, 8}, {NVDECHEVC, 10}, {NVDECH264, 8}} {
		caps, err := n.Caps(c.codec, c.depth)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v %d-bit: %+v", c.codec, c.depth, caps)
		if !caps.Supported || caps.Engines < 1 || caps.MaxWidth < 1920 || (c.depth == 8 && !caps.NV12) || (c.depth == 10 && !caps.P016) {
			t.Errorf("%v %d-bit: %+v: not what onair needs", c.codec, c.depth, caps)
		}
	}
}

// TestNVDECIsByteExact: every clip (8- and 10-bit HEVC, H.264, Annex B and
// TS) decoded twice over without a break, all six on one loop thread, gives
// exactly the frames ffmpeg's software decoder gives (reference.md5, the
// MD5s the CPU backend's decoder is checked against), in order, P016
// surfaces as P010.
func TestNVDECIsByteExact(t *testing.T) {
	nvdecByteExact(t, false)
}

// nvdecByteExact decodes the clips twice over on one loop and checks every
// frame against reference.md5; own: the HEVC clips only, through onair's
// parser.
// frameSums is an OnFrame that downloads each frame into host and appends
// its MD5 to *sums, under mu.
func frameSums(t *testing.T, host *frame.Frame, mu *sync.Mutex, sums *[]string) func(*Frame, NVDECPicture) {
	return func(f *Frame, _ NVDECPicture) {
		defer f.Release()
		if err := download(f, host); err != nil {
			t.Error(err)
			return
		}
		s := md5.Sum(host.Bytes())
		mu.Lock()
		*sums = append(*sums, hex.EncodeToString(s[:]))
		mu.Unlock()
	}
}

func nvdecByteExact(t *testing.T, own bool) {
	n := openNVDEC(t)
	defer n.Close()
	ref := nvdecReference(t)
	loop, err := n.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		sums []string
		end  error
		done bool
	}
	clips := nvdecClips
	if own {
		clips = nil
		for _, c := range nvdecClips {
			if c.codec == NVDECHEVC {
				clips = append(clips, c)
			}
		}
	}
	results := make([]*result, len(clips))
	var mu sync.Mutex
	for i, c := range clips {
		r, err := es.Open(filepath.Join(nvdecMedia(), c.name), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		res := &result{}
		results[i] = res
		host, _ := frame.New(c.format, 640, 360)
		d, err := n.NewDecoder(NVDECConfig{
			ID: c.name, Codec: c.codec, Format: c.format, Width: 640, Height: 360, Source: esSource(r, 2),
			DisplayDelay: i % 3, // none, one, two: the same frames either way
			OwnParser:    own,
			OnFrame:      frameSums(t, host, &mu, &res.sums),
			OnEnd: func(err error) {
				mu.Lock()
				res.end, res.done = err, true
				mu.Unlock()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		loop.Add(d)
	}
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	for i, c := range clips {
		res, want := results[i], ref[c.name]
		if len(want) != 30 {
			t.Fatalf("reference.md5 lists %d frames of %s", len(want), c.name)
		}
		if !res.done || res.end != nil {
			t.Errorf("%s: ended %v: %v", c.name, res.done, res.end)
		}
		checkTwoPasses(t, c.name, res.sums, want)
	}
}

// checkTwoPasses: sums are two passes of a clip's frames, each one the
// frame ffmpeg decodes (want, the clip's reference MD5s, in order).
func checkTwoPasses(t *testing.T, name string, sums, want []string) {
	t.Helper()
	if len(sums) != 2*len(want) {
		t.Errorf("%s: %d frames over two passes, want %d", name, len(sums), 2*len(want))
	}
	bad := 0
	for j, s := range sums {
		if s != want[j%len(want)] {
			if bad < 3 {
				t.Errorf("%s: frame %d (pass %d): MD5 %s, ffmpeg's %s", name, j, j/len(want)+1, s, want[j%len(want)])
			}
			bad++
		}
	}
	if bad == 0 && len(sums) == 2*len(want) {
		t.Logf("%s: %d frames, every one byte for byte ffmpeg's", name, len(sums))
	}
}

// A stream that is not what the source declares is refused at its first
// sequence header, saying what to change.
func TestNVDECRefusesWhatDoesNotFit(t *testing.T) {
	n := openNVDEC(t)
	defer n.Close()
	loop, err := n.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	ends := map[string]error{}
	var mu sync.Mutex
	for _, c := range []struct {
		clip   string
		codec  NVDECCodec
		format frame.Format
		w, h   int
		want   string
	}{
		{"hevc8.hevc", NVDECHEVC, frame.NV12, 1280, 720, "the stream is 640x360 8-bit, the source declares 1280x720 8-bit"},
		{"hevc10.ts", NVDECHEVC, frame.NV12, 640, 360, "the stream is 640x360 10-bit, the source declares 640x360 8-bit"},
	} {
		r, err := es.Open(filepath.Join(nvdecMedia(), c.clip), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		key := c.clip + "|" + c.want
		d, err := n.NewDecoder(NVDECConfig{ID: c.clip, Codec: c.codec, Format: c.format, Width: c.w, Height: c.h, Source: esSource(r, 1),
			OnFrame: func(f *Frame, _ NVDECPicture) { f.Release() },
			OnEnd: func(err error) {
				mu.Lock()
				ends[key] = err
				mu.Unlock()
			}})
		if err != nil {
			t.Fatal(err)
		}
		loop.Add(d)
	}
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	for key, err := range ends {
		clip, want, _ := strings.Cut(key, "|")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), clip) {
			t.Errorf("%s: %v, want %q", clip, err, want)
		}
	}
	if len(ends) != 2 {
		t.Errorf("%d decoders ended, want 2", len(ends))
	}
}

// benchClip is the 1080p HEVC clip the throughput is measured on:
// $ONAIR_NVDEC_BENCH, or bench1080.hevc beside the test clips (onair media
// -size 1920x1080 -frames 60 -gop 30 -bitrate 8M -o bench1080.hevc).
func benchClip(b *testing.B) []byte {
	path := os.Getenv("ONAIR_NVDEC_BENCH")
	if path == "" {
		path = filepath.Join(nvdecMedia(), "bench1080.hevc")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Skipf("no 1080p HEVC clip to measure NVDEC on: %v", err)
	}
	return data
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkNVDEC decodes 1080p HEVC on N streams spread over a few loop
// threads, every picture mapped and copied into a device frame of its
// stream's pool, and reports decoded frames per second over all streams
// and the process's CPU time per frame (access units split by package es
// included). b.N is frames per stream; decoders are made and warmed (a
// first frame each) before the clock starts.
func BenchmarkNVDEC(b *testing.B) {
	data := benchClip(b)
	n := openNVDEC(b)
	defer n.Close()
	for _, c := range []struct{ streams, threads int }{{1, 1}, {7, 1}, {7, 2}, {14, 2}, {105, 2}, {105, 4}} {
		b.Run(fmt.Sprintf("streams=%d/threads=%d", c.streams, c.threads), func(b *testing.B) {
			benchDecode(b, n, data, c.streams, c.threads, false)
		})
	}
}

// BenchmarkNVDECParsers decodes the same streams through NVIDIA's parser
// and through onair's (OwnParser), side by side in one process: the CPU a
// frame each parser costs, everything else alike.
func BenchmarkNVDECParsers(b *testing.B) {
	data := benchClip(b)
	n := openNVDEC(b)
	defer n.Close()
	for _, c := range []struct{ streams, threads int }{{7, 1}, {105, 2}} {
		for _, own := range []bool{false, true} {
			parser := "nvidia"
			if own {
				parser = "onair"
			}
			b.Run(fmt.Sprintf("streams=%d/threads=%d/parser=%s", c.streams, c.threads, parser), func(b *testing.B) {
				benchDecode(b, n, data, c.streams, c.threads, own)
			})
		}
	}
}

// benchDelay is the display delay measured: $ONAIR_NVDEC_DELAY, or
// NVDECDisplayDelay.
func benchDelay() int {
	var d int
	if _, err := fmt.Sscan(os.Getenv("ONAIR_NVDEC_DELAY"), &d); err != nil {
		return NVDECDisplayDelay
	}
	return d
}

func benchDecode(b *testing.B, n *NVDEC, data []byte, streams, threads int, own bool) {
	loops := make([]*NVDECLoop, threads)
	for i := range loops {
		l, err := n.NewLoop()
		if err != nil {
			b.Fatal(err)
		}
		loops[i] = l
	}
	var counting atomic.Bool
	var total atomic.Int64
	target := int64(b.N) * int64(streams)
	done := make(chan struct{})
	var doneOnce sync.Once
	var warm sync.WaitGroup
	warm.Add(streams)
	for i := 0; i < streams; i++ {
		var first sync.Once
		d, err := n.NewDecoder(NVDECConfig{
			ID: fmt.Sprintf("bench%d", i), Codec: NVDECHEVC, Format: frame.NV12, Width: 1920, Height: 1080, DisplayDelay: benchDelay(),
			OwnParser: own,
			Source:    esSource(es.NewAnnexB(bytes.NewReader(data), es.HEVC), 0),
			OnFrame: func(f *Frame, _ NVDECPicture) {
				f.Release()
				first.Do(warm.Done)
				if counting.Load() && total.Add(1) == target {
					doneOnce.Do(func() { close(done) })
				}
			},
			OnEnd: func(err error) {
				if err != nil && !strings.Contains(err.Error(), "loop stopped") {
					b.Error(err)
				}
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		loops[i%threads].Add(d)
	}
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Run(); err != nil {
				b.Error(err)
			}
		}()
	}
	warm.Wait()
	b.ResetTimer()
	st0 := loopTotals(loops)
	cpu0, t0 := cpuTime(), time.Now()
	counting.Store(true)
	<-done
	elapsed, cpu := time.Since(t0), cpuTime()-cpu0
	st := loopTotals(loops)
	b.StopTimer()
	for _, l := range loops {
		l.Stop()
	}
	wg.Wait()
	frames := float64(total.Load())
	b.ReportMetric(frames/elapsed.Seconds(), "frames/s")
	b.ReportMetric(float64(cpu.Microseconds())/frames, "cpu-µs/frame")
	b.ReportMetric(0, "ns/op")
	// The loops' own counts over the same window: pictures a launch of the
	// copy kernel (0: copies picture by picture), and with NVDECClocksEnv
	// the thread CPU of the maps and of the copies queued, a picture.
	pics := float64(st.Frames - st0.Frames)
	if l := st.CopyLaunches - st0.CopyLaunches; l > 0 {
		b.ReportMetric(pics/float64(l), "pictures/launch")
	} else {
		b.ReportMetric(0, "pictures/launch")
	}
	if st.Clocks && pics > 0 {
		b.ReportMetric(float64(st.MapCPUNs-st0.MapCPUNs)/1e3/pics, "map-cpu-µs/frame")
		b.ReportMetric(float64(st.CopyCPUNs-st0.CopyCPUNs)/1e3/pics, "copy-cpu-µs/frame")
	}
}

// loopTotals sums the loops' counters.
func loopTotals(loops []*NVDECLoop) NVDECLoopStats {
	var t NVDECLoopStats
	for _, l := range loops {
		s := l.Stats()
		t.Frames += s.Frames
		t.CopyLaunches += s.CopyLaunches
		t.MapCPUNs += s.MapCPUNs
		t.CopyCPUNs += s.CopyCPUNs
		t.Clocks = s.Clocks
	}
	return t
}
