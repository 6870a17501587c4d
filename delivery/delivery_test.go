package delivery

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/internal/peer"
)

func h264(bitrate string) Video {
	return Video{Codec: "h264", Encoder: "auto", Bitrate: bitrate, GOP: 10}
}

// TestArgsRecordWhatTheyName runs the arguments Args makes for each
// container, a rolled file and HLS through ffmpeg itself (ten frames of
// its test source in place of a bus, and where audio is on, silence as
// the bus's sound will come: input 1, float PCM on the process's fd 3) and reads what came out with ffprobe: the
// container, the codec asked for, and the sound where it was mapped.
func TestArgsRecordWhatTheyName(t *testing.T) {
	peer.NeedFFmpeg(t)
	ff, err := ProbeFFmpeg("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cases := []struct {
		name  string
		out   Output
		audio bool
		read  string // the file ffprobe reads, relative to dir
		codec string
		mux   string // ffprobe's format_name holds it
	}{
		{"mp4", Output{Kind: "file", Dest: "a.mp4", Video: h264("1M")}, false, "a.mp4", "h264", "mp4"},
		{"mov hevc", Output{Kind: "file", Dest: "b.mov", Video: Video{Codec: "hevc", Encoder: "auto", Bitrate: "1M", GOP: 10}}, false, "b.mov", "hevc", "mov"},
		{"mkv with sound", Output{Kind: "file", Dest: "c.mkv", Video: h264("1M"), Audio: Audio{Codec: "opus", Bitrate: "96k"}}, true, "c.mkv", "h264", "matroska"},
		{"ts with sound", Output{Kind: "file", Dest: "d.ts", Video: h264("1M"), Audio: Audio{Codec: "mp2", Bitrate: "128k"}}, true, "d.ts", "h264", "mpegts"},
		{"rolled", Output{Kind: "file", Dest: "e.mp4", Segment: time.Second, Video: h264("1M")}, false, "e-000.mp4", "h264", "mp4"},
		{"hls with sound", Output{Kind: "hls", Dest: "hls", Segment: time.Second, ListSize: 4, Video: h264("1M"), Audio: Audio{Codec: "aac", Bitrate: "128k"}}, true, "hls/index.m3u8", "h264", "hls"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := ff.Check(c.out.Video, c.out.Audio); err != nil {
				t.Skip(err)
			}
			args := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=320x180:rate=25"}
			var sound *os.File
			if c.audio { // as a bus's sound will come: float PCM on a pipe of its own
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				sound = r
				go func() {
					defer w.Close()
					w.Write(make([]byte, 48000*2*4*2)) // two seconds of stereo silence
				}()
				args = append(args, AudioInputArgs(3)...)
			}
			args = append(args, "-frames:v", "30")
			args = append(args, Args(c.out, ff.Resolve(c.out.Video), c.audio)...)
			cmd := exec.Command(ff.Path, args...)
			cmd.Dir = dir
			if sound != nil {
				cmd.ExtraFiles = []*os.File{sound}
			}
			if c.out.Kind == "hls" {
				if err := os.MkdirAll(filepath.Join(dir, "hls"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("ffmpeg %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name:format=format_name", "-of", "compact", filepath.Join(dir, c.read)).Output()
			if err != nil {
				t.Fatalf("ffprobe %s: %v", c.read, err)
			}
			got := string(out)
			if !strings.Contains(got, "codec_name="+c.codec+"|codec_type=video") || !strings.Contains(got, c.mux) {
				t.Errorf("%s holds %s; want %s video in %s", c.read, got, c.codec, c.mux)
			}
			if has := strings.Contains(got, "codec_type=audio"); has != c.audio {
				t.Errorf("%s holds %s: audio %v, want %v", c.read, got, has, c.audio)
			}
		})
	}
}

func TestArgsNameTheContainerAndTheDestination(t *testing.T) {
	for _, c := range []struct {
		out  Output
		want []string // in this order
	}{
		{Output{Kind: "stream", Dest: "srt://10.0.0.1:9000", Video: h264("6M")}, []string{"-f", "mpegts", "srt://10.0.0.1:9000"}},
		{Output{Kind: "stream", Dest: "udp://239.0.0.1:5000", Video: h264("6M")}, []string{"-f", "mpegts", "udp://239.0.0.1:5000"}},
		{Output{Kind: "stream", Dest: "rtmp://live/app/key", Video: h264("6M")}, []string{"-f", "flv", "rtmp://live/app/key"}},
		{Output{Kind: "file", Dest: "rec/a.mov", Video: Video{Codec: "hevc", Encoder: "auto", Bitrate: "6M"}}, []string{"-c:v", "libx265", "-tag:v", "hvc1", "-f", "mov", "-movflags", fragmented, "rec/a.mov"}},
		{Output{Kind: "file", Dest: "rec/a.mp4", Segment: time.Hour, Video: h264("6M")}, []string{"-f", "segment", "-segment_time", "3600", "-segment_format", "mp4", "rec/a-%03d.mp4"}},
	} {
		got := Args(c.out, PlannedEncoder(c.out.Video), false)
		i := 0
		for _, w := range got {
			if i < len(c.want) && w == c.want[i] {
				i++
			}
		}
		if i < len(c.want) || got[len(got)-1] != c.want[len(c.want)-1] {
			t.Errorf("%s: %v; want %v in order, the destination last", c.out.Dest, got, c.want)
		}
	}
	// The settings land: bit rate and peak, GOP, the default live preset.
	got := strings.Join(Args(Output{Kind: "file", Dest: "a.mkv", Video: h264("2.5M")}, "libx264", false), " ")
	for _, w := range []string{"-b:v 2500000", "-maxrate 2500000", "-bufsize 5000000", "-g 10", "-preset veryfast"} {
		if !strings.Contains(got, w) {
			t.Errorf("args %q lack %q", got, w)
		}
	}
}

func TestParseBitrate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64 // 0: an error
	}{
		{"6M", 6_000_000}, {"800k", 800_000}, {"128000", 128_000}, {"2.5M", 2_500_000}, {"1G", 1_000_000_000},
		{"0", 0}, {"15k", 0}, {"10T", 0}, {"2G", 0}, {"NaN", 0}, {"-6M", 0}, {"", 0}, {"M", 0}, {"Inf", 0},
	} {
		got, err := ParseBitrate(c.in)
		if (err != nil) != (c.want == 0) || got != c.want {
			t.Errorf("ParseBitrate(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestCheckURLAndPath(t *testing.T) {
	for _, u := range []string{"srt://127.0.0.1:9000", "srt://host:9000?mode=listener", "udp://239.1.1.1:5000", "rist://host:1968", "rtmp://a.example/app/key", "rtmps://a.example:443/app/key"} {
		if err := CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q): %v", u, err)
		}
	}
	for u, want := range map[string]string{"http://x:1": `unknown scheme "http"`, "srt://": "has no host", "x.ts": `unknown scheme ""`, "srt://[::1": "not a URL"} {
		if err := CheckURL(u); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURL(%q) = %v; want %q", u, err, want)
		}
	}
	for p, ok := range map[string]bool{"a.mp4": true, "b/C.MOV": true, "c.mkv": true, "d.ts": true, "e.avi": false, "f": false, "g.mp4.tmp": false} {
		if err := CheckPath(p); (err == nil) != ok {
			t.Errorf("CheckPath(%q) = %v", p, err)
		}
	}
}

