package live

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/media/es"
)

// The committed clips of nodes/media/es: 640x360, 30 frames.
var clipDir = filepath.Join("..", "es", "testdata")

// addrOf is where a listening input is bound.
func addrOf(t *testing.T, in Input) *net.UDPAddr {
	t.Helper()
	a, ok := in.(interface{ Addr() net.Addr })
	if !ok || a.Addr() == nil {
		t.Fatalf("%T has no address", in)
	}
	return a.Addr().(*net.UDPAddr)
}

// freeUDPPort is a UDP port nothing listens on just now (for a peer that
// listens, where onair calls).
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// sender is ffmpeg sending clip at its own rate to url in format, as a
// camera would.
func sender(t *testing.T, clip, format, url string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re",
		"-i", filepath.Join(clipDir, clip), "-c", "copy", "-f", format, url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("sender: %s", stderr.String())
		}
	})
	return cmd
}

// ourSender is onair send's pacer sending clip to w, on a goroutine.
func ourSender(t *testing.T, clip string, w io.WriteCloser) {
	f, err := os.Open(filepath.Join(clipDir, clip))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer f.Close()
		defer w.Close()
		p := &Pacer{Sleep: time.Sleep, Now: time.Now}
		if err := p.Send(w, f); err != nil {
			t.Errorf("sending: %v", err)
		}
	}()
}

// decodeAll decodes one connection of in to its end, returning each
// frame's MD5.
func decodeAll(t *testing.T, in Input, codec es.Codec) []string {
	t.Helper()
	conn, err := in.Connect()
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close()
	dec, err := media.OpenDecoder(media.DecodeConfig{Path: "test input", Live: conn, Codec: codec, Format: frame.NV12, Width: 640, Height: 360})
	if err != nil {
		t.Fatalf("decoder: %v", err)
	}
	defer dec.Close()
	f, _ := frame.New(frame.NV12, 640, 360)
	var sums []string
	for {
		if err := dec.Next(f); err != nil {
			t.Logf("stream ended: %v", err)
			break
		}
		s := md5.Sum(f.Bytes())
		sums = append(sums, hex.EncodeToString(s[:]))
	}
	return sums
}

// checkFrames: got is the frames ffmpeg decodes from clip, in order,
// each the same: all of them, or for a sender that does not send its last
// packets when it ends (ffmpeg's rtp_mpegts keeps a part-filled one, its
// SRT closes with packets queued), all but the last tail in display
// order (a coded picture missing at the end changes which pictures the
// decoder's reordering puts out last).
func checkFrames(t *testing.T, clip string, tail int, got []string) {
	t.Helper()
	want := peer.FrameMD5(t, filepath.Join(clipDir, clip), "nv12")
	if len(got) < len(want)-tail || len(got) > len(want) || tail == 0 && len(got) != len(want) {
		t.Fatalf("decoded %d frames, ffmpeg decodes %d from %s", len(got), len(want), clip)
	}
	for i := range want[:len(want)-tail] {
		if got[i] != want[i] {
			t.Fatalf("frame %d: md5 %s, ffmpeg's %s", i, got[i], want[i])
		}
	}
}

