package cpu

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/show"
)

// deliveryShow is a bus of bars at 25 fps; OUTPUTS is replaced by the
// outputs under test.
const deliveryShow = `
show {
  name       = "delivery"
  size       = "320x180"
  frame_rate = "25"
}
source "test_pattern" "bars" {}
scene "one" {
  layer { source = source.bars }
}
bus "program" "pgm" { scene = scene.one }
OUTPUTS
`

// probed is what ffprobe reads of a file's first video stream.
type probed struct {
	Streams []struct {
		CodecName      string            `json:"codec_name"`
		CodecType      string            `json:"codec_type"`
		Width          int               `json:"width"`
		Height         int               `json:"height"`
		ColorRange     string            `json:"color_range"`
		ColorSpace     string            `json:"color_space"`
		ColorPrimaries string            `json:"color_primaries"`
		ColorTransfer  string            `json:"color_transfer"`
		ReadFrames     string            `json:"nb_read_frames"`
		Tags           map[string]string `json:"tags"`
	} `json:"streams"`
	Format struct {
		Tags map[string]string `json:"tags"`
	} `json:"format"`
}

// ffprobe decodes every frame of the first video stream of path.
func ffprobe(t *testing.T, path string) (probed, int) {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_streams", "-show_format", "-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var p probed
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("ffprobe %s: %v\n%s", path, err, out)
	}
	if len(p.Streams) == 0 {
		t.Fatalf("ffprobe %s: no video stream", path)
	}
	n, _ := strconv.Atoi(p.Streams[0].ReadFrames)
	return p, n
}

// TestFileOutputsRecordEveryFrameInEachContainer records one bus into a
// file of each container, stops the show (which finishes each file) and
// reads every file back with ffprobe: the codec asked for, the show's
// size and colour tags, every frame that went into the encoder, and the
// timecode of the first frame where the container carries one.
func TestFileOutputsRecordEveryFrameInEachContainer(t *testing.T) {
	peer.NeedFFmpeg(t)
	files := []struct{ name, path, codec, want, tcTag string }{
		{"mp4", "rec/pgm.mp4", "h264", "h264", "stream"},
		{"mov", "rec/pgm.mov", "hevc", "hevc", "stream"},
		{"mkv", "rec/pgm.mkv", "h264", "h264", "format"},
		{"ts", "rec/pgm.ts", "h264", "h264", ""}, // MPEG-TS carries no timecode
	}
	var outs strings.Builder
	for _, f := range files {
		fmt.Fprintf(&outs, "output \"file\" %q {\n  bus = bus.pgm\n  path = %q\n  video {\n    codec = %q\n    bitrate = \"500k\"\n  }\n}\n", f.name, f.path, f.codec)
	}
	path := writeShow(t, strings.Replace(deliveryShow, "OUTPUTS", outs.String(), 1))
	s := startShow(t, compile(t, path, nil))
	waitShow(t, s, "50 frames into each encoder", func(sum show.Summary) bool {
		for _, f := range files {
			if outputOf(sum, "output."+f.name).Written < 50 {
				return false
			}
		}
		return true
	})
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	bus := busOf(sum, "bus.pgm")
	first := s.State.TimecodeAt(bus.FirstTick).String()
	for _, f := range files {
		out := outputOf(sum, "output."+f.name)
		if out.Errors > 0 {
			t.Errorf("%s: %d errors, the last: %s", f.name, out.Errors, out.LastError)
		}
		p, n := ffprobe(t, filepath.Join(filepath.Dir(path), f.path))
		v := p.Streams[0]
		if v.CodecName != f.want || v.Width != 320 || v.Height != 180 {
			t.Errorf("%s: %s %dx%d, want %s 320x180", f.name, v.CodecName, v.Width, v.Height, f.want)
		}
		if v.ColorRange != "tv" || v.ColorSpace != "bt709" || v.ColorPrimaries != "bt709" || v.ColorTransfer != "bt709" {
			t.Errorf("%s: colour %s/%s/%s/%s, want tv/bt709/bt709/bt709", f.name, v.ColorRange, v.ColorSpace, v.ColorPrimaries, v.ColorTransfer)
		}
		if uint64(n) != out.Written {
			t.Errorf("%s: %d frames in the file, %d went into the encoder", f.name, n, out.Written)
		}
		var tc string
		switch f.tcTag {
		case "stream":
			tc = v.Tags["timecode"]
		case "format":
			tc = p.Format.Tags["TIMECODE"]
		}
		// The process starts with the timecode of the first frame it is
		// given: a tick of the bus no later than the one from which on it
		// took every frame it wrote (the output starts after its bus).
		if f.tcTag != "" && !labelsATick(s, bus, tc, bus.FirstTick+int64(bus.Ticks)-int64(out.Written+out.Drops)) {
			t.Errorf("%s: timecode %q names no tick of the bus from its first, %s, to the one its frames start at", f.name, tc, first)
		}
	}
}

