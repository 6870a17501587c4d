package cpu

import (
	"bufio"
	"context"
	"crypto/md5"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

const clipDir = "../media/es/testdata"

// captured is what the capture node saw of one frame.
type captured struct {
	md5      string
	frameNum int64 // SourceFrame
	stamp    int64 // the frame number drawn in the picture; -1 if none
	id       uint16
}

// capture stands in for the pacer after a source: it records every frame
// the source hands on (MD5 of the picture, frame number, stamp) and passes
// it on unpaced, dropping what the fan-out has no room for.
type capture struct{ rec *recorder }

// recorder keeps what a capture saw, every frame in order.
type recorder struct {
	mu    sync.Mutex
	recs  []captured
	added chan struct{} // a token after each record
}

func (r *recorder) add(c captured) {
	r.mu.Lock()
	r.recs = append(r.recs, c)
	r.mu.Unlock()
	select {
	case r.added <- struct{}{}:
	default:
	}
}

// at waits for record i (a stuck source fails the test after eventBound
// rather than hanging it).
func (r *recorder) at(t *testing.T, i int) captured {
	t.Helper()
	stuck := time.NewTimer(eventBound)
	defer stuck.Stop()
	for {
		r.mu.Lock()
		if i < len(r.recs) {
			c := r.recs[i]
			r.mu.Unlock()
			return c
		}
		r.mu.Unlock()
		select {
		case <-r.added:
		case <-stuck.C:
			t.Fatalf("no frame %d from the source in %v", i, eventBound)
		}
	}
}

func (c *capture) Start(ctx *runtime.NodeContext[Frame]) error {
	drain := func() {
		for {
			f, ok := ctx.Get(0)
			if !ok {
				return
			}
			s := md5.Sum(f.Bytes())
			cp := captured{md5: hex.EncodeToString(s[:]), frameNum: f.SourceFrame, stamp: -1}
			if id, n, ok := media.ReadStamp(f, frame.Rect{W: f.Width, H: f.Height}); ok {
				cp.id, cp.stamp = id, int64(n)
			}
			c.rec.add(cp)
			if ok, _ := ctx.Put(0, f); !ok {
				f.Release()
			}
		}
	}
	_, err := ctx.Watch(ctx.Inputs[0].Produced(), func(r *runtime.Registration) { drain(); r.Rearm() })
	drain()
	return err
}

func (c *capture) Stop() {}

// startCaptured runs the show at path on the CPU backend with every pacer
// replaced by a capture.
func startCaptured(t *testing.T, path string) (*show.Show[Frame], *recorder) {
	t.Helper()
	p := compile(t, path, nil)
	be := Backend()
	rec := &recorder{added: make(chan struct{}, 1)}
	be.Kinds["realtime"] = func(_ *show.State, _ plan.Node, _ *runtime.NodeContext[Frame]) (runtime.Node[Frame], error) {
		return &capture{rec: rec}, nil
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	s, err := show.Start(context.Background(), be, p, nil, show.Options{BaseDir: filepath.Dir(path)}, log)
	if err != nil {
		t.Fatal(err)
	}
	return s, rec
}

func readReference(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(clipDir, "reference.md5"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) == 3 && !strings.HasPrefix(fs[0], "#") {
			ref[fs[0]] = append(ref[fs[0]], fs[2])
		}
	}
	return ref
}

func decodeShow(t *testing.T, dir, kind, clip, format, extra string) string {
	t.Helper()
	path := filepath.Join(dir, "show.hcl")
	src := `
show {
  name       = "decode"
  size       = "640x360"
  frame_rate = "30"
  format     = "` + format + `"
}
source "` + kind + `" "clip" {
  path   = "` + clip + `"
  loop   = true
  format = "` + format + `"
` + extra + `
}
scene "clip" {
  layer {
    source = source.clip
  }
}
bus "program" "pgm" {
  scene = scene.clip
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

// TestDecodeNodeIsByteExact: an hevc_file or h264_file source on the CPU
// backend hands on exactly the frames ffmpeg's framemd5 of its file lists
// (es/testdata/reference.md5, the reference NVDEC is checked against),
// pass after pass, numbered on across the loop.
func TestDecodeNodeIsByteExact(t *testing.T) {
	peer.NeedFFmpeg(t)
	ref := readReference(t)
	abs, _ := filepath.Abs(clipDir)
	for _, c := range []struct{ clip, kind, format string }{
		{"hevc8.hevc", "hevc_file", "nv12"},
		{"hevc10.hevc", "hevc_file", "p010"},
		{"h264.264", "h264_file", "nv12"},
		{"hevc8.ts", "hevc_file", "nv12"},
		{"hevc10.ts", "hevc_file", "p010"},
		{"h264.ts", "h264_file", "nv12"},
	} {
		t.Run(c.clip, func(t *testing.T) {
			want := ref[c.clip]
			if len(want) != 30 {
				t.Fatalf("reference.md5 lists %d frames of %s", len(want), c.clip)
			}
			s, rec := startCaptured(t, decodeShow(t, t.TempDir(), c.kind, filepath.Join(abs, c.clip), c.format, ""))
			defer s.Stop()
			for i := 0; i < 75; i++ {
				got := rec.at(t, i)
				if got.md5 != want[i%30] || got.frameNum != int64(i) {
					t.Fatalf("frame %d (pass %d): MD5 %s frame number %d; want %s, %d", i, i/30+1, got.md5, got.frameNum, want[i%30], i)
				}
			}
			if sum := s.State.Summary(); sum.Sources[0].Errors != 0 {
				t.Errorf("errors on a clean clip: %+v", sum.Sources[0])
			}
		})
	}
}

// TestDecodeNodeRecoversItsFile: a source whose file is missing reports it
// and sends black frames, on time, until the file appears; then it plays
// it, its frame numbers counting on.
func TestDecodeNodeRecoversItsFile(t *testing.T) {
	peer.NeedFFmpeg(t)
	for _, hold := range []bool{false, true} {
		dir := t.TempDir()
		extra := ""
		if hold {
			extra = `on_error = "hold"`
		}
		s, rec := startCaptured(t, decodeShow(t, dir, "hevc_file", "late.hevc", "nv12", extra))
		first := rec.at(t, 0)
		if first.stamp >= 0 {
			t.Fatalf("a frame of a missing file carries stamp %d", first.stamp)
		}
		src := s.State.Source("source.clip")
		if src == nil {
			t.Fatal("no source state")
		}
		if sum := s.State.Summary(); !strings.Contains(sum.Sources[0].LastError, "late.hevc") {
			t.Errorf("the missing file is not reported: %+v", sum.Sources[0])
		}
		data, _ := os.ReadFile(filepath.Join(clipDir, "hevc8.hevc"))
		os.WriteFile(filepath.Join(dir, "late.hevc"), data, 0o644)
		n := first.frameNum
		var played []captured
		for i := 1; len(played) < 35; i++ {
			c := rec.at(t, i)
			if c.frameNum != n+1 {
				t.Fatalf("frame number %d after %d", c.frameNum, n)
			}
			n = c.frameNum
			if c.stamp >= 0 || len(played) > 0 {
				played = append(played, c)
			}
		}
		s.Stop()
		for i, c := range played {
			if c.id != 1 || c.stamp != int64(i%30) {
				t.Fatalf("hold %v: picture %d of the recovered file carries %d/%d", hold, i, c.id, c.stamp)
			}
		}
		if sum := s.State.Summary(); sum.Sources[0].LastError != "" || sum.Sources[0].Errors == 0 {
			t.Errorf("hold %v: after recovery: %+v", hold, sum.Sources[0])
		}
	}
}

// TestFrameMetadataStampsOnlyWhatTheShowAsks: with canvas frame_metadata =
// ["decode_time"] the decoded frames carry when they were decoded, and the
// source's summary says how long before their release that was; with the
// default (none) nothing is stamped.
func TestFrameMetadataStampsOnlyWhatTheShowAsks(t *testing.T) {
	peer.NeedFFmpeg(t)
	abs, _ := filepath.Abs(filepath.Join(clipDir, "hevc8.hevc"))
	for _, keys := range []string{`["decode_time"]`, `[]`} {
		t.Run(keys, func(t *testing.T) {
			path := writeShow(t, `
show {
  name       = "stamps"
  size       = "640x360"
  frame_rate = "30"
}
canvas {
  frame_metadata = `+keys+`
}
source "hevc_file" "clip" {
  path = "`+abs+`"
  size = "640x360"
  loop = true
}
scene "clip" {
  layer { source = source.clip }
}
bus "program" "pgm" { scene = scene.clip }
output "null" "pgm" { bus = bus.pgm }
`)
			s := startShow(t, compile(t, path, nil))
			defer s.Stop()
			var src show.SourceSummary
			testwait.Until(t, testwait.Bound, "ten frames paced", func() bool {
				src = s.State.Summary().Sources[0]
				return src.Paced >= 10
			})
			switch keys {
			case `[]`:
				if src.StampAgesMs != nil {
					t.Errorf("stamps without frame_metadata: %v", src.StampAgesMs)
				}
			default:
				age, ok := src.StampAgesMs["decode_time"]
				if !ok || len(src.StampAgesMs) != 1 || age < 0 || age > 10_000 {
					t.Errorf("stamp ages %v: want decode_time only, decoded before its release", src.StampAgesMs)
				}
			}
		})
	}
}
