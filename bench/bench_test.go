package bench

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	nodecuda "github.com/onairhq/onair/nodes/cuda"
	"github.com/onairhq/onair/nodes/media/live"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// The CUDA backend's device report says what it page-locked: bench adds
// it to /proc's VmLck and VmPin, which do not see cuMemHostAlloc.
var _ PageLocker = nodecuda.GPUStatus{}

// A window's decode figures are the decode loops' counters between its two
// readings: pictures, and CPU µs a picture by call where the loops clocked
// them.
func TestBenchDecodeFiguresAreTheWindows(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := Snapshot{at: t0, decode: map[string]int64{"pictures": 1000, "parse_ns": 90e6, "decode_ns": 20e6, "map_ns": 5e6}}
	b := Snapshot{at: t0.Add(10 * time.Second), decode: map[string]int64{"pictures": 3000, "parse_ns": 190e6, "decode_ns": 70e6, "map_ns": 31e6}}
	r := b.Since(a)
	if r.DecodePictures != 2000 {
		t.Errorf("%d pictures in the window, want 2000", r.DecodePictures)
	}
	want := map[string]float64{"parse": 50, "decode": 25, "map": 13}
	for k, v := range want {
		if got := r.DecodeCPUUs[k]; got != v {
			t.Errorf("%s: %.2f µs a picture, want %.2f", k, got, v)
		}
	}
	if _, ok := r.DecodeCPUUs["copy"]; ok {
		t.Errorf("a call the loops did not clock has a figure: %v", r.DecodeCPUUs)
	}
	var out strings.Builder
	r.Write(&out)
	if !strings.Contains(out.String(), "2000 pictures (200 a second); CPU µs a picture: parse 50.0 (cuvidDecodePicture 25.0 of it), map 13.0") {
		t.Errorf("the table says:\n%s", out.String())
	}
	if none := (Snapshot{at: t0}).Since(Snapshot{at: t0.Add(-time.Second)}); none.DecodePictures != 0 || none.DecodeCPUUs != nil {
		t.Errorf("a show without decode loops: %+v", none)
	}
}

// A thread adds into the group of what the plan runs on it: the loops by
// the traits of their nodes (and a backend's decode loop by its kind), the
// threads the runtime does not run by the plan's loop they are named after
// or by the owner that names them.
func TestGroupsOfAPlan(t *testing.T) {
	f, err := os.Open("../compiler/testdata/golden/mixed.cuda.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var p plan.Plan
	if err := json.NewDecoder(f).Decode(&p); err != nil {
		t.Fatal(err)
	}
	g := GroupsOf(&p)
	for loop, want := range map[string]string{"default": groupDefault, "outputs": groupOutputsLoop, "pacing_0": groupPacing, "pacing_1": groupPacing, "decode_0": groupDecode, "not_in_the_plan": groupLoops} {
		if got := g.loop(loop); got != want {
			t.Errorf("loop %s adds into %q, want %q", loop, got, want)
		}
	}
	for comm, want := range map[string]string{"onair-decode_0": groupDecode, "onair-pacing_1": groupPacing, "onair-nvdec": groupDecode, "onair-browser": groupSources, "cuda-EvtHandlr": groupDriver, "onair": groupOther} {
		if got := g.unclaimed(comm); got != want {
			t.Errorf("thread %s adds into %q, want %q", comm, got, want)
		}
	}
	for kind, want := range map[string]string{"compositor": groupCompositors, "output_record": groupOutputs, "dec_video": groupDecode, "demux": groupSources} {
		if got := g.node(kind); got != want {
			t.Errorf("a %s node's own threads add into %q, want %q", kind, got, want)
		}
	}
}

// A window's live figures are its live sources' counters between the two
// readings, summed; a source that is not live at the end is counted, and
// a show without live sources has none.
func TestBenchLiveFiguresAreTheWindows(t *testing.T) {
	t0 := time.Unix(100, 0)
	src := func(addr string, underruns, drops, errFrames uint64, packets, lost int64, state string) show.SourceSummary {
		l := &show.LiveSummary{SyncDrops: drops, ErrorFrames: errFrames}
		l.Packets, l.Lost, l.State = packets, lost, state
		return show.SourceSummary{Address: addr, Underruns: underruns, Live: l}
	}
	a := Snapshot{at: t0, sum: show.Summary{Sources: []show.SourceSummary{src("source.a", 1, 2, 0, 100, 1, "live"), src("source.b", 0, 0, 5, 50, 0, "live"), {Address: "source.file", Underruns: 3}}}}
	b := Snapshot{at: t0.Add(10 * time.Second), sum: show.Summary{Sources: []show.SourceSummary{src("source.a", 2, 5, 0, 400, 3, "live"), src("source.b", 0, 1, 35, 60, 0, "lost"), {Address: "source.file", Underruns: 9}}}}
	r := b.Since(a)
	want := Live{Sources: 2, SyncDrops: 4, Underruns: 1, ErrorFrames: 30, Packets: 310, Lost: 2, NotLive: 1}
	if r.Live == nil || *r.Live != want {
		t.Fatalf("live figures %+v, want %+v", r.Live, want)
	}
	var out strings.Builder
	r.Write(&out)
	if !strings.Contains(out.String(), "live sources           2: 4 frame-sync drops, 1 underruns (repeats), 30 on_error frames; 310 packets, 2 lost") {
		t.Errorf("the table says:\n%s", out.String())
	}
	if none := (Snapshot{at: t0}).Since(Snapshot{at: t0.Add(-time.Second)}); none.Live != nil {
		t.Errorf("a show without live sources: %+v", none.Live)
	}
	if strings.Contains(out.String(), "live latency") {
		t.Errorf("a latency line with no stamped frames:\n%s", out.String())
	}

	// Stamped frames: the window's count, and the slowest source's figures.
	withLatency := func(s show.SourceSummary, lat live.LatencySnapshot) show.SourceSummary {
		l := *s.Live
		l.Latency = &lat
		s.Live = &l
		return s
	}
	a.sum.Sources[0] = withLatency(a.sum.Sources[0], live.LatencySnapshot{Frames: 100, P50Ms: 150, P99Ms: 170, MaxMs: 400})
	b.sum.Sources[0] = withLatency(b.sum.Sources[0], live.LatencySnapshot{Frames: 400, P50Ms: 155, P99Ms: 180, MaxMs: 400})
	b.sum.Sources[1] = withLatency(b.sum.Sources[1], live.LatencySnapshot{Frames: 250, P50Ms: 160, P99Ms: 175, MaxMs: 190, ClockSkew: 2})
	r = b.Since(a)
	if l := r.Live; l.LatencyFrames != 550 || l.LatencyP50Ms != 160 || l.LatencyP99Ms != 180 || l.LatencyMaxMs != 400 || l.ClockSkew != 2 {
		t.Fatalf("latency figures %+v", l)
	}
	out.Reset()
	r.Write(&out)
	if !strings.Contains(out.String(), "live latency         550 frames: p50 160.0 ms, p99 180.0 ms, max 400.0 ms") {
		t.Errorf("the table says:\n%s", out.String())
	}
}
