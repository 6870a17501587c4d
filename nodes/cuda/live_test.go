package cuda

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media/es"
	"github.com/onairhq/onair/nodes/media/live"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// TestLiveFeedQueuesEachConnectionsAccessUnits: live_nvdec's receiver,
// without a GPU: a udp source fed twice by onair's own sender with a
// committed TS clip hands the decode loop, for each connection, its start
// (the clip's codec), then every access unit of the clip byte for byte and
// in order, then its end once the sender stopped for the loss timeout; a
// connection whose stream is not the size the source declares is refused
// with that said in the transport's error, and nothing of it is queued.
func TestLiveFeedQueuesEachConnectionsAccessUnits(t *testing.T) {
	clip := filepath.Join("..", "media", "es", "testdata", "hevc8.ts")
	want := accessUnits(t, clip)
	for _, c := range []struct {
		name string
		w, h int
		ok   bool
	}{{"declared size", 640, 360, true}, {"another size", 1280, 720, false}} {
		t.Run(c.name, func(t *testing.T) {
			port := freeUDP(t)
			tr, err := show.LiveTransportOf(&plan.Node{ID: "source.cam/live_nvdec", Kind: "live_nvdec",
				Params: map[string]any{"transport": "udp", "port": port, "loss_timeout_ms": 300}})
			if err != nil {
				t.Fatal(err)
			}
			f := &liveFeed{tr: tr, ls: &show.LiveState{}, sync: show.NewFrameSync(frame.Rational{Num: 30, Den: 1}), format: frame.NV12, w: c.w, h: c.h,
				items: make(chan liveItem, liveQueue), stop: make(chan struct{}), done: make(chan struct{})}
			if err := f.start(); err != nil {
				t.Fatal(err)
			}
			defer f.close()
			for round := 1; round <= 2; round++ {
				sendOnce(t, port, clip)
				if !c.ok {
					testwait.Until(t, time.Minute, "the refusal said", func() bool { return f.in.Stats().Err() != "" })
					if e := f.in.Stats().Err(); !bytes.Contains([]byte(e), []byte("1280x720")) && !bytes.Contains([]byte(e), []byte("640x360")) {
						t.Errorf("the refusal says %q, not the sizes", e)
					}
					if f.begun() {
						t.Fatal("a refused connection began")
					}
					return
				}
				testwait.Until(t, time.Minute, fmt.Sprintf("connection %d begun", round), f.begun)
				if f.next.codec != es.HEVC {
					t.Errorf("connection %d: codec %v, want HEVC", round, f.next.codec)
				}
				f.next = nil // as startDecoder takes it
				var got [][]byte
				testwait.Until(t, time.Minute, fmt.Sprintf("connection %d ended", round), func() bool {
					for {
						pk, err := f.unit()
						switch {
						case pk != nil:
							got = append(got, append([]byte(nil), pk.data...))
							pk.Release()
							continue
						case err == io.EOF:
							return true
						case err != nil:
							t.Fatalf("connection %d: %v", round, err)
						}
						return false
					}
				})
				if len(got) != len(want) {
					t.Fatalf("connection %d: %d access units, want the clip's %d", round, len(got), len(want))
				}
				for i := range got {
					if !bytes.Equal(got[i], want[i]) {
						t.Fatalf("connection %d: access unit %d differs from the clip's", round, i)
					}
				}
			}
			if n := f.in.Stats().Connections.Load(); n != 2 {
				t.Errorf("%d connections, want 2", n)
			}
		})
	}
}

// accessUnits are the clip's access units as the file path reads them.
func accessUnits(t *testing.T, path string) [][]byte {
	t.Helper()
	rd, err := es.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out [][]byte
	for {
		au, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, append([]byte(nil), au.Data...))
	}
}

// sendOnce sends the clip once at its own rate to a udp port on loopback.
func sendOnce(t *testing.T, port int, clip string) {
	t.Helper()
	w, err := live.DialUDP(fmt.Sprintf("127.0.0.1:%d", port), false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, err := os.Open(clip)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := (&live.Pacer{Sleep: time.Sleep, Now: time.Now}).Send(w, f); err != nil {
		t.Fatal(err)
	}
}

func freeUDP(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}
