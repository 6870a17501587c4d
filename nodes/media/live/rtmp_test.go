package live

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gortmplib"
	"github.com/bluenviron/gortmplib/pkg/codecs"

	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media/es"
)

// newRTMPTest is an RTMP listener on a port the system chose, with key,
// and the URL a publisher pushes to, up to the key.
func newRTMPTest(t *testing.T, key string) (Input, string) {
	t.Helper()
	in, err := NewRTMP(RTMPConfig{Config: Config{LossTimeout: 2 * time.Second}, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	hang := time.AfterFunc(time.Minute, func() { in.Close() }) // only keeps a broken build from hanging
	t.Cleanup(func() { hang.Stop() })
	return in, "rtmp://" + in.(interface{ Addr() net.Addr }).Addr().String() + "/live/"
}

// TestRTMPPublisherDeliversEveryFrame: ffmpeg publishing a clip as FLV
// over RTMP with the source's key, and every frame onair decodes is the
// frame ffmpeg decodes from the clip.
func TestRTMPPublisherDeliversEveryFrame(t *testing.T) {
	peer.NeedFFmpeg(t)
	in, url := newRTMPTest(t, "cam1")
	sender(t, "h264.ts", "flv", url+"cam1")
	got := decodeAll(t, in, 0)
	checkFrames(t, "h264.ts", 0, got)
	st := in.Stats().Snapshot()
	if st.Bytes == 0 || st.Packets == 0 || st.Connections != 1 || st.Refused != 0 || st.State != "lost" {
		t.Errorf("stats after a whole stream: %+v", st)
	}
}

// TestRTMPEnhancedHEVC: an Enhanced RTMP publisher (gortmplib's client,
// as ffmpeg here, 5.1, muxes no HEVC into FLV) sending an HEVC clip's
// access units: every frame onair decodes is the frame ffmpeg decodes
// from the clip.
func TestRTMPEnhancedHEVC(t *testing.T) {
	peer.NeedFFmpeg(t)
	in, base := newRTMPTest(t, "cam1")
	rd, err := es.Open(filepath.Join(clipDir, "hevc8.hevc"), es.HEVC)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var aus [][][]byte
	params := map[byte][]byte{}
	for {
		au, err := rd.Next()
		if err != nil {
			break
		}
		var nals [][]byte
		for i, at := range au.NALs {
			end := len(au.Data)
			if i+1 < len(au.NALs) {
				end = int(au.NALs[i+1]) - 3
			}
			nal := append([]byte(nil), au.Data[at:end]...)
			for len(nal) > 0 && nal[len(nal)-1] == 0 { // the next start code's leading zero
				nal = nal[:len(nal)-1]
			}
			if typ := nal[0] >> 1 & 0x3f; typ >= 32 && typ <= 34 {
				params[typ] = nal
				continue // sent in the sequence header
			}
			nals = append(nals, nal)
		}
		aus = append(aus, nals)
	}
	u, _ := url.Parse(strings.TrimSuffix(base, "/") + "#cam1")
	go func() {
		c := &gortmplib.Client{URL: u, Publish: true}
		if err := c.Initialize(context.Background()); err != nil {
			t.Errorf("publisher: %v", err)
			return
		}
		defer c.Close()
		track := &gortmplib.Track{Codec: &codecs.H265{VPS: params[32], SPS: params[33], PPS: params[34]}}
		w := &gortmplib.Writer{Conn: c, Tracks: []*gortmplib.Track{track}}
		if err := w.Initialize(); err != nil {
			t.Errorf("publisher: %v", err)
			return
		}
		for i, au := range aus {
			ts := time.Duration(i) * time.Second / 30
			if err := w.WriteH265(track, ts, ts, au); err != nil {
				t.Errorf("publisher: access unit %d: %v", i, err)
				return
			}
		}
	}()
	checkFrames(t, "hevc8.hevc", 0, decodeAll(t, in, 0))
}

// TestRTMPRefusesAWrongKeyAndASecondPublisher: a publisher with another
// key is refused (ffmpeg fails, the input counts it and says why), and
// while one publishes a second on the same key is refused; once the first
// is killed, a publisher that comes again is the next connection and its
// frames decode.
func TestRTMPRefusesAWrongKeyAndASecondPublisher(t *testing.T) {
	peer.NeedFFmpeg(t)
	in, url := newRTMPTest(t, "cam1")
	wrong := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-i", filepath.Join(clipDir, "h264.ts"), "-c", "copy", "-f", "flv", url+"other")
	if out, err := wrong.CombinedOutput(); err == nil {
		t.Fatalf("a publisher with a wrong key was taken: %s", out)
	}
	st := in.Stats()
	if st.Refused.Load() != 1 || !strings.Contains(st.Err(), "wrong stream key") || strings.Contains(st.Err(), "cam1") {
		t.Fatalf("after a wrong key: %d refused, error %q", st.Refused.Load(), st.Err())
	}

	first := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re", "-stream_loop", "-1",
		"-i", filepath.Join(clipDir, "h264.ts"), "-c", "copy", "-f", "flv", url+"cam1")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { first.Process.Kill(); first.Wait() }()
	conn, err := in.Connect()
	if err != nil {
		t.Fatal(err)
	}
	second := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-i", filepath.Join(clipDir, "h264.ts"), "-c", "copy", "-f", "flv", url+"cam1")
	if out, err := second.CombinedOutput(); err == nil {
		t.Fatalf("a second publisher on a taken key was taken: %s", out)
	}
	if st.Refused.Load() != 2 || !strings.Contains(st.Err(), "second publisher") || st.State() != Live {
		t.Fatalf("after a second publisher: %d refused, state %v, error %q", st.Refused.Load(), st.State(), st.Err())
	}
	buf := make([]byte, 4096)
	for st.Bytes.Load() == 0 { // the first publisher's stream is read all the while
		if _, err := conn.Read(buf); err != nil {
			t.Fatalf("reading the first publisher: %v", err)
		}
	}
	first.Process.Kill()
	first.Wait()
	for {
		if _, err := conn.Read(buf); err != nil {
			break // the publisher's end
		}
	}
	conn.Close()
	testwait.Until(t, 5*time.Second, "the key free again", func() bool { return st.State() == Lost })
	sender(t, "h264.ts", "flv", url+"cam1")
	checkFrames(t, "h264.ts", 0, decodeAll(t, in, es.H264))
	if n := st.Connections.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestRTMPRefusesAnEmptyKey: a source without a usable key says what to
// give.
func TestRTMPRefusesAnEmptyKey(t *testing.T) {
	for _, key := range []string{"", "a/b"} {
		if _, err := NewRTMP(RTMPConfig{Key: key}); err == nil || !strings.Contains(err.Error(), "stream key") {
			t.Errorf("key %q: %v", key, err)
		}
	}
}

// TestRTMPNoPublisherOnGarbage: bytes that are no RTMP handshake are a
// connection refused, said in the input's error, and no connection; a
// thousand of them leave no goroutine behind.
func TestRTMPNoPublisherOnGarbage(t *testing.T) {
	base := runtime.NumGoroutine()
	in, url := newRTMPTest(t, "k")
	for i := 0; i < 1000; i++ {
		c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "rtmp://"), "/live/"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(c, strings.Repeat("GET / HTTP/1.1\r\n", 200))
		c.Close()
	}
	testwait.Until(t, 5*time.Second, "the garbage reported", func() bool { return strings.Contains(in.Stats().Err(), "no RTMP publisher") })
	if n := in.Stats().Connections.Load(); n != 0 {
		t.Errorf("%d connections from garbage", n)
	}
	// The listener's accept loop (and the test's timer) stay.
	testwait.Until(t, 10*time.Second, "the garbage connections' goroutines gone", func() bool { return runtime.NumGoroutine() <= base+2 })
}