// TestProbeReadsTheEncoders reads this machine's ffmpeg: the software
// encoders the tests use are there, a made-up one is refused by name, and
// auto falls back to software where NVENC does not open.
func TestProbeReadsTheEncoders(t *testing.T) {
	peer.NeedFFmpeg(t)
	ff, err := ProbeFFmpeg("")
	if err != nil {
		t.Fatal(err)
	}
	if !ff.Encoders["libx264"] || !ff.Encoders["aac"] || ff.Encoders["V....D"] {
		t.Errorf("encoders read: %d, libx264 %v, aac %v", len(ff.Encoders), ff.Encoders["libx264"], ff.Encoders["aac"])
	}
	if err := ff.Check(Video{Codec: "h264", Encoder: "libnothing"}, Audio{}); err == nil || !strings.Contains(err.Error(), `no encoder "libnothing" (for h264 it has libx264`) {
		t.Errorf("a made-up encoder: %v", err)
	}
	if enc := ff.Resolve(Video{Codec: "h264", Encoder: "auto"}); enc != "libx264" && enc != "h264_nvenc" {
		t.Errorf("auto resolved to %q", enc)
	}
	if _, err := ProbeFFmpeg("no-such-ffmpeg"); err == nil {
		t.Error("a missing ffmpeg was found")
	}
}

func FuzzParseBitrate(f *testing.F) {
	for _, s := range []string{"6M", "800k", "1e3k", "0x10", "1G", "NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		bps, err := ParseBitrate(s)
		if err == nil && (bps < minBitrate || bps > maxBitrate) {
			t.Errorf("ParseBitrate(%q) = %d, out of range", s, bps)
		}
	})
}

func FuzzParseEncoders(f *testing.F) {
	f.Add([]byte("Encoders:\n V..... = Video\n ------\n V....D libx264  libx264 H.264\n A..... aac AAC\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for name := range parseEncoders(b) {
			if name == "" || strings.ContainsAny(name, " \t\n") {
				t.Errorf("encoder name %q", name)
			}
		}
	})
}

func TestRedactTakesTheSecretsOut(t *testing.T) {
	for u, secret := range map[string]string{
		"srt://h:9000?passphrase=topsecret0123&latency=200": "topsecret0123",
		"rist://h:1968?secret=s3cr3t-word":                  "s3cr3t-word",
		"rtmps://user:hunter22@live.example/app/key":        "hunter22",
		"srt://h:9000?passphrase=a%2Fb%26c0123456":          "a%2Fb%26c0123456",
	} {
		got := Redact("ffmpeg -f mpegts "+u+": Connection refused", u)
		if strings.Contains(got, secret) || !strings.Contains(got, "REDACTED") || !strings.Contains(got, "Connection refused") {
			t.Errorf("Redact for %s: %q", u, got)
		}
	}
	if got := Redact("udp://h:5000", "udp://h:5000"); got != "udp://h:5000" {
		t.Errorf("a URL without secrets changed: %q", got)
	}
}

func TestRTMPCarriesH264Only(t *testing.T) {
	for codec, ok := range map[string]bool{"h264": true, "hevc": false, "av1": false} {
		err := CheckCodec(Output{Kind: "stream", Dest: "rtmp://h/app/key", Video: Video{Codec: codec}})
		if (err == nil) != ok {
			t.Errorf("%s over RTMP: %v", codec, err)
		}
		if err := CheckCodec(Output{Kind: "stream", Dest: "srt://h:1", Video: Video{Codec: codec}}); err != nil {
			t.Errorf("%s over SRT: %v", codec, err)
		}
	}
}
