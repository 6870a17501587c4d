package cpu

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media/live"
)

// TestLiveBadInputSaysWhy: a live source fed what is no stream it can
// show — garbage datagrams on its port, a transport stream with no video
// in it, an SRT caller that connects and sends nothing — reports why in
// its error (the summary /status serves, the lost event's text), and goes
// on sending its on_error picture at its rate: the show stays on air.
func TestLiveBadInputSaysWhy(t *testing.T) {
	peer.NeedFFmpeg(t)
	audio := filepath.Join(t.TempDir(), "audio.ts")
	if out, err := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=1000:duration=20", "-c:a", "mp2", "-f", "mpegts", audio).CombinedOutput(); err != nil {
		t.Fatalf("making an audio-only TS: %v: %s", err, out)
	}
	for _, c := range []struct {
		name, kind, attrs string
		lossMs            int
		feed              func(t *testing.T, port int, stop <-chan struct{})
		why               string
	}{
		{"garbage", "udp", "", 300, func(t *testing.T, port int, stop <-chan struct{}) {
			w, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Error(err)
				return
			}
			defer w.Close()
			junk := []byte(strings.Repeat("not a transport stream ", 50))
			for {
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond): // a sender's pace
				}
				w.Write(junk)
			}
		}, "sync byte"},
		{"no video", "udp", "", 2000, func(t *testing.T, port int, stop <-chan struct{}) {
			cmd := exec.Command("ffmpeg", "-v", "error", "-re", "-i", audio, "-c", "copy", "-f", "mpegts", fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", port))
			if err := cmd.Start(); err != nil {
				t.Error(err)
				return
			}
			<-stop
			cmd.Process.Kill()
			cmd.Wait()
		}, "only stream types 0x03"},
		{"connects and sends nothing", "srt", "", 300, func(t *testing.T, port int, stop <-chan struct{}) {
			var w interface{ Close() error }
			for w == nil {
				c, err := live.OpenSRT(live.SRTConfig{Config: live.Config{Address: "127.0.0.1", Port: port}})
				if err == nil {
					w = c
				}
				select {
				case <-stop:
					if w != nil {
						w.Close()
					}
					return
				default:
				}
			}
			<-stop
			w.Close()
		}, "connected but sent nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			port := freePort(t, "udp")
			s, _ := startCaptured(t, liveShow(t, c.kind, fmt.Sprintf("  port = %d\n  loss_timeout_ms = %d\n", port, c.lossMs)))
			defer s.Stop()
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() { defer close(done); c.feed(t, port, stop) }()
			defer func() { close(stop); <-done }()
			testwait.Until(t, eventBound, "the source to say why it is lost", func() bool {
				return strings.Contains(s.State.Summary().Sources[0].LastError, c.why)
			})
			sum := s.State.Summary().Sources[0]
			t.Logf("%s: %s", c.name, sum.LastError)
			n := sum.Live.ErrorFrames
			testwait.Until(t, eventBound, "on_error frames going on", func() bool {
				return s.State.Summary().Sources[0].Live.ErrorFrames >= n+10
			})
		})
	}
}
