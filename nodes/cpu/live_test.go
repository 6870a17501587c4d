package cpu

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
)

// liveShow writes a show of one live source of kind with attrs.
func liveShow(t *testing.T, kind, attrs string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "show.hcl")
	src := `
show {
  name       = "live"
  size       = "640x360"
  frame_rate = "30"
}
source "` + kind + `" "cam" {
` + attrs + `
}
scene "cam" {
  layer {
    source = source.cam
  }
}
bus "program" "pgm" {
  scene = scene.cam
}
output "null" "pgm" {
  bus = bus.pgm
}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// send runs ffmpeg sending clip once at its own rate to url in format,
// and waits for it to end.
func send(t *testing.T, clip, format, url string) {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re", "-i", filepath.Join(clipDir, clip),
		"-c", "copy", "-f", format, url).CombinedOutput()
	if err != nil {
		t.Fatalf("sender: %v: %s", err, out)
	}
}

func blackMD5(t *testing.T) string {
	f, err := frame.New(frame.NV12, 640, 360)
	if err != nil {
		t.Fatal(err)
	}
	f.Fill()
	s := md5.Sum(f.Bytes())
	return hex.EncodeToString(s[:])
}

// runs splits what a source handed on into its runs of stream frames and
// of on_error (black) frames, in order.
func runs(recs []captured, black string) (runs [][]string, blacks []int) {
	inBlack := true
	for _, c := range recs {
		switch {
		case c.md5 == black && inBlack && len(runs) > 0:
			blacks[len(blacks)-1]++
		case c.md5 == black:
			if len(runs) > 0 {
				inBlack = true
				blacks = append(blacks, 1)
			}
		default:
			if inBlack {
				runs = append(runs, nil)
				inBlack = false
			}
			runs[len(runs)-1] = append(runs[len(runs)-1], c.md5)
		}
	}
	return runs, blacks
}

// TestLiveSourceLosesAndRestoresItsStream: a udp source, and an rtmp
// one with its stream key, on the CPU backend fed by a real sender
// (ffmpeg) show every frame ffmpeg decodes from what was sent, in order
// (each frame the pacer did not take counted as a sync drop); when the
// sender ends the source is lost (reported) and sends black at its rate,
// and when a sender comes again its frames play again and the error
// clears.
func TestLiveSourceLosesAndRestoresItsStream(t *testing.T) {
	peer.NeedFFmpeg(t)
	udp, tcp := freePort(t, "udp"), freeTCPPort(t)
	for _, c := range []struct {
		kind, attrs, clip, format, url string
	}{
		{"udp", fmt.Sprintf("  port = %d\n", udp), "hevc8.ts", "mpegts", fmt.Sprintf("udp://127.0.0.1:%d?pkt_size=1316", udp)},
		// ffmpeg here (5.1) muxes no HEVC into FLV: H.264, as most encoders send.
		{"rtmp", fmt.Sprintf("  port = %d\n  key = \"cam1\"\n", tcp), "h264.ts", "flv", fmt.Sprintf("rtmp://127.0.0.1:%d/live/cam1", tcp)},
	} {
		t.Run(c.kind, func(t *testing.T) { losesAndRestores(t, c.kind, c.attrs, c.clip, c.format, c.url) })
	}
}

func losesAndRestores(t *testing.T, kind, attrs, clip, format, url string) {
	s, rec := startCaptured(t, liveShow(t, kind, attrs+"  loss_timeout_ms = 300\n"))
	defer s.Stop()
	want := peer.FrameMD5(t, filepath.Join(clipDir, clip), "nv12")
	black := blackMD5(t)
	for pass := 1; pass <= 2; pass++ {
		send(t, clip, format, url)
		testwait.Until(t, eventBound, fmt.Sprintf("the source lost after pass %d", pass), func() bool {
			return strings.Contains(s.State.Summary().Sources[0].LastError, "lost")
		})
		testwait.Until(t, eventBound, "black frames after the loss", func() bool {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			r, b := runs(rec.recs, black)
			return len(r) == pass && len(b) == pass
		})
	}
	rec.mu.Lock()
	got, _ := runs(rec.recs, black)
	rec.mu.Unlock()
	sum := s.State.Summary().Sources[0]
	if sum.Live == nil {
		t.Fatal("no live counts in the summary")
	}
	drops := int(sum.Live.SyncDrops)
	seen := 0
	for i, r := range got {
		j := 0
		for _, m := range r { // in order, only counted drops between
			for j < len(want) && want[j] != m {
				j++
			}
			if j == len(want) {
				t.Fatalf("pass %d: a frame that is none of the stream's, or out of order", i+1)
			}
			j++
		}
		seen += len(r)
	}
	if seen > 2*len(want) || seen+drops < 2*len(want) {
		t.Errorf("%d frames shown and %d sync drops of %d sent", seen, drops, 2*len(want))
	}
	if sum.Live.Connections != 2 || sum.Live.ErrorFrames == 0 || sum.Live.Continuity != 0 {
		t.Errorf("live counts: %+v", sum.Live)
	}
}

// TestLiveKindsShowEveryFrame: an srt listener (encrypted, its passphrase
// from the environment) fed by ffmpeg as a caller, and an MP4 file through
// stream: every frame the source shows (black ones aside, before the
// stream arrives) is the next frame ffmpeg decodes from what was sent,
// but for the frames counted as sync drops. The loss timeout is long
// enough that a loaded machine's stall of ffmpeg is not a loss.
func TestLiveKindsShowEveryFrame(t *testing.T) {
	peer.NeedFFmpeg(t)
	t.Setenv("ONAIR_TEST_SRT_PASSPHRASE", "correcthorsebattery")
	mp4 := filepath.Join(t.TempDir(), "clip.mp4")
	if out, err := exec.Command("ffmpeg", "-v", "error", "-i", filepath.Join(clipDir, "h264.ts"), "-c", "copy", mp4).CombinedOutput(); err != nil {
		t.Fatalf("making an MP4: %v: %s", err, out)
	}
	srtPort := freePort(t, "udp")
	for _, c := range []struct {
		name, kind, attrs, clip string
		tail                    int // frames of the end a sender may not send whole
		send                    func(t *testing.T)
	}{
		{"srt", "srt", fmt.Sprintf("  port = %d\n  passphrase_env = \"ONAIR_TEST_SRT_PASSPHRASE\"\n  loss_timeout_ms = 2000\n", srtPort), "hevc8.ts", 6, func(t *testing.T) {
			send(t, "hevc8.ts", "mpegts", fmt.Sprintf("srt://127.0.0.1:%d?mode=caller&latency=120000&passphrase=correcthorsebattery", srtPort))
		}},
		{"stream mp4", "stream", fmt.Sprintf("  url = %q\n  loss_timeout_ms = 2000\n", mp4), "h264.ts", 0, func(*testing.T) {}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := liveShow(t, c.kind, c.attrs)
			s, rec := startCaptured(t, path)
			defer s.Stop()
			black := blackMD5(t)
			want := peer.FrameMD5(t, filepath.Join(clipDir, c.clip), "nv12")
			c.send(t)
			testwait.Until(t, eventBound, "the stream played to its end", func() bool {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				got, b := runs(rec.recs, black)
				// Lost, or connected again (stream opens the file again once
				// it ends) with the first connection's frames all shown.
				live := s.State.Summary().Sources[0].Live
				return len(b) >= 1 || live.Connections >= 2 && len(got) > 0 && len(got[0])+int(live.SyncDrops) >= len(want)-c.tail
			})
			rec.mu.Lock()
			got, _ := runs(rec.recs, black)
			rec.mu.Unlock()
			sum := s.State.Summary().Sources[0]
			j := 0
			first := got[0][:min(len(got[0]), len(want)-c.tail-int(sum.Live.SyncDrops))] // the first connection's whole frames
			for i, m := range first {
				for j < len(want) && want[j] != m {
					j++
				}
				if j == len(want) {
					t.Fatalf("frame %d shown is none of the stream's, or out of order", i)
				}
				j++
			}
			if n := len(got[0]) + int(sum.Live.SyncDrops); n < len(want)-c.tail {
				t.Errorf("%d frames shown and %d sync drops of %d sent", len(got[0]), sum.Live.SyncDrops, len(want))
			}
			if sum.Live.Connections < 1 || sum.Live.Bytes == 0 {
				t.Errorf("live counts: %+v", sum.Live)
			}
			if strings.Contains(fmt.Sprint(s.State.Summary()), "correcthorsebattery") {
				t.Error("the passphrase is in the summary")
			}
		})
	}
}

// TestRTMPSourceReportsAWrongKey: a publisher with another key is refused
// (ffmpeg fails), and the source, on_error meanwhile, says why in its
// status and counts it.
func TestRTMPSourceReportsAWrongKey(t *testing.T) {
	peer.NeedFFmpeg(t)
	port := freeTCPPort(t)
	s, _ := startCaptured(t, liveShow(t, "rtmp", fmt.Sprintf("  port = %d\n  key = \"cam1\"\n  loss_timeout_ms = 300\n", port)))
	defer s.Stop()
	out, err := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-i", filepath.Join(clipDir, "h264.ts"),
		"-c", "copy", "-f", "flv", fmt.Sprintf("rtmp://127.0.0.1:%d/live/nope", port)).CombinedOutput()
	if err == nil {
		t.Fatalf("a publisher with a wrong key was taken: %s", out)
	}
	testwait.Until(t, eventBound, "the refusal in the source's status", func() bool {
		src := s.State.Summary().Sources[0]
		return strings.Contains(src.LastError, "wrong stream key") && src.Live != nil && src.Live.Refused == 1
	})
	if src := s.State.Summary().Sources[0]; strings.Contains(fmt.Sprint(src), "cam1") || src.Live.Connections != 0 {
		t.Errorf("after a wrong key: %+v", src)
	}
}
