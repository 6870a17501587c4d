package compiler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/plan"
)

// gpuShow writes a show on gpus GPUs of an H200 host: for each bus name (an
// AUX bus: it reads only what its scene shows, where a Program bus reads
// every source it can cut to),
// n 1080p30 HEVC sources of its own (source.<bus>_cam[i]) on one scene,
// plus the sources every bus shows (source.shared[i], shared of them).
func gpuShow(t *testing.T, gpus int, buses []string, n, shared int) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "show {\n  name = \"gpus\"\n  size = \"1920x1080\"\n  frame_rate = \"30\"\n  profile = \"nvidia_h200\"\n}\ncanvas {\n  gpus = %d\n}\n", gpus)
	if shared > 0 {
		fmt.Fprintf(&b, "source \"hevc_file\" \"shared\" {\n  count = %d\n  path = \"s${count.index}.hevc\"\n}\n", shared)
	}
	for _, bus := range buses {
		fmt.Fprintf(&b, "source \"hevc_file\" \"%s_cam\" {\n  count = %d\n  path = \"%s${count.index}.hevc\"\n}\n", bus, n, bus)
		fmt.Fprintf(&b, "scene \"%s\" {\n", bus)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "  layer {\n    source = source.%s_cam[%d]\n  }\n", bus, i)
		}
		for i := 0; i < shared; i++ {
			fmt.Fprintf(&b, "  layer {\n    source = source.shared[%d]\n  }\n", i)
		}
		fmt.Fprintf(&b, "}\nbus \"aux\" \"%s\" {\n  scene = scene.%s\n}\noutput \"null\" \"%s\" {\n  bus = bus.%s\n}\n", bus, bus, bus, bus)
	}
	path := filepath.Join(t.TempDir(), "gpus.hcl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// busesOn picks bus names whose addresses land on the given GPUs of n, in
// order: the test says which GPU each bus is on, the hash decides names.
func busesOn(t *testing.T, n int, gpus ...int) []string {
	t.Helper()
	var out []string
	for _, want := range gpus {
		for i := 0; ; i++ {
			name := fmt.Sprintf("b%d_%d", want, i)
			if Slot("bus."+name, n) == want && !contains(out, name) {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// gpuOf is every node's GPU by address (a source's or bus's nodes agree,
// or the test fails).
func gpuOf(t *testing.T, p *plan.Plan) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, n := range p.Nodes {
		i, ok := n.Placement.OnGPU()
		if !ok {
			t.Fatalf("%s has no GPU on a show of several", n.ID)
		}
		if j, seen := out[n.Address]; seen && j != i {
			t.Fatalf("%s's nodes are split over GPUs %d and %d", n.Address, i, j)
		}
		out[n.Address] = i
	}
	return out
}

func crossings(p *plan.Plan) []plan.Edge {
	var out []plan.Edge
	for _, e := range p.Edges {
		if e.Cross != nil {
			out = append(out, e)
		}
	}
	return out
}

// Two buses on two GPUs, each with sources of its own that fit: every
// source runs on its bus's GPU, nothing crosses, each GPU carries its half.
func TestGPUsShowThatFits(t *testing.T) {
	buses := busesOn(t, 2, 0, 1)
	res := compile(t, load(t, gpuShow(t, 2, buses, 20, 0), nil), Options{})
	at := gpuOf(t, res.Plan)
	for gi, bus := range buses {
		for i := 0; i < 20; i++ {
			if got := at[fmt.Sprintf("source.%s_cam[%d]", bus, i)]; got != gi {
				t.Errorf("source.%s_cam[%d] on GPU %d, its bus on %d", bus, i, got, gi)
			}
		}
		if at["output."+bus] != gi {
			t.Errorf("output.%s on GPU %d, its bus on %d", bus, at["output."+bus], gi)
		}
	}
	if c := crossings(res.Plan); len(c) != 0 {
		t.Errorf("nothing must cross, got %v", c)
	}
	g := res.Plan.Estimates.GPUs
	if len(g) != 2 || g[0].Sources != 20 || g[1].Sources != 20 || g[0].Buses != 1 || g[1].Buses != 1 || g[0].NVDECFramesPerSec != 600 {
		t.Errorf("per-GPU estimates: %+v", g)
	}
	for _, ge := range g {
		if ge.PeerCopiesPerSec != 0 || len(ge.Budgets) != 3 {
			t.Errorf("GPU %d: %+v", ge.GPU, ge)
		}
	}
	// gpus = 1 writes no GPU at all: the plan of a one-GPU show is as before.
	one := compile(t, load(t, gpuShow(t, 1, buses, 20, 0), nil), Options{})
	for _, n := range one.Plan.Nodes {
		if _, ok := n.Placement.OnGPU(); ok {
			t.Fatalf("%s placed on a GPU in a one-GPU show", n.ID)
		}
	}
	if one.Plan.Estimates.GPUs != nil {
		t.Errorf("one-GPU show has per-GPU estimates")
	}
}

// One bus with 250 1080p30 sources: 7,500 NVDEC pictures/s, more than one
// H200's 5,200 and refused on one GPU; on two, the bus's GPU takes as many
// as fit (173) and the rest decode on the other GPU, each of their frames
// crossing once per tick.
func TestGPUsShowThatNeedsTwo(t *testing.T) {
	buses := busesOn(t, 2, 1)
	if _, diags := Compile(load(t, gpuShow(t, 1, buses, 250, 0), nil), Options{ToolVersion: "test", Target: gpu}); !diags.HasErrors() {
		t.Fatal("250 1080p30 HEVC sources compiled for one H200")
	}
	res := compile(t, load(t, gpuShow(t, 2, buses, 250, 0), nil), Options{})
	at := gpuOf(t, res.Plan)
	on := [2]int{}
	for i := 0; i < 250; i++ {
		on[at[fmt.Sprintf("source.%s_cam[%d]", buses[0], i)]]++
	}
	if on[1] != 173 || on[0] != 77 {
		t.Errorf("sources on GPU 0, 1: %v; want 77 spilled, 173 (5200/30) on the bus's GPU", on)
	}
	c := crossings(res.Plan)
	if len(c) != 77 {
		t.Errorf("%d edges cross, want one per spilled source (77)", len(c))
	}
	for _, e := range c {
		if *e.Cross != (plan.CrossGPU{From: 0, To: 1}) {
			t.Errorf("%s → %s crosses %+v", e.From, e.To, *e.Cross)
		}
	}
	g := res.Plan.Estimates.GPUs
	if g[1].PeerCopiesPerSec != 77*30 || g[1].PeerBytesPerSec != 77*30*FrameBytes(lang.Size{W: 1920, H: 1080}, "nv12") || g[0].PeerCopiesPerSec != 0 {
		t.Errorf("peer copies: %+v", g)
	}
	for _, ge := range g {
		for _, b := range ge.Budgets {
			if !b.OK {
				t.Errorf("GPU %d over its %s: %+v", ge.GPU, b.Name, b)
			}
		}
	}
	text := planText(t, res)
	if !strings.Contains(text, "gpu 1: 173 sources, 1 buses") || !strings.Contains(text, "peer copies in 2310/s") {
		t.Errorf("plan text says nothing of the GPUs:\n%s", text)
	}
}

// A source shown on three buses, one on its GPU and two on the other:
// its frames cross once per tick (30 copies/s), though two edges reach
// the other GPU.
func TestGPUsFrameCrossesOnce(t *testing.T) {
	buses := busesOn(t, 2, 0, 1, 1)
	res := compile(t, load(t, gpuShow(t, 2, buses, 1, 1), nil), Options{})
	at := gpuOf(t, res.Plan)
	if at["source.shared[0]"] != 0 {
		t.Fatalf("source.shared[0] on GPU %d: its first bus is on 0", at["source.shared[0]"])
	}
	c := crossings(res.Plan)
	if len(c) != 2 || c[0].From != c[1].From {
		t.Fatalf("want two edges from one node crossing, got %+v", c)
	}
	if g := res.Plan.Estimates.GPUs; g[1].PeerCopiesPerSec != 30 || g[0].PeerCopiesPerSec != 0 {
		t.Errorf("copies onto GPU 1: %g/s, onto 0: %g/s; want 30 and 0", g[1].PeerCopiesPerSec, g[0].PeerCopiesPerSec)
	}
}

// Adding a source (here: one to every bus) moves no other node to another
// GPU while the GPUs have room: 20 and 80 sources a bus, two buses on GPU
// 0 (4,800 pictures/s of its 5,200 at 80).
func TestGPUPlacementIsStable(t *testing.T) {
	for _, n := range []int{20, 80} {
		buses := busesOn(t, 2, 0, 0, 1)
		before := gpuOf(t, compile(t, load(t, gpuShow(t, 2, buses, n, 0), nil), Options{}).Plan)
		after := gpuOf(t, compile(t, load(t, gpuShow(t, 2, buses, n+1, 0), nil), Options{}).Plan)
		for addr, i := range before {
			if after[addr] != i {
				t.Errorf("%d sources a bus: %s moved from GPU %d to %d", n, addr, i, after[addr])
			}
		}
	}
}

// The same show gives the same plan, bytes and text, every time.
func TestGPUPlansDeterministic(t *testing.T) {
	path := gpuShow(t, 3, busesOn(t, 3, 0, 1, 2, 2), 60, 4)
	var first []byte
	for i := 0; i < 3; i++ {
		res := compile(t, load(t, path, nil), Options{})
		b, err := json.Marshal(res.Plan)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, planText(t, res)...)
		if i == 0 {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Fatal("two compilations of one show differ")
		}
	}
}

// A Program bus reads every source it can cut to, so on a show whose two
// Program buses run on two GPUs every source's frame crosses to the GPU
// it does not decode on: once per tick each, counted as copies and bytes.
func TestGPUsProgramBusesReadEverySource(t *testing.T) {
	var b strings.Builder
	buses := busesOn(t, 2, 0, 1)
	b.WriteString("show {\n  name = \"pgm\"\n  size = \"1920x1080\"\n  frame_rate = \"30\"\n  profile = \"nvidia_h200\"\n}\ncanvas {\n  gpus = 2\n}\n")
	b.WriteString("source \"hevc_file\" \"cam\" {\n  count = 10\n  path = \"c${count.index}.hevc\"\n}\n")
	b.WriteString("scene \"s\" {\n  count = 10\n  layer {\n    source = source.cam[count.index]\n  }\n}\n")
	for i, bus := range buses {
		fmt.Fprintf(&b, "bus \"program\" %q {\n  scene = scene.s[%d]\n}\noutput \"null\" %q {\n  bus = bus.%s\n}\n", bus, i, bus, bus)
	}
	path := filepath.Join(t.TempDir(), "pgm.hcl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res := compile(t, load(t, path, nil), Options{})
	at := gpuOf(t, res.Plan)
	on := [2]int{}
	for i := 0; i < 10; i++ {
		on[at[fmt.Sprintf("source.cam[%d]", i)]]++
	}
	// source.cam[0] is on air on the first bus at the start, cam[1] on the
	// second; the others go home to the first bus that reads them.
	if at["source.cam[0]"] != 0 || at["source.cam[1]"] != 1 || on != [2]int{9, 1} {
		t.Errorf("sources on GPUs 0, 1: %v (cam[0] on %d, cam[1] on %d)", on, at["source.cam[0]"], at["source.cam[1]"])
	}
	g := res.Plan.Estimates.GPUs
	if g[0].PeerCopiesPerSec != 30 || g[1].PeerCopiesPerSec != 9*30 || len(crossings(res.Plan)) != 10 {
		t.Errorf("copies in: GPU 0 %g/s, GPU 1 %g/s, %d edges crossing; want 30, 270, 10", g[0].PeerCopiesPerSec, g[1].PeerCopiesPerSec, len(crossings(res.Plan)))
	}
}

// A show on two GPUs whose buses all land on one, and that fits it: every
// node runs there, the other GPU carries nothing, and nothing crosses.
func TestGPUsShowThatFitsOne(t *testing.T) {
	buses := busesOn(t, 2, 0, 0)
	res := compile(t, load(t, gpuShow(t, 2, buses, 30, 2), nil), Options{})
	for addr, i := range gpuOf(t, res.Plan) {
		if i != 0 {
			t.Errorf("%s on GPU %d; everything fits GPU 0, where its buses are", addr, i)
		}
	}
	if c := crossings(res.Plan); len(c) != 0 {
		t.Errorf("nothing must cross, got %v", c)
	}
	g := res.Plan.Estimates.GPUs
	if len(g) != 2 || g[0].Sources != 62 || g[0].Buses != 2 || g[1].Sources != 0 || g[1].Buses != 0 || g[1].VRAMBytes != 0 {
		t.Errorf("per-GPU estimates: %+v", g)
	}
}

// A show that must cross (a bus of 250 sources on GPU 1 spills 77 to GPU 0)
// stays put when a source is added to the bus on GPU 0, which has room:
// no source moves, the new one runs on its bus's GPU, and the same 77
// frames cross.
func TestGPUPlacementIsStableWhenItCrosses(t *testing.T) {
	buses := busesOn(t, 2, 1, 0)
	show := func(extra int) string {
		path := gpuShow(t, 2, buses[:1], 250, 0)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var s strings.Builder
		s.Write(b)
		fmt.Fprintf(&s, "source \"hevc_file\" \"other\" {\n  count = %d\n  path = \"o${count.index}.hevc\"\n}\nscene \"other\" {\n", extra)
		for i := 0; i < extra; i++ {
			fmt.Fprintf(&s, "  layer {\n    source = source.other[%d]\n  }\n", i)
		}
		fmt.Fprintf(&s, "}\nbus \"aux\" %q {\n  scene = scene.other\n}\n", buses[1])
		if err := os.WriteFile(path, []byte(s.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	before := compile(t, load(t, show(10), nil), Options{})
	after := compile(t, load(t, show(11), nil), Options{})
	was, is := gpuOf(t, before.Plan), gpuOf(t, after.Plan)
	for addr, i := range was {
		if is[addr] != i {
			t.Errorf("%s moved from GPU %d to %d", addr, i, is[addr])
		}
	}
	if is["source.other[10]"] != 0 {
		t.Errorf("the new source runs on GPU %d, its bus on 0", is["source.other[10]"])
	}
	from := func(p *plan.Plan) []string {
		var out []string
		for _, e := range crossings(p) {
			out = append(out, e.From)
		}
		return out
	}
	if a, b := from(before.Plan), from(after.Plan); len(a) != 77 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("%d edges cross before the new source, %d after; want the same 77", len(a), len(b))
	}
}
