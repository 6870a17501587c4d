package cpu

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
)

// stamps decodes a recording or a received stream (ffmpeg, every picture
// as stored: no frame rate conversion) and reads the frame number stamped
// into each picture; lead is how many pictures at its start carry no stamp
// (the bus's black ticks before the source's first frame), and every
// picture after them must carry one of source id.
func stamps(t *testing.T, path string, id uint16) (nums []uint32, lead int) {
	t.Helper()
	y4m := path + ".y4m"
	if out, err := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-i", path, "-map", "0:v:0", "-vsync", "passthrough", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", y4m).CombinedOutput(); err != nil {
		t.Fatalf("decoding %s: %v: %s", path, err, out)
	}
	for i, f := range readY4M(t, y4m) {
		got, n, ok := media.ReadStamp(f, frame.Rect{W: f.Width, H: f.Height})
		switch {
		case !ok && i == lead:
			lead++
		case !ok || got != id:
			t.Fatalf("%s: picture %d has no stamp of source %d (%d, %v)", path, i, id, got, ok)
		default:
			nums = append(nums, n)
		}
	}
	return nums, lead
}

// inOrder checks that nums, the frame numbers of consecutive pictures,
// never go back, and that where they do not count up by one the bus said
// why: a tick that showed the last frame again (bus repeats) or frames the
// source made that no tick showed (bus skipped, source drops), which a
// loaded machine causes before any output. On an idle machine both are 0
// and every picture is the next frame.
func inOrder(nums []uint32, repeats, skips uint64) error {
	var rep, skip uint64
	for i := 1; i < len(nums); i++ {
		switch d := int64(nums[i]) - int64(nums[i-1]); {
		case d < 0:
			return fmt.Errorf("picture %d is frame %d after frame %d", i, nums[i], nums[i-1])
		case d == 0:
			rep++
		default:
			skip += uint64(d - 1)
		}
	}
	if rep > repeats || skip > skips {
		return fmt.Errorf("%d pictures repeat the one before and %d frame numbers are missing; the bus and source account for %d and %d", rep, skip, repeats, skips)
	}
	return nil
}

// statusOutput reads one output's summary from GET /status, as an
// operator's tools read it.
func statusOutput(t *testing.T, base, addr string) show.OutputSummary {
	t.Helper()
	resp, err := http.Get(base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var st show.StatusReport
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("GET /status: %v", err)
	}
	return outputOf(st.Summary, addr)
}