// TestLiveInputsDeliverEveryFrame: a real sender (ffmpeg) on loopback
// over each transport, and every frame onair decodes from it is the frame
// ffmpeg decodes from the file that was sent.
func TestLiveInputsDeliverEveryFrame(t *testing.T) {
	peer.NeedFFmpeg(t)
	const loss = 2 * time.Second // the sender's end is a loss, after this
	cases := []struct {
		name  string
		clip  string
		codec es.Codec
		start func(t *testing.T, clip string) Input
		tail  int // frames the sender may keep when it ends
	}{
		{"udp", "hevc8.ts", es.HEVC, func(t *testing.T, clip string) Input {
			in, err := NewUDP(UDPConfig{Config: Config{LossTimeout: loss}})
			if err != nil {
				t.Fatal(err)
			}
			sender(t, clip, "mpegts", fmt.Sprintf("udp://%s?pkt_size=1316", addrOf(t, in)))
			return in
		}, 0},
		{"rtp", "hevc8.ts", es.HEVC, func(t *testing.T, clip string) Input {
			in, err := NewUDP(UDPConfig{Config: Config{LossTimeout: loss}, RTP: true})
			if err != nil {
				t.Fatal(err)
			}
			sender(t, clip, "rtp_mpegts", fmt.Sprintf("rtp://%s", addrOf(t, in)))
			return in
		}, 3},
		{"srt listener", "hevc8.ts", es.HEVC, func(t *testing.T, clip string) Input {
			in, err := NewSRT(SRTConfig{Config: Config{LossTimeout: loss}, Listener: true, LatencyMs: 120, Passphrase: "correcthorsebattery", StreamID: "cam1"})
			if err != nil {
				t.Fatal(err)
			}
			sender(t, clip, "mpegts", fmt.Sprintf("srt://%s?mode=caller&latency=120000&passphrase=correcthorsebattery&streamid=cam1", addrOf(t, in)))
			return in
		}, 6},
		{"srt caller", "hevc8.ts", es.HEVC, func(t *testing.T, clip string) Input {
			port := freeUDPPort(t)
			sender(t, clip, "mpegts", fmt.Sprintf("srt://127.0.0.1:%d?mode=listener&latency=120000", port))
			in, err := NewSRT(SRTConfig{Config: Config{Address: "127.0.0.1", Port: port, LossTimeout: loss}, LatencyMs: 120})
			if err != nil {
				t.Fatal(err)
			}
			return in
		}, 6},
		{"rtp from onair send", "h264.ts", es.H264, func(t *testing.T, clip string) Input {
			in, err := NewUDP(UDPConfig{Config: Config{LossTimeout: loss}, RTP: true})
			if err != nil {
				t.Fatal(err)
			}
			w, err := DialUDP(addrOf(t, in).String(), true)
			if err != nil {
				t.Fatal(err)
			}
			ourSender(t, clip, w)
			return in
		}, 0},
		{"srt caller from onair send", "hevc8.ts", es.HEVC, func(t *testing.T, clip string) Input {
			in, err := NewSRT(SRTConfig{Config: Config{LossTimeout: loss}, Listener: true, LatencyMs: 120, StreamID: "cam2"})
			if err != nil {
				t.Fatal(err)
			}
			a := addrOf(t, in)
			go func() {
				w, err := OpenSRT(SRTConfig{Config: Config{Address: "127.0.0.1", Port: a.Port}, LatencyMs: 120, StreamID: "cam2"})
				if err != nil {
					t.Error(err)
					return
				}
				ourSender(t, clip, w)
			}()
			return in
		}, 0},
		{"stream", "h264.ts", es.H264, func(t *testing.T, clip string) Input {
			in, err := NewStream(StreamConfig{Config: Config{LossTimeout: loss}, URL: filepath.Join(clipDir, clip)})
			if err != nil {
				t.Fatal(err)
			}
			return in
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.start(t, c.clip)
			defer in.Close()
			hang := time.AfterFunc(time.Minute, func() { in.Close() }) // only keeps a broken build from hanging
			defer hang.Stop()
			got := decodeAll(t, in, c.codec)
			checkFrames(t, c.clip, c.tail, got)
			st := in.Stats().Snapshot()
			// On loopback SRT may lose a packet at the start, and retransmit it.
			if st.Bytes == 0 || st.Packets == 0 || st.Connections != 1 || st.Continuity != 0 || st.Lost != st.Recovered || st.State != "lost" {
				t.Errorf("stats after a whole stream: %+v", st)
			}
		})
	}
}

// TestAListenerThatLostItsSenderReadsLost: once a sender went quiet, the
// input reads "lost" for as long as it waits for the sender back (not
// "waiting", which is a source that never had one: the operator's page
// would show a camera that went away as one that never came), and "live"
// again from the first datagram of the sender's return.
func TestAListenerThatLostItsSenderReadsLost(t *testing.T) {
	in, err := NewUDP(UDPConfig{Config: Config{LossTimeout: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	st := in.Stats()
	if got := st.State(); got != Waiting {
		t.Fatalf("before any sender: %v, want waiting", got)
	}
	w, err := DialUDP(addrOf(t, in).String(), false)
	if err != nil {
		t.Fatal(err)
	}
	clip, err := os.ReadFile(filepath.Join(clipDir, "h264.ts"))
	if err != nil {
		t.Fatal(err)
	}
	for len(clip) >= 1316 { // the whole clip at once: the socket's buffer holds it, and the sender is done before the input reads
		if _, err := w.Write(clip[:1316]); err != nil {
			t.Fatal(err)
		}
		clip = clip[1316:]
	}
	w.Close()
	conn, err := in.Connect()
	if err != nil {
		t.Fatal(err)
	}
	if got := st.State(); got != Live {
		t.Fatalf("while the stream arrives: %v, want live", got)
	}
	if _, err := io.Copy(io.Discard, conn); !errors.Is(err, ErrLost) {
		t.Fatalf("reading to the sender's end: %v, want ErrLost", err)
	}
	conn.Close()
	back := make(chan error, 1)
	entered := make(chan struct{})
	go func() {
		close(entered)
		c, err := in.Connect() // waits for the sender's return
		if err == nil {
			c.Close()
		}
		back <- err
	}()
	<-entered
	for i := 0; i < 1000; i++ {
		if got := st.State(); got != Lost {
			t.Fatalf("waiting for the sender back (read %d): %v, want lost", i, got)
		}
		runtime.Gosched()
	}
	w2, err := DialUDP(addrOf(t, in).String(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	pkt := make([]byte, 188)
	pkt[0] = 0x47
	if _, err := w2.Write(pkt); err != nil {
		t.Fatal(err)
	}
	if err := <-back; err != nil {
		t.Fatalf("the sender's return: %v", err)
	}
	if got := st.State(); got != Live {
		t.Fatalf("after the sender's return: %v, want live", got)
	}
}