// TestSegmentedFileRollsToPlayableFiles rolls a recording every second:
// at least two files, each named by its start and each playable on its
// own, holding every frame between them.
func TestSegmentedFileRollsToPlayableFiles(t *testing.T) {
	peer.NeedFFmpeg(t)
	path := writeShow(t, strings.Replace(deliveryShow, "OUTPUTS", `output "file" "rec" {
  bus     = bus.pgm
  path    = "rec/pgm.mp4"
  segment = "1s"
  video { gop = 25 }
}`, 1))
	s := startShow(t, compile(t, path, nil))
	waitShow(t, s, "three seconds encoded", func(sum show.Summary) bool { return outputOf(sum, "output.rec").Written >= 75 })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	segs, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "rec", "pgm-*.mp4"))
	if len(segs) < 2 {
		t.Fatalf("segments %v: want at least two for three seconds at segment = 1s", segs)
	}
	total := 0
	for _, seg := range segs {
		_, n := ffprobe(t, seg)
		if n == 0 {
			t.Errorf("%s has no frames", seg)
		}
		total += n
	}
	if out := outputOf(s.State.Summary(), "output.rec"); uint64(total) != out.Written {
		t.Errorf("%d frames in %d files, %d went into the encoder", total, len(segs), out.Written)
	}
}

