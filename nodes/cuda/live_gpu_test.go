package cuda_test

import (
	"crypto/md5"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/nodes/media/live"
	"github.com/onairhq/onair/nodes/show"
)

// TestLiveNVDECMatchesTheFilePath: a live source on the CUDA backend (udp,
// and srt where libsrt loads), fed in process by onair's own sender
// (live.Pacer, as `onair send` runs it) over loopback with a committed
// MPEG-TS clip, three passes back to back, twice, beside an hevc_file or
// h264_file source of the same clip: the file source's recording holds
// every frame of the clip (ffmpeg's reference, es/testdata/reference.md5),
// and every picture the live source showed, black aside, is byte for byte
// the next of those frames, in order, but for the pictures counted as
// frame-sync drops; when the sender stops the source is lost and shows
// black, and when it sends again its pictures come back and the error
// clears. No ffmpeg is needed.
func TestLiveNVDECMatchesTheFilePath(t *testing.T) {
	needGPU(t)
	clips := filepath.Join("..", "media", "es", "testdata")
	ref := map[string][]string{}
	b, err := os.ReadFile(filepath.Join(clips, "reference.md5"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var name, sum string
		var i int
		if n, _ := fmt.Sscanf(line, "%s %d %s", &name, &i, &sum); n == 3 && !strings.HasPrefix(name, "#") {
			ref[name] = append(ref[name], sum)
		}
	}
	for _, c := range []struct{ transport, clip, kind, format string }{
		{"udp", "hevc8.ts", "hevc_file", "nv12"},
		{"udp", "h264.ts", "h264_file", "nv12"},
		{"udp", "hevc10.ts", "hevc_file", "p010"},
		{"srt", "hevc8.ts", "hevc_file", "nv12"},
	} {
		t.Run(c.transport+"/"+c.clip, func(t *testing.T) {
			abs, _ := filepath.Abs(filepath.Join(clips, c.clip))
			liveMatchesFile(t, c.transport, abs, c.kind, c.format, ref[c.clip])
		})
	}
}

const livePasses = 3 // the clip sent this many times back to back, each round

func liveMatchesFile(t *testing.T, transport, clip, kind, format string, want []string) {
	if len(want) == 0 {
		t.Fatalf("no reference frames for %s", clip)
	}
	port := freeUDPPort(t)
	open := func() (io.WriteCloser, error) { return live.DialUDP(fmt.Sprintf("127.0.0.1:%d", port), false) }
	if transport == "srt" {
		cfg := live.SRTConfig{Config: live.Config{Address: "127.0.0.1", Port: port}}
		if in, err := live.NewSRT(live.SRTConfig{Config: live.Config{Port: freeUDPPort(t)}, Listener: true}); err != nil {
			t.Skipf("no SRT here: %v (carry libsrt.so.1.5 and LD_LIBRARY_PATH it)", err)
		} else {
			in.Close()
		}
		open = func() (io.WriteCloser, error) { return live.OpenSRT(cfg) }
	}
	dir := t.TempDir()
	hcl := fmt.Sprintf(`
show {
  name       = "live-nvdec"
  size       = "640x360"
  frame_rate = "30"
  format     = %[1]q
}
source %[2]q "cam" {
  port            = %[3]d
  format          = %[1]q
  loss_timeout_ms = 400
}
source %[4]q "file" {
  path   = %[5]q
  format = %[1]q
  loop   = true
}
bus "aux" "a0" { source = source.cam }
output "record" "r0" {
  bus  = bus.a0
  path = "r0.y4m"
}
bus "aux" "a1" { source = source.file }
output "record" "r1" {
  bus  = bus.a1
  path = "r1.y4m"
}
scene "one" {
  layer { source = source.file }
}
bus "program" "pgm" { scene = scene.one }
`, format, transport, port, kind, clip)
	path := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(path, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	// The sender: each round, the clip livePasses times over one
	// connection, paced by its clock, then nothing until the source is lost.
	var mu sync.Mutex
	var sendErr error
	rounds, sending := 0, false
	send := func() {
		defer func() { mu.Lock(); sending = false; mu.Unlock() }()
		w, err := open()
		if err == nil {
			p := &live.Pacer{Sleep: time.Sleep, Now: time.Now}
			for range livePasses {
				f, ferr := os.Open(clip)
				if ferr != nil {
					err = ferr
					break
				}
				err = p.Send(w, f)
				f.Close()
				if err != nil {
					break
				}
			}
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			mu.Lock()
			sendErr = err
			mu.Unlock()
		}
	}
	cam := func(s show.Summary) show.SourceSummary {
		for _, src := range s.Sources {
			if src.Address == "source.cam" {
				return src
			}
		}
		t.Fatal("no source.cam in the summary")
		return show.SourceSummary{}
	}
	sum := runShow(t, path, nil, func(s show.Summary) bool {
		mu.Lock()
		defer mu.Unlock()
		if sendErr != nil {
			t.Fatalf("sender: %v", sendErr)
		}
		src := cam(s)
		if sending || rounds > 0 && !strings.Contains(src.LastError, "lost") {
			return false // sending, or not lost yet after the last round
		}
		if rounds == 2 {
			return true
		}
		rounds++
		sending = true
		go send()
		return false
	})
	src := cam(sum)
	if src.Live == nil {
		t.Fatal("no live counts in the summary")
	}
	if !strings.Contains(src.LastError, "lost") || src.Live.ErrorFrames == 0 {
		t.Errorf("after the sender stopped: last error %q, %d on_error frames", src.LastError, src.Live.ErrorFrames)
	}
	if transport == "srt" && src.Live.Connections != 2 {
		t.Errorf("%d connections, want 2", src.Live.Connections)
	}
	black := blackSum(t, format)
	inRef := map[string]int{}
	for i, s := range want {
		inRef[s] = i
	}
	// The file path: every frame of the clip, each one of the reference's.
	seen := map[string]bool{}
	for i, m := range distinct(readY4M(t, filepath.Join(dir, "r1.y4m"))) {
		if _, ok := inRef[m]; !ok && m != black {
			t.Fatalf("the file source's recorded picture %d is none of the clip's frames", i)
		}
		seen[m] = true
	}
	for i, m := range want {
		if !seen[m] {
			t.Fatalf("the file source never showed frame %d of the clip", i)
		}
	}
	// The live path: runs of the stream's frames between black.
	var runs [][]string
	inBlack := true
	for _, m := range distinct(readY4M(t, filepath.Join(dir, "r0.y4m"))) {
		if m == black {
			inBlack = true
			continue
		}
		if inBlack {
			runs = append(runs, nil)
			inBlack = false
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], m)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs of the stream's pictures between black, want 2 (one a round)", len(runs))
	}
	shown, skipped := 0, 0
	for r, run := range runs {
		next := -1 // the clip frame the run is at, in the livePasses passes sent
		start := 0
		for i, m := range run {
			k, ok := inRef[m]
			if !ok || !seen[m] {
				t.Fatalf("round %d: picture %d is none of the frames the file path decoded", r+1, i)
			}
			switch {
			case next < 0:
				next, start = k, k
			default: // the next frame of the stream, or one after a drop
				for next%len(want) != k {
					next++
				}
			}
			if next >= livePasses*len(want) {
				t.Fatalf("round %d: picture %d (frame %d) is out of order", r+1, i, k)
			}
			next++
		}
		shown += len(run)
		skipped += next - start - len(run)
	}
	sent := 2 * livePasses * len(want)
	const tail = 12 // pictures of each round's start and end a loaded loopback may not bring whole
	if shown > sent || shown+int(src.Live.SyncDrops) < sent-2*tail || skipped > int(src.Live.SyncDrops)+2*tail {
		t.Errorf("%d pictures shown, %d skipped inside the runs and %d frame-sync drops of %d sent", shown, skipped, src.Live.SyncDrops, sent)
	}
	t.Logf("%s: %d pictures shown byte-exact, %d sync drops, %d on_error frames; live %+v", transport, shown, src.Live.SyncDrops, src.Live.ErrorFrames, src.Live.Snapshot)
}

// distinct is the MD5 of each recorded picture, a bus's repeats of one
// folded: the clips' consecutive frames all differ.
func distinct(frames []*frame.Frame) []string {
	var out []string
	for _, f := range frames {
		s := fmt.Sprintf("%x", md5.Sum(f.Bytes()))
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

func blackSum(t *testing.T, format string) string {
	t.Helper()
	ff := frame.NV12
	if format == "p010" {
		ff = frame.P010
	}
	f, err := frame.New(ff, 640, 360)
	if err != nil {
		t.Fatal(err)
	}
	f.Fill()
	return fmt.Sprintf("%x", md5.Sum(f.Bytes()))
}

// freeUDPPort is a UDP port free on loopback now.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}
