package live

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onairhq/onair/internal/peer"
)

const clips = "../es/testdata"

// stampedCopy is the clip as `onair send` sends it with its stamps, at
// no pace (a clock that moves only when slept on), and the stamps read
// back from it by a live input's TS reader.
func stampedCopy(t *testing.T, clip string) ([]byte, []Stamp) {
	t.Helper()
	f, err := os.Open(filepath.Join(clips, clip))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	p := &Pacer{Sleep: clk.Sleep, Now: clk.Now, Stamp: true}
	var out bytes.Buffer
	if err := p.Send(&out, f); err != nil {
		t.Fatal(err)
	}
	var st Stats
	cc := continuity{stamps: &st.stamps}
	cc.feed(out.Bytes())
	var got []Stamp
	for {
		s, ok := st.NextStamp()
		if !ok {
			break
		}
		got = append(got, s)
	}
	return out.Bytes(), got
}

// TestStampedStreamReadsAsTheFile: with its send-time stamps in, the
// stream decodes, by ffmpeg, to exactly the file's frames (the stamps'
// PID is in no PMT: other receivers drop it) and shows no extra stream;
// onair reads one stamp per video frame back, with the frame's PTS, in
// presentation order, each sent when the pacer's clock said.
func TestStampedStreamReadsAsTheFile(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, clip := range []string{"hevc8.ts", "h264.ts"} {
		t.Run(clip, func(t *testing.T) {
			b, stamps := stampedCopy(t, clip)
			path := filepath.Join(t.TempDir(), "stamped.ts")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			orig := filepath.Join(clips, clip)
			want, got := peer.FrameMD5(t, orig, "nv12"), peer.FrameMD5(t, path, "nv12")
			if !slices.Equal(want, got) {
				t.Fatalf("ffmpeg decodes the stamped stream to %d frames unlike the file's %d", len(got), len(want))
			}
			streams := func(p string) string {
				out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=index,codec_type", "-of", "csv", p).Output()
				if err != nil {
					t.Fatalf("ffprobe %s: %v", p, err)
				}
				return strings.TrimSpace(string(out))
			}
			if a, b := streams(orig), streams(path); a != b {
				t.Errorf("ffprobe sees streams %q in the stamped stream, %q in the file", b, a)
			}
			pts, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "packet=pts", "-of", "csv=p=0", orig).Output()
			if err != nil {
				t.Fatal(err)
			}
			var wantPTS []int64
			for _, l := range strings.Fields(string(pts)) {
				l, _, _ = strings.Cut(l, ",") // a packet's side data follows its PTS
				if l == "" || l == "side_data" {
					continue
				}
				v, err := strconv.ParseInt(l, 10, 64)
				if err != nil {
					t.Fatalf("ffprobe's PTS %q: %v", l, err)
				}
				wantPTS = append(wantPTS, v)
			}
			slices.Sort(wantPTS)
			if len(stamps) != len(wantPTS) {
				t.Fatalf("%d stamps read back for %d video frames", len(stamps), len(wantPTS))
			}
			for i, s := range stamps {
				if s.PTS != wantPTS[i] {
					t.Fatalf("stamp %d: PTS %d, want %d (the frames in presentation order)", i, s.PTS, wantPTS[i])
				}
				if s.SentNs < time.Unix(1_700_000_000, 0).UnixNano() || s.DTS > s.PTS {
					t.Fatalf("stamp %d: %+v", i, s)
				}
			}
		})
	}
}

// TestStampQueueMatchesAcrossALoop: a sender that loops its file (PTS
// back to the start) has the first pass's stamps matched before the
// second's, each run in presentation order.
func TestStampQueueMatchesAcrossALoop(t *testing.T) {
	var q stampQueue
	for i, pts := range []int64{900000, 990000, 960000, 975000, 900000, 990000, 960000} { // decode order: I P B B, then I P B
		q.add(Stamp{PTS: pts, DTS: pts, SentNs: int64(i)})
	}
	var got []int64
	for {
		s, ok := q.pop()
		if !ok {
			break
		}
		got = append(got, s.SentNs)
	}
	if want := []int64{0, 2, 3, 1, 4, 6, 5}; !slices.Equal(got, want) {
		t.Fatalf("stamps matched in send order %v, want %v", got, want)
	}
}

// TestLatencyCountsClockSkewApart: a frame on air before it was sent
// (the two hosts' clocks differ) is clock skew, never a latency.
func TestLatencyCountsClockSkewApart(t *testing.T) {
	var l Latency
	sent := time.Unix(1_700_000_000, 0)
	for _, d := range []time.Duration{150, 130, -20, 170} {
		l.Observe(sent, sent.Add(d*time.Millisecond))
	}
	s := l.Snapshot()
	if s.Frames != 3 || s.ClockSkew != 1 || s.MaxMs != 170 || s.P50Ms != 150 || s.CurrentMs != 170 {
		t.Fatalf("%+v", s)
	}
	if i := slices.Index(LatencyBuckets, 0.15); s.Buckets[i] != 2 || s.Buckets[len(s.Buckets)-1] != 3 {
		t.Fatalf("histogram %v over %v", s.Buckets, LatencyBuckets)
	}
}

// FuzzStamp: any packet parses without reading past it; a stamp written
// reads back as itself; and any bytes fed to a TS reader that takes
// stamps leave it sound.
func FuzzStamp(f *testing.F) {
	var p [tsPacket]byte
	stampPacket(p[:], Stamp{PTS: 1<<33 - 1, DTS: 5, SentNs: -7}, 3)
	f.Add(p[:], int64(1), int64(2), int64(3))
	f.Add(p[:40], int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, b []byte, pts, dts, sent int64) {
		if s, ok := ParseStamp(b); ok && (s.PTS < 0 || s.PTS >= 1<<33 || len(b) < tsPacket) {
			t.Fatalf("%+v from %d bytes", s, len(b))
		}
		var q stampQueue
		cc := continuity{stamps: &q}
		cc.feed(b)
		want := Stamp{PTS: pts & (1<<33 - 1), DTS: dts & (1<<33 - 1), SentNs: sent}
		var pkt [tsPacket]byte
		stampPacket(pkt[:], want, byte(pts))
		if got, ok := ParseStamp(pkt[:]); !ok || got != want {
			t.Fatalf("wrote %+v, read %+v (%v)", want, got, ok)
		}
		videoTimes(b)
	})
}