// TestStreamComesBackAfterItsDestinationWasDown: an SRT stream goes to
// ffmpeg listening on loopback beside a recording of the same bus. The
// receiver goes away; the stream's output reads "retrying" in /status,
// and stays down for 250 of the bus's ticks (10 s at 25 fps: the show's
// own clock) while it tries again. A receiver listens on the port again;
// the output reads "delivering" with one reconnect, and the stream
// arrives: every picture in order from its first to its last. The
// recording beside it misses nothing through all of it: every tick's
// picture, stamped frame numbers counting up by one, none dropped.
func TestStreamComesBackAfterItsDestinationWasDown(t *testing.T) {
	peer.NeedFFmpeg(t)
	port := freePort(t, "udp")
	path := writeShow(t, strings.Replace(deliveryShow, "OUTPUTS", fmt.Sprintf(`output "stream" "srt" {
  bus = bus.pgm
  url = "srt://127.0.0.1:%d?connect_timeout=500"
  video {
    gop     = 25
    bitrate = "2M"
  }
}
output "file" "rec" {
  bus  = bus.pgm
  path = "rec/pgm.mkv"
  video {
    gop     = 25
    bitrate = "2M"
  }
}`, port), 1))
	dir := filepath.Dir(path)
	listen := fmt.Sprintf("srt://127.0.0.1:%d?mode=listener", port)
	before, after := filepath.Join(dir, "before.ts"), filepath.Join(dir, "after.ts")
	grown := func(p string) func() bool {
		return func() bool { fi, err := os.Stat(p); return err == nil && fi.Size() > 20000 }
	}
	first := receiver(t, listen, before)
	s := startShow(t, compile(t, path, nil))
	srv, err := control.Start(s, control.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr()
	state := func(want string) func() bool {
		return func() bool { return statusOutput(t, base, "output.srt").State == want }
	}
	testwait.Until(t, eventBound, "the stream delivering", state("delivering"))
	testwait.Until(t, eventBound, "the first receiver's file to grow", grown(before))
	// The first receiver may have listened only after a first attempt
	// (a reconnect already): the outage's is counted from here.
	was := statusOutput(t, base, "output.srt").Reconnects

	stopReceiver(t, first)
	testwait.Until(t, eventBound, "the stream retrying without its receiver", state("retrying"))
	down := busOf(s.State.Summary(), "bus.pgm").Ticks
	waitShow(t, s, "250 ticks (10 s) and a second failed attempt with the receiver down", func(sum show.Summary) bool {
		return busOf(sum, "bus.pgm").Ticks >= down+250 && outputOf(sum, "output.srt").Errors >= 2
	})
	if got := statusOutput(t, base, "output.srt"); got.State != "retrying" || got.Reconnects != was {
		t.Fatalf("with the receiver down for 10 s the stream reads %q with %d reconnects; want retrying, %d", got.State, got.Reconnects, was)
	}

	second := receiver(t, listen, after)
	testwait.Until(t, eventBound, "the stream delivering again", state("delivering"))
	testwait.Until(t, eventBound, "the second receiver's file to grow", grown(after))
	back := busOf(s.State.Summary(), "bus.pgm").Ticks
	waitShow(t, s, "50 more ticks", ticksAtLeast("bus.pgm", back+50))
	stopReceiver(t, second)
	srt := statusOutput(t, base, "output.srt")
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	sum := s.State.Summary()
	if srt.Reconnects != was+1 || srt.Restarts < 2 {
		t.Errorf("/status has the stream at %d reconnects, %d restarts; want %d (one more) after at least 2 restarts", srt.Reconnects, srt.Restarts, was+1)
	}

	// What the bus and the source say a loaded machine cost before any
	// output: ticks that showed a frame again, frames no tick showed.
	bus, src := busOf(sum, "bus.pgm"), sourceOf(sum, "source.bars")
	repeats, skips := bus.Repeats+bus.StartRepeats, bus.Skipped+src.Drops+src.StartDrops

	// The stream comes back live: its first picture is the one that
	// waited for the new process, and the queue dropped the oldest while
	// it connected; from the second on, every picture.
	id := s.State.StampID("source.bars")
	got, _ := stamps(t, after, id)
	if len(got) < 50 {
		t.Fatalf("the stream after the outage: %d pictures; want at least 50", len(got))
	}
	if err := inOrder(got[1:], repeats, skips+srt.Drops); err != nil || got[1] <= got[0] {
		t.Errorf("the stream after the outage (%v...): %v", got[:5], err)
	}
	old, _ := stamps(t, before, id)
	if len(old) == 0 || got[0] < old[len(old)-1]+250 {
		t.Errorf("the stream after the outage starts at frame %d, the one before ended at %v; want 250 frames (10 s) between", got[0], old[len(old)-min(1, len(old)):])
	}

	// The recording: every frame its output took is in the file, in
	// order, and where numbers are missing a counter says why. While the
	// show kept time (no missed deadline, no frame the bus or source had
	// to skip) it took every tick: nothing dropped. A machine too busy for
	// the show itself starves the encoder too; its drops are then counted,
	// never silent.
	rec := outputOf(sum, "output.rec")
	nums, lead := stamps(t, filepath.Join(dir, "rec", "pgm.mkv"), id)
	if uint64(lead+len(nums)) != rec.Written || rec.Errors != 0 || rec.Restarts != 0 {
		t.Errorf("the recording holds %d pictures (%d before the first stamp); its output wrote %d, with %d errors and %d restarts: want every one, no error",
			lead+len(nums), lead, rec.Written, rec.Errors, rec.Restarts)
	}
	keptTime := bus.Missed+bus.StartMissed == 0 && skips == 0
	if keptTime && rec.Drops+rec.HandOffDrops != 0 {
		t.Errorf("the show kept time, yet the recording dropped %d frames (%d at the hand-off)", rec.Drops, rec.HandOffDrops)
	}
	if len(nums) == 0 || nums[len(nums)-1] < got[len(got)-1] {
		t.Fatalf("the recording's %d stamped pictures end before the stream's last frame %d", len(nums), got[len(got)-1])
	}
	if err := inOrder(nums, repeats, skips+rec.Drops+rec.HandOffDrops); err != nil {
		t.Errorf("the recording: %v", err)
	}
	if !keptTime {
		t.Logf("the machine was busy: %d missed deadlines, %d frames skipped before the outputs, %d dropped by the recording's encoder", bus.Missed+bus.StartMissed, skips, rec.Drops+rec.HandOffDrops)
	}
}