// freePort is a loopback port nothing listens on just now.
func freePort(t *testing.T, network string) int {
	t.Helper()
	c, err := net.ListenPacket(network, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// receiver is ffmpeg taking a stream and copying it into a TS file.
func receiver(t *testing.T, url, out string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-i", url, "-c", "copy", "-flush_packets", "1", "-f", "mpegts", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// stopReceiver ends the receiver as Ctrl-C does, so it writes what it has.
func stopReceiver(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
}

// TestStreamOutputsReachAReceiver sends the bus over UDP and over SRT to
// ffmpeg on loopback. The SRT receiver starts only after the output has
// failed to connect: the output tries again with backoff and the stream
// arrives once the receiver listens. ffprobe reads H.264 at the show's
// size from what each receiver wrote.
func TestStreamOutputsReachAReceiver(t *testing.T) {
	peer.NeedFFmpeg(t)
	udp, srt := freePort(t, "udp"), freePort(t, "udp")
	path := writeShow(t, strings.Replace(deliveryShow, "OUTPUTS", fmt.Sprintf(`output "stream" "udp" {
  bus = bus.pgm
  url = "udp://127.0.0.1:%d?pkt_size=1316"
  video { gop = 10 }
}
output "stream" "srt" {
  bus = bus.pgm
  url = "srt://127.0.0.1:%d?connect_timeout=500"
  video { gop = 10 }
}`, udp, srt), 1))
	dir := filepath.Dir(path)
	udpOut, srtOut := filepath.Join(dir, "udp.ts"), filepath.Join(dir, "srt.ts")
	udpRecv := receiver(t, fmt.Sprintf("udp://127.0.0.1:%d?timeout=5000000", udp), udpOut)
	s := startShow(t, compile(t, path, nil))
	waitShow(t, s, "the SRT output failing to connect", func(sum show.Summary) bool { return outputOf(sum, "output.srt").Errors > 0 })
	srtRecv := receiver(t, fmt.Sprintf("srt://127.0.0.1:%d?mode=listener", srt), srtOut)
	grew := func(p string) func() bool {
		return func() bool { fi, err := os.Stat(p); return err == nil && fi.Size() > 5000 }
	}
	testwait.Until(t, eventBound, "the UDP receiver's file to grow", grew(udpOut))
	testwait.Until(t, eventBound, "the SRT receiver's file to grow", grew(srtOut))
	// The receivers stop while the stream still flows: a receiver reading
	// nothing would wait for its read to time out.
	stopReceiver(t, udpRecv)
	stopReceiver(t, srtRecv)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	if out := outputOf(sum, "output.srt"); out.Restarts == 0 {
		t.Errorf("the SRT output was not started again after failing to connect: %+v", out)
	}
	for _, got := range []string{udpOut, srtOut} {
		p, n := ffprobe(t, got)
		if v := p.Streams[0]; v.CodecName != "h264" || v.Width != 320 || v.Height != 180 || n == 0 {
			t.Errorf("%s: %s %dx%d, %d frames; want h264 320x180 and frames", got, v.CodecName, v.Width, v.Height, n)
		}
	}
}

// freeTCPPort is a loopback TCP port nothing listens on just now.
func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestRTMPOutputReachesAServer pushes the bus over RTMP to ffmpeg as the
// server (-listen 1), as to a platform's ingest: FLV with H.264 arrives.
func TestRTMPOutputReachesAServer(t *testing.T) {
	peer.NeedFFmpeg(t)
	port := freeTCPPort(t)
	path := writeShow(t, strings.Replace(deliveryShow, "OUTPUTS", fmt.Sprintf(`output "stream" "rtmp" {
  bus = bus.pgm
  url = "rtmp://127.0.0.1:%d/live/key"
  video { gop = 10 }
}`, port), 1))
	got := filepath.Join(filepath.Dir(path), "rtmp.ts")
	server := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-listen", "1", "-i", fmt.Sprintf("rtmp://127.0.0.1:%d/live/key", port), "-c", "copy", "-flush_packets", "1", "-f", "mpegts", got)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	s := startShow(t, compile(t, path, nil))
	testwait.Until(t, eventBound, "the RTMP server's file to grow", func() bool { fi, err := os.Stat(got); return err == nil && fi.Size() > 5000 })
	stopReceiver(t, server)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	p, n := ffprobe(t, got)
	if v := p.Streams[0]; v.CodecName != "h264" || v.Width != 320 || v.Height != 180 || n == 0 {
		t.Errorf("%s: %s %dx%d, %d frames; want h264 320x180 and frames", got, v.CodecName, v.Width, v.Height, n)
	}
}

// TestHLSOutputWritesAPlaylistFFprobeReads writes an HLS directory and
// reads it back through its playlist: from the directory, and from the
// status server (serve = true), where nothing but the playlist and its
// segments is served.
func TestHLSOutputWritesAPlaylistFFprobeReads(t *testing.T) {
	peer.NeedFFmpeg(t)
	path := writeShow(t, strings.Replace(deliveryShow, "OUTPUTS", `output "hls" "web" {
  bus     = bus.pgm
  dir     = "hls"
  segment = "1s"
  serve   = true
  video { gop = 25 }
}`, 1))
	s := startShow(t, compile(t, path, nil))
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	playlist := filepath.Join(filepath.Dir(path), "hls", "index.m3u8")
	testwait.Until(t, eventBound, "a playlist of two segments", func() bool {
		b, err := os.ReadFile(playlist)
		return err == nil && strings.Count(string(b), "#EXTINF") >= 2
	})
	base := "http://" + srv.Addr() + "/hls/web/"
	// A live playlist has no end: ffprobe reads its streams, not every frame.
	live, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", base+"index.m3u8").Output()
	if got := strings.TrimSpace(string(live)); err != nil || !strings.HasPrefix(got, "h264,320,180") {
		t.Errorf("ffprobe %sindex.m3u8: %q, %v; want h264,320,180", base, got, err)
	}
	for _, bad := range []string{"..%2Fshow.hcl", "show.hcl", "index.m3u8.tmp"} {
		if resp, err := http.Get(base + bad); err != nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s%s: %v %v; want 404", base, bad, resp.Status, err)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	p, n := ffprobe(t, playlist)
	if v := p.Streams[0]; v.CodecName != "h264" || v.Width != 320 || n < 25 {
		t.Errorf("%s: %s %dx%d, %d frames; want h264 320x180, a segment's frames at least", playlist, v.CodecName, v.Width, v.Height, n)
	}
}

// TestBadEncoderFailsAlone: an output naming an encoder ffmpeg lacks
// reports it (status, its error) and takes no frame, while a recording
// beside it writes every frame it is given and the bus misses nothing for
// it.
func TestBadEncoderFailsAlone(t *testing.T) {
	peer.NeedFFmpeg(t)
	path := writeShow(t, strings.Replace(deliveryShow, "OUTPUTS", `output "stream" "bad" {
  bus = bus.pgm
  url = "udp://127.0.0.1:9"
  video { encoder = "libnosuchencoder" }
}
output "file" "rec" {
  bus  = bus.pgm
  path = "rec/pgm.mkv"
}`, 1))
	s := startShow(t, compile(t, path, nil))
	waitShow(t, s, "50 frames recorded", func(sum show.Summary) bool { return outputOf(sum, "output.rec").Written >= 50 })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	bad, rec := outputOf(sum, "output.bad"), outputOf(sum, "output.rec")
	if bad.Written != 0 || bad.Errors == 0 || !strings.Contains(bad.LastError, `no encoder "libnosuchencoder"`) {
		t.Errorf("the bad output: %+v; want no frames and an error naming the encoder", bad)
	}
	if rec.Errors != 0 {
		t.Errorf("the recording beside it has errors: %+v", rec)
	}
	if rec.Bytes == 0 {
		t.Errorf("the recording reports no bytes out of its encoder: %+v", rec)
	}
	evs, _, _ := s.State.Events().Since(0, nil)
	var told bool
	for _, e := range evs {
		if d, ok := e.Data.(map[string]any); ok && e.Type == "output_error" && d["output"] == "output.bad" && strings.Contains(fmt.Sprint(d["error"]), "libnosuchencoder") {
			told = true
		}
	}
	if !told {
		t.Errorf("no output_error event for output.bad among %d events", len(evs))
	}
	if _, n := ffprobe(t, filepath.Join(filepath.Dir(path), "rec", "pgm.mkv")); uint64(n) != rec.Written {
		t.Errorf("the recording holds %d frames; %d went into its encoder", n, rec.Written)
	}
}

// labelsATick says whether tc is the timecode of a tick of bus from its
// first to last.
func labelsATick(s *show.Show[Frame], bus show.BusSummary, tc string, last int64) bool {
	for k := bus.FirstTick; k <= last; k++ {
		if s.State.TimecodeAt(k).String() == tc {
			return true
		}
	}
	return false
}

// TestFFmpegOutputPathsAreRelativeToTheShow: a relative path in an ffmpeg
// output's args lands beside the show file, like every other path of a
// show, not in the directory onair was started from.
func TestFFmpegOutputPathsAreRelativeToTheShow(t *testing.T) {
	peer.NeedFFmpeg(t)
	path := writeShow(t, strings.Replace(deliveryShow, "OUTPUTS", `output "ffmpeg" "rel" {
  bus  = bus.pgm
  args = ["-c:v", "mpeg4", "-f", "matroska", "rel-out.mkv"]
}`, 1))
	s := startShow(t, compile(t, path, nil))
	waitShow(t, s, "25 frames encoded", func(sum show.Summary) bool { return outputOf(sum, "output.rel").Written >= 25 })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, n := ffprobe(t, filepath.Join(filepath.Dir(path), "rel-out.mkv")); uint64(n) != outputOf(s.State.Summary(), "output.rel").Written {
		t.Errorf("rel-out.mkv beside the show holds %d frames; %d were encoded", n, outputOf(s.State.Summary(), "output.rel").Written)
	}
	if _, err := os.Stat("rel-out.mkv"); err == nil {
		os.Remove("rel-out.mkv")
		t.Error("rel-out.mkv was written in the working directory")
	}
}
