package cuda_test

import (
	"context"
	"crypto/md5"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/compiler"
	gpu "github.com/onairhq/onair/cuda"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/showtest"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
	"github.com/onairhq/onair/nodes/media"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// busOn is a bus name that starts with prefix and whose address lands on
// GPU i of n (the compiler's rendezvous slot): the test says where each bus
// runs, the hash decides the name.
func busOn(prefix string, i, n int) string {
	for k := 0; ; k++ {
		name := fmt.Sprintf("%s%d", prefix, k)
		if compiler.Slot("bus."+name, n) == i {
			return name
		}
	}
}

// gpusShow is a 640x360 show on gpus GPUs: an HEVC clip on NVDEC (cam) and
// a raw clip uploaded (clip), each on an AUX bus of its own on GPU 0 and 1
// (declared first, so each source's chain runs there), and on a bus of the
// other GPU: cam full screen on Program (GPU 1), clip on a second AUX bus
// (GPU 0). Every bus is recorded.
func gpusShow(gpus int, buses [4]string, hevc string) string {
	return fmt.Sprintf(`
show {
  name       = "gpus"
  size       = "640x360"
  frame_rate = "30"
}
canvas {
  gpus = %d
}
source "hevc_file" "cam" {
  path = %q
  size = "640x360"
  loop = true
}
source "raw_file" "clip" {
  path = "clip.nv12"
  size = "640x360"
  loop = true
}
scene "cam" {
  layer { source = source.cam }
}
bus "aux" %[3]q { source = source.cam }
bus "aux" %[4]q { source = source.clip }
bus "program" %[5]q { scene = scene.cam }
bus "aux" %[6]q { source = source.clip }
output "record" %[3]q {
  bus  = bus.%[3]s
  path = "%[3]s.y4m"
}
output "record" %[4]q {
  bus  = bus.%[4]s
  path = "%[4]s.y4m"
}
output "record" %[5]q {
  bus  = bus.%[5]s
  path = "%[5]s.y4m"
}
output "record" %[6]q {
  bus  = bus.%[6]s
  path = "%[6]s.y4m"
}
`, gpus, hevc, buses[0], buses[1], buses[2], buses[3])
}

// crossingInto is, for each bus address, the plan's cross_gpu edges into
// its compositor, as "from→to" GPU pairs.
func crossingInto(p *plan.Plan) map[string][]plan.CrossGPU {
	addr := map[string]string{}
	for _, n := range p.Nodes {
		addr[n.ID] = n.Address
	}
	out := map[string][]plan.CrossGPU{}
	for _, e := range p.Edges {
		if e.Cross != nil {
			out[addr[e.To]] = append(out[addr[e.To]], *e.Cross)
		}
	}
	return out
}

// sourcePictures checks a recording against its source's pictures (by
// md5, in the source's order): after a start of pictures that are none of
// them (black, before the source's first frame), every picture is one, the
// next or the same as the last once the pacers settle. It returns how many
// are source pictures and which were seen.
func sourcePictures(t *testing.T, name string, got []*frame.Frame, ref []string) (int, map[string]bool) {
	t.Helper()
	const settle = 10 // a pacer may skip late pictures as the show starts
	idx := map[string]int{}
	for k, s := range ref {
		idx[s] = k
	}
	seen := map[string]bool{}
	n, prev := 0, -1
	for j, g := range got {
		sum := fmt.Sprintf("%x", md5.Sum(g.Bytes()))
		k, ok := idx[sum]
		switch {
		case !ok && n == 0:
			continue // the bus went on air before the source's first frame
		case !ok:
			t.Fatalf("%s: picture %d is none of its source's pictures", name, j)
		case n > settle && k != prev && k != (prev+1)%len(ref):
			t.Fatalf("%s: picture %d is the source's picture %d, after %d", name, j, k, prev)
		}
		n, prev, seen[sum] = n+1, k, true
	}
	return n, seen
}

// TestShowOnTwoStandInGPUsMatchesOne runs one show twice on the H200: on
// one GPU, then placed on two (canvas gpus = 2) with the second a context
// of onair's own on the same device (ONAIR_GPU_STANDIN=1), so that two of
// its buses draw a source decoded or uploaded on the other GPU. Every
// recording of both runs (Program and three AUX buses) is, picture by
// picture, byte for byte its source's frames in order (ffmpeg's decode of
// the HEVC clip; the raw file's pictures), and the two runs recorded the
// same pictures. On two GPUs each crossing frame is copied once: the peer
// copies in /status, by pair of GPUs, are the ticks the bus there drew
// with a new picture of the crossing source; on one GPU there are none. The plan's part runs everywhere; the rest needs
// the GPU.
func TestShowOnTwoStandInGPUsMatchesOne(t *testing.T) {
	dir := t.TempDir()
	clipRef := map[string][]string{}
	for _, pic := range writeRaw(t, filepath.Join(dir, "clip.nv12"), frame.NV12, media.Checker, 640, 360, 7, 10) {
		clipRef["clip"] = append(clipRef["clip"], fmt.Sprintf("%x", md5.Sum(pic)))
	}
	clips := filepath.Join("..", "media", "es", "testdata")
	b, err := os.ReadFile(filepath.Join(clips, "reference.md5"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var name, sum string
		var i int
		if n, _ := fmt.Sscanf(line, "%s %d %s", &name, &i, &sum); n == 3 && name == "hevc8.hevc" {
			clipRef["cam"] = append(clipRef["cam"], sum)
		}
	}
	hevc, _ := filepath.Abs(filepath.Join(clips, "hevc8.hevc"))
	buses := [4]string{busOn("camaux", 0, 2), busOn("clipaux", 1, 2), busOn("pgm", 1, 2), busOn("clipother", 0, 2)}
	shows := map[int]string{}
	plans := map[int]*plan.Plan{}
	for _, n := range []int{1, 2} {
		sub := filepath.Join(dir, fmt.Sprint(n))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(dir, "clip.nv12"), filepath.Join(sub, "clip.nv12")); err != nil {
			t.Fatal(err)
		}
		shows[n] = showtest.WriteShow(t, sub, gpusShow(n, buses, hevc))
		plans[n], _ = showtest.Compile(t, shows[n], nil, &nodecuda.Lowering)
	}
	// The plan on two GPUs: cam crosses from GPU 0 to Program on 1, clip
	// from 1 to the last AUX bus on 0; nothing else crosses, and nothing
	// on one GPU.
	pgm, other := "bus."+buses[2], "bus."+buses[3]
	want := map[string][]plan.CrossGPU{pgm: {{From: 0, To: 1}}, other: {{From: 1, To: 0}}}
	if got := crossingInto(plans[2]); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("edges crossing GPUs, by the bus they reach: %v, want %v", got, want)
	}
	if got := crossingInto(plans[1]); len(got) != 0 {
		t.Fatalf("a show on one GPU crosses: %v", got)
	}
	needGPU(t)
	t.Setenv(nodecuda.StandInEnv, "1")
	seen := map[int]map[string]map[string]bool{}
	for _, n := range []int{1, 2} {
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		s, err := nodecuda.Start(context.Background(), plans[n], nil, show.Options{BaseDir: filepath.Dir(shows[n])}, log)
		if err != nil {
			t.Fatal(err)
		}
		const pictures = 75 // two loops and a half of the HEVC clip
		showtest.Wait(t, s, "75 pictures recorded from every bus", func(sum show.Summary) bool {
			for _, o := range sum.Outputs {
				if o.Written < pictures {
					return false
				}
			}
			return true
		})
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		st := s.Status().(show.StatusReport)
		dev, _ := st.Device.(nodecuda.GPUStatus)
		seen[n] = map[string]map[string]bool{}
		framesOn := map[string]int{} // pictures of its source a bus drew
		for i, bus := range buses {
			src := []string{"cam", "clip", "cam", "clip"}[i]
			got := readY4M(t, filepath.Join(filepath.Dir(shows[n]), bus+".y4m"))
			k, set := sourcePictures(t, fmt.Sprintf("gpus = %d, %s", n, bus), got, clipRef[src])
			if k < pictures/2 || len(set) != len(clipRef[src]) {
				t.Fatalf("gpus = %d, %s: %d pictures of its source, %d of its %d frames", n, bus, k, len(set), len(clipRef[src]))
			}
			framesOn["bus."+bus], seen[n][bus] = k, set
		}
		if n == 1 {
			if len(dev.PeerCopies) != 0 {
				t.Fatalf("a show on one GPU made peer copies: %+v", dev.PeerCopies)
			}
			continue
		}
		ticks, repeats := map[string]uint64{}, map[string]uint64{}
		for _, bs := range st.Summary.Buses {
			ticks[bs.Address], repeats[bs.Address] = bs.Ticks, bs.Repeats+bs.StartRepeats
		}
		written := map[string]uint64{}
		for _, o := range st.Summary.Outputs {
			written["bus."+strings.TrimPrefix(o.Address, "output.")] = o.Written
		}
		if len(dev.PeerCopies) != 2 {
			t.Fatalf("peer copies by pair of GPUs: %+v, want 0→1 and 1→0", dev.PeerCopies)
		}
		for _, pc := range dev.PeerCopies {
			bus := map[int]string{1: pgm, 0: other}[pc.To]
			// One copy for each tick the bus drew with a new picture of the
			// crossing source: the ticks recorded with one (every tick,
			// unless the output dropped it) less those that repeated the
			// last, and one more at most for a tick drawn as the show
			// stopped, before it was counted.
			fresh := int64(framesOn[bus]) - int64(repeats[bus])
			lo, hi := fresh, fresh+max(int64(ticks[bus])-int64(written[bus]), 0)+1
			t.Logf("GPU %d → %d: %d copies (%.1f/s), %d bytes, %v ns of GPU time; %s drew %d ticks, %d recorded with its source's picture, %d repeats", pc.From, pc.To, pc.Copies, pc.CopiesPerSec, pc.Bytes, pc.GPUNs, bus, ticks[bus], framesOn[bus], repeats[bus])
			if pc.From != 1-pc.To || pc.Copies < lo || pc.Copies > hi {
				t.Errorf("GPU %d → %d: %d copies, want %d to %d (one per tick %s drew from the other GPU)", pc.From, pc.To, pc.Copies, lo, hi, bus)
			}
			if pc.Bytes < pc.Copies*640*540 || pc.GPUNs <= 0 {
				t.Errorf("GPU %d → %d: %d copies moved %d bytes in %d ns of GPU time", pc.From, pc.To, pc.Copies, pc.Bytes, pc.GPUNs)
			}
		}
	}
	for _, bus := range buses {
		if fmt.Sprint(seen[1][bus]) != fmt.Sprint(seen[2][bus]) {
			t.Errorf("%s recorded other pictures on two GPUs than on one", bus)
		}
	}
	// Without the stand-ins a show on two GPUs needs two: on a host of one
	// it is refused at the start, and the error says what to do.
	if d, err := gpu.Probe(); err == nil && len(d.Devices) == 1 {
		t.Setenv(nodecuda.StandInEnv, "")
		s, err := nodecuda.Start(context.Background(), plans[2], nil, show.Options{BaseDir: filepath.Dir(shows[2])}, nil)
		if err == nil {
			s.Stop()
			t.Fatal("a show on two GPUs started on a host of one without stand-ins")
		}
		if !strings.Contains(err.Error(), nodecuda.StandInEnv) {
			t.Errorf("the error does not say how to run it here: %v", err)
		}
	}
}
