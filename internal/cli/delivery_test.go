package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/onairhq/onair/delivery"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
)

const recordingShow = `
show {
  name       = "rec"
  size       = "320x180"
  frame_rate = "25"
}
source "test_pattern" "bars" {}
scene "one" {
  layer { source = source.bars }
}
bus "program" "pgm" { scene = scene.one }
output "file" "rec" {
  bus  = bus.pgm
  path = "rec/pgm.mp4"
  video { gop = 10 }
}
MORE
`

// outputFrames reads an output's frames from GET /status.
func outputFrames(t *testing.T, addr, output string) uint64 {
	t.Helper()
	var st struct {
		Summary struct {
			Outputs []struct {
				Address string `json:"address"`
				Frames  uint64 `json:"frames"`
			} `json:"outputs"`
		} `json:"summary"`
	}
	resp, err := http.Get("http://" + addr + "/status")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return 0
	}
	for _, o := range st.Summary.Outputs {
		if o.Address == output {
			return o.Frames
		}
	}
	return 0
}

func countFrames(t *testing.T, path string) int {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("ffprobe %s: %q", path, out)
	}
	return n
}

// TestKilledRecordingStillPlays kills onair and its ffmpeg with SIGKILL
// (the whole process group, as a power cut or the OOM killer of a cgroup
// would) in the middle of an MP4 recording: the file plays, to within a
// second and a fragment of what had been encoded.
func TestKilledRecordingStillPlays(t *testing.T) {
	peer.NeedFFmpeg(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(path, []byte(strings.Replace(recordingShow, "MORE", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: exec.Command(onairBinary(t), "run", "-backend", "cpu", "-listen", "127.0.0.1:0", path), ended: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.ended) }()
	kill := func() { syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }
	t.Cleanup(func() { kill(); <-p.ended })
	addr := waitOutput(t, &p.out, `status: http://(\S+)/status`, p.ended)[1]
	var before uint64
	testwait.Until(t, eventBound, "three seconds into the encoder", func() bool {
		before = outputFrames(t, addr, "output.rec")
		return before >= 75
	})
	kill()
	<-p.ended
	got := countFrames(t, filepath.Join(dir, "rec", "pgm.mp4"))
	t.Logf("%d frames encoded before the kill, %d in the file", before, got)
	// What a kill loses: the encoder's delay (x264's lookahead and frame
	// threads, well under a second at a live preset) and the fragment
	// being written (a GOP, here 10 frames, or half a second).
	if got < int(before)-25-10 {
		t.Errorf("the killed recording plays %d frames; %d had been encoded before the kill (a second is 25, a GOP 10)", got, before)
	}
}

// TestRunFailsWhenAnOutputNeverDelivers: a stream whose encoder ffmpeg
// lists but cannot open (NVENC on a machine without its GPU) fails for
// the whole run; the recording beside it has every frame it was given;
// onair run says which output delivered nothing and exits 1.
func TestRunFailsWhenAnOutputNeverDelivers(t *testing.T) {
	peer.NeedFFmpeg(t)
	ff, err := delivery.ProbeFFmpeg("")
	if err != nil {
		t.Fatal(err)
	}
	if !ff.Encoders["h264_nvenc"] || ff.Resolve(delivery.Video{Codec: "h264", Encoder: "auto"}) == "h264_nvenc" {
		t.Skip("needs an ffmpeg with h264_nvenc on a machine whose GPU cannot run it")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	src := strings.Replace(recordingShow, "MORE", `output "stream" "nv" {
  bus = bus.pgm
  url = "udp://127.0.0.1:9"
  video { encoder = "h264_nvenc" }
}`, 1)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bg := runInBackground("run", "-backend", "cpu", "-listen", "127.0.0.1:0", path)
	addr := bg.waitOut(t, `status: http://(\S+)/status`)[1]
	testwait.Until(t, eventBound, "50 frames recorded", func() bool { return outputFrames(t, addr, "output.rec") >= 50 })
	testwait.Until(t, eventBound, "output.nv's failure logged", func() bool { return strings.Contains(bg.errs.String(), "output.nv") })
	if rc := bg.interrupt(t); rc != 1 {
		t.Errorf("exit %d, want 1:\n%s\n%s", rc, bg.out.String(), bg.errs.String())
	}
	if !strings.Contains(bg.errs.String(), "output.nv delivered no frame in the whole run") {
		t.Errorf("stderr does not say output.nv delivered nothing:\n%s", bg.errs.String())
	}
	m := waitOutput(t, &bg.out, `output\.rec\s+file\s+(\d+) frames`, bg.done)
	want, _ := strconv.Atoi(m[1])
	if got := countFrames(t, filepath.Join(dir, "rec", "pgm.mp4")); got != want {
		t.Errorf("the recording holds %d frames; the summary says %d went into its encoder", got, want)
	}
}

// TestPlanShowsTheFFmpegCommandLines: onair plan prints, under each
// delivery output, the ffmpeg arguments it runs (the settings with their
// defaults, the container's flags, the destination relative to the show),
// and validate names the ffmpeg that lacks an encoder, at its line.
func TestPlanShowsTheFFmpegCommandLines(t *testing.T) {
	peer.NeedFFmpeg(t)
	rc, out, errs := runCLI(t, "plan", "-backend", "cpu", "examples/delivery.hcl")
	if rc != 0 {
		t.Fatalf("plan: exit %d\n%s", rc, errs)
	}
	for _, want := range []string{
		"runs: ffmpeg [the bus's raw nv12 on pipe:0, its colour tags, -timecode of its first frame, its sound (48 kHz stereo float) on pipe:4] -map 0:v:0 -map 1:a:0 -c:v libx264 -preset veryfast -b:v 8000000 -maxrate 8000000 -bufsize 16000000 -g 60 -keyint_min 60 -sc_threshold 0 -c:a aac -b:a 128000 -f segment -segment_time 3600 -segment_format mp4 ",
		"movflags=+frag_keyframe+empty_moov+default_base_moof:frag_duration=500000 out/pgm-%03d.mp4\n",
		"-g 30 -keyint_min 30 -sc_threshold 0 -c:a aac -b:a 128000 -f mpegts -flush_packets 1 -mpegts_flags +resend_headers srt://127.0.0.1:9000\n",
		"-f hls -hls_time 2 -hls_list_size 6 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan lacks %q:\n%s", want, out)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "show.hcl")
	src := strings.Replace(recordingShow, "MORE", `output "stream" "x" {
  bus = bus.pgm
  url = "udp://127.0.0.1:9"
  video {
    encoder = "libnothing"
  }
}`, 1)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, _, errs = runCLI(t, "validate", path)
	if rc != 1 || !strings.Contains(errs, path+":21:5: error: Encoder not available") || !strings.Contains(errs, `has no encoder "libnothing"`) {
		t.Errorf("validate: exit %d\n%s", rc, errs)
	}
	// A stream's passphrase is the show's to use, not the plan's to print.
	src = strings.Replace(recordingShow, "MORE", `output "stream" "x" {
  bus = bus.pgm
  url = "srt://127.0.0.1:9000?passphrase=topsecret0123"
}`, 1)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, out, errs = runCLI(t, "plan", "-backend", "cpu", path)
	if rc != 0 || strings.Contains(out, "topsecret0123") || !strings.Contains(out, "srt://127.0.0.1:9000?passphrase=REDACTED\n") {
		t.Errorf("plan: exit %d, the passphrase printed or the URL missing:\n%s%s", rc, out, errs)
	}
}
