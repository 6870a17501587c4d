//go:build unix

package es

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchTS is the stream the transport stream benchmarks read: the file
// $ES_BENCH_TS names (made by onair media, as BENCHMARKS.md says), or one
// ffmpeg makes: HEVC 1920x1080 at 30 fps, 8 Mbit/s, an IDR every 30, 120
// frames of moving noise, as a camera sends over SRT.
func benchTS(b *testing.B) []byte {
	b.Helper()
	path := os.Getenv("ES_BENCH_TS")
	if path == "" {
		if _, err := exec.LookPath("ffmpeg"); err != nil {
			b.Skip("no ffmpeg to make the 1080p stream, and no $ES_BENCH_TS")
		}
		path = filepath.Join(b.TempDir(), "1080p.ts")
		cmd := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30,format=yuv420p,noise=alls=30:allf=t",
			"-frames:v", "120", "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "keyint=30:min-keyint=30:log-level=error",
			"-b:v", "8M", "-f", "mpegts", path)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("ffmpeg: %v\n%s", err, out)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// datagrams reads as an SRT or UDP receiver hands a stream on: seven
// packets (1316 bytes) a read.
type datagrams struct{ r *bytes.Reader }

func (d datagrams) Read(p []byte) (int, error) { return d.r.Read(p[:min(len(p), 7*tsPacket)]) }

func (d datagrams) Seek(off int64, whence int) (int64, error) { return d.r.Seek(off, whence) }

func cpuTime() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// largestPES is a stream of data's tables (its packets before the first
// video packet) and its largest video PES (an I-frame), then the packet
// that starts the next PES, so that it ends.
func largestPES(b *testing.B, data []byte) (ts []byte, packets int) {
	src, _, err := newTSSource(bytes.NewReader(data), false, 0)
	if err != nil {
		b.Fatal(err)
	}
	var starts []int // indexes of the video PID's packets that start a PES
	var first = -1
	for i := 0; i+tsPacket <= len(data); i += tsPacket {
		p := data[i : i+tsPacket]
		if uint16(p[1]&0x1f)<<8|uint16(p[2]) == src.pid {
			if first < 0 {
				first = i
			}
			if p[1]&0x40 != 0 {
				starts = append(starts, i)
			}
		}
	}
	best := 0
	for k := 1; k+1 < len(starts); k++ {
		if starts[k+1]-starts[k] > starts[best+1]-starts[best] {
			best = k
		}
	}
	ts = append([]byte(nil), data[:first]...)
	for i := starts[best]; i <= starts[best+1]; i += tsPacket {
		if p := data[i : i+tsPacket]; uint16(p[1]&0x1f)<<8|uint16(p[2]) == src.pid {
			ts = append(ts, p...)
			packets++
		}
	}
	return ts, packets - 1
}

// BenchmarkTSSource reads a 1080p30 8 Mbit/s HEVC transport stream through
// the transport stream reader (new: tsSource; astits: the go-astits reader
// it replaced; new+reader: tsSource and the Reader on it, split into
// access units, what a live source costs in all), seven packets a read as
// a network input hands them on: whole (4 s of it; cpu-%/source is the
// share of one core a live source of that stream costs) and its largest
// I-frame alone. Each op reads the stream once more from its start, the
// reader rewound (so allocs/op is what a pass allocates, buffers grown).
func BenchmarkTSSource(b *testing.B) {
	data := benchTS(b)
	open := map[string]func(io.Reader) (payloadSource, error){
		"new": func(r io.Reader) (payloadSource, error) {
			s, _, err := newTSSource(r, false, 0)
			return s, err
		},
		"astits": func(r io.Reader) (payloadSource, error) {
			s, _, err := newAstitsSource(r, false, 0)
			return s, err
		},
	}
	// The stream's length in time, from its PTS.
	var lo, hi int64 = 1 << 40, -1
	n := 0
	ps, _ := open["new"](datagrams{bytes.NewReader(data)})
	for {
		_, pts, has, err := ps.next()
		if err != nil {
			break
		}
		if has {
			lo, hi, n = min(lo, pts), max(hi, pts), n+1
		}
	}
	seconds := float64(hi-lo) / 90000 * float64(n) / float64(n-1)
	iframe, packets := largestPES(b, data)
	for _, in := range []struct {
		name string
		data []byte
	}{{"whole", data}, {"iframe", iframe}} {
		for _, impl := range []string{"new", "astits", "new+reader"} {
			b.Run(in.name+"/"+impl, func(b *testing.B) {
				src, err := open[strings.TrimSuffix(impl, "+reader")](datagrams{bytes.NewReader(in.data)})
				if err != nil {
					b.Fatal(err)
				}
				var r *Reader
				if impl == "new+reader" {
					r = newReader(src.(*tsSource).codec)
					r.ps = src
				}
				b.SetBytes(int64(len(in.data)))
				b.ReportAllocs()
				cpu := cpuTime()
				units := 0
				for b.Loop() {
					units = 0
					if r != nil {
						if err := r.Rewind(); err != nil {
							b.Fatal(err)
						}
						for {
							if _, err := r.Next(); err == io.EOF {
								break
							} else if err != nil {
								b.Fatal(err)
							}
							units++
						}
						continue
					}
					if err := src.rewind(); err != nil {
						b.Fatal(err)
					}
					for {
						if _, _, _, err := src.next(); err == io.EOF {
							break
						} else if err != nil {
							b.Fatal(err)
						}
						units++
					}
				}
				per := float64(cpuTime()-cpu) / float64(b.N)
				b.ReportMetric(per/1e6, "cpu-ms/op")
				b.ReportMetric(float64(units), "units/op")
				if in.name == "whole" {
					b.ReportMetric(per/(seconds*1e9)*100, "cpu-%/source")
				} else {
					b.ReportMetric(float64(packets), "packets/PES")
				}
			})
		}
	}
}
