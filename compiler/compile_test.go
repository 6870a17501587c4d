package compiler

import (
	"bytes"
	"fmt"
	"github.com/onairhq/onair/internal/golden"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/plan"
)

// load reads a show file, failing the test on errors.
func load(t testing.TB, path string, vars map[string]string) *lang.Show {
	t.Helper()
	show, diags := lang.Load([]string{path}, lang.Options{Vars: vars})
	if diags.HasErrors() {
		t.Fatalf("%s: %v", path, diags)
	}
	return show
}

func compile(t testing.TB, show *lang.Show, opts Options) *Result {
	t.Helper()
	if opts.ToolVersion == "" {
		opts.ToolVersion = "test"
	}
	if opts.Target == nil {
		opts.Target = gpu
	}
	res, diags := Compile(show, opts)
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	return res
}

// variant copies shows/demo-192.hcl with its canvas keys replaced.
func variant(t testing.TB, canvas map[string]string) string {
	t.Helper()
	src, err := os.ReadFile("../shows/demo-192.hcl")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	for k, v := range canvas {
		re := regexp.MustCompile(`(?m)^(\s*` + k + `\s*=\s*).*$`)
		if !re.MatchString(s) {
			t.Fatalf("demo-192.hcl has no canvas key %s", k)
		}
		s = re.ReplaceAllString(s, "${1}"+v)
	}
	path := filepath.Join(t.TempDir(), "demo-192.hcl")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type census struct {
	kinds   map[string]int
	threads int
	modes   map[string]int // "kind/mode"
}

func count(p *plan.Plan) census {
	c := census{kinds: map[string]int{}, modes: map[string]int{}}
	for _, n := range p.Nodes {
		c.kinds[n.Kind]++
		if m, ok := n.Params["mode"].(string); ok {
			c.modes[n.Kind+"/"+m]++
		}
	}
	c.threads = p.Estimates.Threads
	return c
}

// The seeds' arithmetic on the 192-source show (105 HEVC, 47 raw, 40
// browser): what each canvas switch adds or removes.
func TestDemo192CanvasVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles the 192-source show eight times")
	}
	cases := []struct {
		name   string
		canvas map[string]string
		kinds  map[string]int
		modes  map[string]int
	}{
		{"demux keeps every HEVC demuxer", map[string]string{"input_routing": `"demux"`},
			map[string]int{"demux": 105, "input_rec": 105, "dec_video": 105, "nvdec_file": 0}, nil},
		{"input removes them", map[string]string{"input_routing": `"input"`, "decoder_placement": `"thread"`},
			map[string]int{"demux": 0, "input_rec": 105, "dec_video": 105}, nil},
		{"input on decode loops fuses reader and decoder", map[string]string{"input_routing": `"input"`, "decoder_placement": `"decode_loops"`},
			map[string]int{"demux": 0, "input_rec": 0, "dec_video": 0, "nvdec_file": 105}, nil},
		{"thread fan-out", map[string]string{"source_fan_out": `"thread"`},
			map[string]int{"one_to_many": 192, "one_to_many_nb": 0}, nil},
		{"event loop fan-out", map[string]string{"source_fan_out": `"event_loop"`},
			map[string]int{"one_to_many": 0, "one_to_many_nb": 192}, nil},
		{"direct", map[string]string{"raw_upload": `"direct"`},
			map[string]int{"raw_video_file_cuda": 47, "upload": 0}, map[string]int{"raw_video_file_cuda/direct": 47}},
		{"resident", map[string]string{"raw_upload": `"resident"`},
			map[string]int{"raw_video_file_cuda": 47, "upload": 0}, map[string]int{"raw_video_file_cuda/resident": 47}},
		{"pinned", map[string]string{"raw_upload": `"pinned"`, "input_routing": `"demux"`},
			map[string]int{"raw_video_file_cuda": 0, "upload": 47, "demux": 152, "input_rec": 152, "dec_video": 152},
			map[string]int{"upload/pinned": 47, "dec_video/rawvideo": 47, "dec_video/nvdec": 105}},
		{"hwupload", map[string]string{"raw_upload": `"hwupload"`},
			map[string]int{"upload": 47, "demux": 0}, map[string]int{"upload/hwupload": 47}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := compile(t, load(t, variant(t, c.canvas), nil), Options{})
			got := count(res.Plan)
			for k, want := range c.kinds {
				if got.kinds[k] != want {
					t.Errorf("%s nodes: got %d, want %d", k, got.kinds[k], want)
				}
			}
			for k, want := range c.modes {
				if got.modes[k] != want {
					t.Errorf("%s nodes: got %d, want %d", k, got.modes[k], want)
				}
			}
		})
	}
}

// Thread counts follow the seeds: no demux thread per file and no fan-out
// thread per source took the mixer from 1,186 to 889 threads (297 fewer);
// direct raw reading took it from 1,327 to 1,186 (three fewer per raw
// source, 141). onair goes further: a direct source has no thread of its
// own either (it runs on its pacing loop), its reads go to a pool of four
// shared by all 47 raw sources: 47 - 4 more.
func TestDemo192ThreadArithmetic(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles the 192-source show four times")
	}
	threads := func(canvas map[string]string) int {
		return compile(t, load(t, variant(t, canvas), nil), Options{}).Plan.Estimates.Threads
	}
	seeds := `"thread"` // the seeds' mixer gave each decoder a thread
	before := threads(map[string]string{"input_routing": `"demux"`, "source_fan_out": `"thread"`, "raw_upload": `"direct"`, "decoder_placement": seeds})
	after := threads(map[string]string{"input_routing": `"input"`, "source_fan_out": `"event_loop"`, "raw_upload": `"direct"`, "decoder_placement": seeds})
	if before-after != 297 {
		t.Errorf("input routing + event-loop fan-out saved %d threads, the seeds say 297 (1,186 → 889)", before-after)
	}
	// Decode loops: 105 reader threads and 105 decoder threads become the
	// profile's one decode loop (nvidia_l4) or the two the canvas asks for.
	for loops, want := range map[string]int{"0": 1, "2": 2} {
		got := threads(map[string]string{"input_routing": `"input"`, "source_fan_out": `"event_loop"`, "raw_upload": `"direct"`, "decoder_placement": `"decode_loops"`, "decode_loops": loops})
		if after-got != 2*105-want {
			t.Errorf("decode_loops = %s saved %d threads, want 210 - %d", loops, after-got, want)
		}
	}
	pinned := threads(map[string]string{"input_routing": `"demux"`, "source_fan_out": `"thread"`, "raw_upload": `"pinned"`, "decoder_placement": seeds})
	if want := 141 + 47 - 4; pinned-before != want {
		t.Errorf("direct saved %d threads over pinned, want %d: the seeds' 141 (1,327 → 1,186), and 47 sources sharing 4 readers", pinned-before, want)
	}
}

func TestDemo192Placement(t *testing.T) {
	res := compile(t, load(t, "../shows/demo-192.hcl", nil), Options{})
	p := res.Plan
	if len(p.Loops) != 6 || p.Loops[0].Name != "default" || p.Loops[5].Name != "decode_0" || p.Loops[5].Kind != "nvdec" || len(p.Loops[5].Nodes) != 105 {
		t.Fatalf("loops: want default, four pacing loops and the profile's one decode loop with 105 decoders: %+v", p.Loops)
	}
	for i, l := range p.Loops[1:5] {
		// Placement by address shares 192 sources about evenly, not exactly.
		if l.Name != PacingLoop(i) || len(l.Sources) < 36 || len(l.Sources) > 60 {
			t.Errorf("loop %s paces %d sources, want 48 give or take 12", l.Name, len(l.Sources))
		}
	}
	for _, n := range p.Nodes {
		src := strings.HasPrefix(n.Address, "source.")
		switch {
		case n.Kind == "one_to_many_nb" || n.Kind == "realtime" || n.Kind == "smooth_timestamps":
			if !src || !strings.HasPrefix(n.Placement.Loop, "pacing_") {
				t.Errorf("%s placed on %+v", n.ID, n.Placement)
			}
		case n.Kind == "compositor" && n.Params["bus"] == "aux":
			if n.Placement.Loop != "default" {
				t.Errorf("AUX compositor %s placed on %+v, want the default loop", n.ID, n.Placement)
			}
		case n.Kind == "nvdec_file":
			if n.Placement != (plan.Placement{Loop: "decode_0"}) {
				t.Errorf("%s placed on %+v, want decode_0", n.ID, n.Placement)
			}
		case n.Kind == "compositor" || n.Kind == "dec_video" || n.Kind == "input_rec":
			if !n.Placement.Thread {
				t.Errorf("blocking %s not on its own thread", n.ID)
			}
		}
	}
	// A source paces on the loop its address picks.
	for _, n := range p.Nodes {
		if n.ID == "source.vt[0]/realtime" && n.Placement.Loop != PacingLoop(Slot("source.vt[0]", 4)) {
			t.Errorf("source.vt[0] paces on %s, want %s", n.Placement.Loop, PacingLoop(Slot("source.vt[0]", 4)))
		}
	}
	// Resident: 47 two-second 1080p clips pin 8.8 GB (the seeds' figure).
	if got := float64(p.Estimates.PinnedHostBytes) / 1e9; got < 8.7 || got > 8.9 {
		t.Errorf("resident pinned memory %.2f GB, the seeds measured 8.8", got)
	}
	if n := strings.Join(p.Estimates.Notes, "\n"); !strings.Contains(n, "estimated as frame size × frame rate × 2 s") {
		t.Errorf("missing files must be noted as estimated: %v", n)
	}
	if p.Estimates.NVDECFramesPerSec != 3150 {
		t.Errorf("nvdec %v frames/s, want 105 × 30", p.Estimates.NVDECFramesPerSec)
	}
	for _, b := range p.Estimates.Budgets {
		if !b.OK {
			t.Errorf("budget %s exceeded on the seeds' own show: %+v", b.Name, b)
		}
	}
}

// Golden plans: text and JSON for the shows in testdata/ and shows/.
func TestGoldenPlans(t *testing.T) {
	for _, name := range []string{"testdata/mixed.hcl", "testdata/cpu.hcl"} {
		for _, backend := range []string{"cuda", "cpu"} {
			base := strings.TrimSuffix(filepath.Base(name), ".hcl")
			t.Run(base+"/"+backend, func(t *testing.T) {
				show := load(t, name, nil)
				res, diags := Compile(show, Options{ToolVersion: "test", Target: targets[backend]})
				var text bytes.Buffer
				if diags.HasErrors() {
					writeDiags(&text, diags)
				} else {
					if err := WriteText(&text, res.Plan, false); err != nil {
						t.Fatal(err)
					}
					js, err := plan.Marshal(res.Plan)
					if err != nil {
						t.Fatal(err)
					}
					golden.Check(t, filepath.Join("testdata", "golden", base+"."+backend+".json"), js)
				}
				golden.Check(t, filepath.Join("testdata", "golden", base+"."+backend+".txt"), text.Bytes())
			})
		}
	}
}

// The CPU demo's plan text is golden, and its folded groups say what
// differs between them: source.clip[1] also feeds bus.mon,
// source.checker runs on pacing_1, not source.bars' pacing_0, and is
// 320x180, not 640x360; the clips and recordings have paths of their own.
func TestGoldenCPUDemo(t *testing.T) {
	show := load(t, "../examples/cpu-demo.hcl", nil)
	res, diags := Compile(show, Options{ToolVersion: "test", Target: targets["cpu"]})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var text bytes.Buffer
	if err := WriteText(&text, res.Plan, false); err != nil {
		t.Fatal(err)
	}
	got := text.String()
	for _, want := range []string{
		"one_to_many_nb also feeds: nothing in source.clip[0]; bus.mon/compositor (3) in source.clip[1]",
		"after: bus.pgm in output.pgm; bus.mon in output.mon",
		"test_pattern size: 640x360 in source.bars; 320x180 in source.checker",
		"raw_file_cpu path: media/clip0.nv12 in source.clip[0]; media/clip1.nv12 in source.clip[1]",
		"output_record path: ../out/pgm.y4m in output.pgm; ../out/mon.y4m in output.mon",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	golden.Check(t, filepath.Join("testdata", "golden", "cpu-demo.cpu.txt"), text.Bytes())
}

func writeDiags(w *bytes.Buffer, diags hcl.Diagnostics) {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		w.WriteString(d.Summary + "\n")
		if d.Subject != nil {
			w.WriteString("  at " + d.Subject.String() + "\n")
		}
		w.WriteString("  " + d.Detail + "\n")
	}
}

// The lead's shows compile without errors on the GPU backend.
func TestShowsCompile(t *testing.T) {
	for _, name := range []string{"../shows/minimal.hcl", "../shows/studio.hcl", "../shows/demo-192.hcl"} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			res := compile(t, load(t, name, nil), Options{})
			if len(res.Plan.Nodes) == 0 {
				t.Fatal("no nodes")
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	var first []byte
	for i := 0; i < 3; i++ {
		res := compile(t, load(t, "../shows/demo-192.hcl", nil), Options{})
		b, err := plan.Marshal(res.Plan)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Fatalf("compile %d gave other bytes:\n%s", i, golden.FirstDiff(string(first), string(b)))
		}
	}
	p, err := plan.LoadVersion(bytes.NewReader(first), "test")
	if err != nil {
		t.Fatalf("the compiled plan does not load: %v", err)
	}
	if err := plan.CheckShow(p, load(t, "../shows/demo-192.hcl", nil).Hash); err != nil {
		t.Fatal(err)
	}
	other := load(t, "../shows/minimal.hcl", nil)
	if err := plan.CheckShow(p, other.Hash); err == nil {
		t.Fatal("a plan was accepted for another show")
	}
}

func TestTrace(t *testing.T) {
	var buf bytes.Buffer
	compile(t, load(t, "testdata/mixed.hcl", nil), Options{Trace: "build", TraceOut: &buf})
	out := buf.String()
	if !strings.HasPrefix(out, "== after build ==\n") || !strings.Contains(out, "source.vt/upload (upload, nv12)") || !strings.Contains(out, "source.cam[0]/one_to_many (one_to_many, nv12) [thread]") == strings.Contains(out, "[thread]") {
		t.Errorf("trace after build does not show the naive graph:\n%s", out)
	}
	if strings.Contains(out, "== after place ==") {
		t.Error("trace printed after a pass it was not asked for")
	}
}

// A source shown twice in one scene (and on two buses) has one reader, one
// decoder and one fan-out, with one queue to each compositor.
func TestSourceUsedTwice(t *testing.T) {
	dir := t.TempDir()
	show := `show {
  name       = "twice"
  size       = "1280x720"
  frame_rate = "25"
}
source "hevc_file" "cam" {
  path = "cam.hevc"
}
scene "pip" {
  layer {
    source = source.cam
  }
  layer {
    source = source.cam
    rect   = [960, 540, 320, 180]
  }
}
bus "program" "pgm" {
  scene = scene.pip
}
bus "aux" "mon" {
  scene = scene.pip
}
`
	path := filepath.Join(dir, "twice.hcl")
	if err := os.WriteFile(path, []byte(show), 0o644); err != nil {
		t.Fatal(err)
	}
	res := compile(t, load(t, path, nil), Options{})
	c := count(res.Plan)
	if c.kinds["nvdec_file"] != 1 || c.kinds["one_to_many_nb"] != 1 {
		t.Errorf("kinds: %v", c.kinds)
	}
	var toComp []string
	for _, e := range res.Plan.Edges {
		if e.From == "source.cam/one_to_many_nb" {
			toComp = append(toComp, e.To)
		}
	}
	if strings.Join(toComp, ",") != "bus.pgm/compositor,bus.mon/compositor" {
		t.Errorf("fan-out edges: %v", toComp)
	}
}

// A show with nothing in it compiles to no plan: plan.Validate refuses a
// plan without nodes, so the compiler must not write one.
func TestCompileEmptyShowRefused(t *testing.T) {
	show, diags := lang.Load([]string{"../lang/testdata/good/dir/a.hcl"}, lang.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, backend := range []string{"cuda", "cpu"} {
		res, diags := Compile(show, Options{ToolVersion: "test", Target: targets[backend]})
		if !diags.HasErrors() || res.Plan != nil || !strings.Contains(diags.Error(), "Nothing to run") {
			t.Errorf("%s: plan %v, diags %v; want no plan and a Nothing to run error", backend, res.Plan != nil, diags)
		}
	}
}

// The capacity check's messages read as sentences: "needs 192 sources at
// 30 fps", never "192 sources of sources".
func TestCapacityWording(t *testing.T) {
	show := load(t, "../shows/demo-192.hcl", nil)
	_, diags := Compile(show, Options{Target: gpu, ToolVersion: "test", Profile: "nvidia_t4"})
	var details []string
	for _, d := range diags {
		if strings.HasPrefix(d.Summary, "Capacity exceeded") {
			details = append(details, d.Detail)
		}
	}
	all := strings.Join(details, "\n")
	if !strings.Contains(all, "The show needs 192 sources at 30 fps; profile nvidia_t4 allows 100.") {
		t.Errorf("capacity details:\n%s", all)
	}
	budgets := []plan.Budget{
		{Name: "sources at 30 fps", Used: 192, Limit: 100, Unit: "sources"},
		{Name: "raw resident sources at 30 fps", Used: 60, Limit: 48, Unit: "sources"},
		{Name: "vram", Used: 30e9, Limit: 16e9, Unit: "bytes"},
		{Name: "pinned host memory", Used: 40e9, Limit: 32e9, Unit: "bytes"},
		{Name: "pcie upload", Used: 30e9, Limit: 24e9, Unit: "bytes/s"},
		{Name: "nvdec", Used: 3150, Limit: 1140, Unit: "frames/s"},
		{Name: "nvenc outputs", Used: 2, Limit: 0, Unit: "outputs"},
	}
	want := []string{
		"The show needs 192 sources at 30 fps; profile p allows 100.",
		"The show needs 60 raw resident sources at 30 fps; profile p allows 48.",
		"The show needs 27.9 GiB of VRAM; profile p allows 14.9 GiB.",
		"The show needs 37.3 GiB of pinned host memory; profile p allows 29.8 GiB.",
		"The show needs 30.00 GB/s of PCIe upload; profile p allows 24.00 GB/s.",
		"The show needs 3150 frames/s of NVDEC decode (1080p-equivalent); profile p allows 1140 frames/s.",
		"The show has 2 outputs encoding with h264_nvenc, but profile p's GPU has no NVENC encoder.",
	}
	for i, b := range budgets {
		got := capacityDetail(b, "p")
		if !strings.HasPrefix(got, want[i]) {
			t.Errorf("%s: %q, want %q", b.Name, got, want[i])
		}
	}
}

// A raw source's on_error reaches the node that reads its file on the GPU
// too: input_rec in the hwupload and pinned chains, raw_video_file_cuda in
// direct and resident.
func TestOnErrorReachesTheGPUReaders(t *testing.T) {
	dir := t.TempDir()
	for mode, kind := range map[string]string{"hwupload": "input_rec", "pinned": "input_rec", "direct": "raw_video_file_cuda", "resident": "raw_video_file_cuda"} {
		path := filepath.Join(dir, mode+".hcl")
		os.WriteFile(path, []byte(`
show {
  name       = "hold"
  size       = "320x180"
  frame_rate = "30"
}
canvas {
  raw_upload = "`+mode+`"
}
source "raw_file" "clip" {
  path     = "clip.nv12"
  on_error = "hold"
}
scene "s" {
  layer { source = source.clip }
}
bus "program" "pgm" { scene = scene.s }
output "null" "pgm" { bus = bus.pgm }
`), 0o644)
		res := compile(t, load(t, path, nil), Options{})
		found := false
		for _, n := range res.Plan.Nodes {
			if n.Kind == kind {
				found = true
				if n.Params.String("on_error") != "hold" {
					t.Errorf("%s: %s has on_error %q, want hold", mode, n.ID, n.Params.String("on_error"))
				}
			}
		}
		if !found {
			t.Errorf("%s: no %s node", mode, kind)
		}
	}
}

// NVDEC's limits are checked where the show says the size: a 128x96 HEVC
// source is refused for the GPU (NVDEC starts at 144x144) with its
// position and the range, and plans on the CPU, whose ffmpeg decodes it.
func TestNVDECCapsChecked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "small.hcl")
	os.WriteFile(path, []byte(`show {
  name = "small"
  size = "1920x1080"
  frame_rate = "30"
}
source "hevc_file" "cam" {
  path = "x.hevc"
  size = "128x96"
}
source "hevc_file" "ok" {
  path = "y.hevc"
  size = "144x144"
}
scene "s" {
  layer { source = source.cam }
  layer { source = source.ok }
}
bus "program" "pgm" { scene = scene.s }
`), 0o644)
	show := load(t, path, nil)
	_, diags := Compile(show, Options{ToolVersion: "test", Target: targets["cuda"], Profile: "nvidia_h200"})
	var found []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			found = append(found, fmt.Sprintf("%s:%d: %s: %s", filepath.Base(d.Subject.Filename), d.Subject.Start.Line, d.Summary, d.Detail))
		}
	}
	if len(found) != 1 || !strings.Contains(found[0], "small.hcl:6: NVDEC does not decode this picture size") ||
		!strings.Contains(found[0], "from 144x144 to 8192x8192") {
		t.Errorf("want one nvdec-caps error at source.cam, got %q", found)
	}
	if _, diags := Compile(show, Options{ToolVersion: "test", Target: targets["cpu"]}); diags.HasErrors() {
		t.Errorf("the CPU backend decodes any size: %v", diags)
	}
}

// A measurement beyond the profile (onair bench -beyond-capacity) compiles
// a show over its budgets into a plan, with each exceeded budget a warning
// that says so; without the option the same show is refused.
func TestBeyondCapacityWarns(t *testing.T) {
	show := load(t, "../shows/demo-192.hcl", nil)
	res, diags := Compile(show, Options{Target: gpu, ToolVersion: "test", Profile: "nvidia_t4"})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Capacity exceeded") {
		t.Fatalf("192 sources on a T4 compiled without a capacity error: %v", diags)
	}
	res, diags = Compile(show, Options{Target: gpu, ToolVersion: "test", Profile: "nvidia_t4", BeyondCapacity: true})
	if diags.HasErrors() || res.Plan == nil {
		t.Fatalf("with BeyondCapacity: plan %v, diags %v", res.Plan != nil, diags)
	}
	warned := false
	for _, d := range diags {
		if strings.HasPrefix(d.Summary, "Capacity exceeded") {
			warned = d.Severity == hcl.DiagWarning && strings.Contains(d.Detail, "-beyond-capacity")
		}
	}
	if !warned {
		t.Errorf("no capacity warning naming -beyond-capacity: %v", diags)
	}
}

// A show that names no profile is checked against the GPU it runs on (the
// backend's probe names it); one that names a profile keeps it.
func TestDeviceProfile(t *testing.T) {
	for device, want := range map[string]string{"NVIDIA H200": "nvidia_h200", "NVIDIA L4": "nvidia_l4", "Tesla T4": "nvidia_t4", "NVIDIA A100-SXM4-80GB": "", "": ""} {
		if got := ProfileForDevice(device); got != want {
			t.Errorf("ProfileForDevice(%q) = %q, want %q", device, got, want)
		}
	}
	show := load(t, "../shows/minimal.hcl", nil) // names no profile
	if res := compile(t, show, Options{DeviceProfile: "nvidia_h200"}); res.Plan.Profile != "nvidia_h200" {
		t.Errorf("a show without a profile on an H200 is checked against %s", res.Plan.Profile)
	}
	if res := compile(t, show, Options{}); res.Plan.Profile != gpu.Profile {
		t.Errorf("without a device, a show is checked against the backend's default, not %s", res.Plan.Profile)
	}
	// demo-192 names nvidia_l4: it keeps it on an H200.
	if res := compile(t, load(t, "../shows/demo-192.hcl", nil), Options{DeviceProfile: "nvidia_h200"}); res.Plan.Profile != "nvidia_l4" {
		t.Errorf("the show's own profile gave way to the device's: %s", res.Plan.Profile)
	}
}

// TestPlacementIsStable: a source keeps its pacing loop and its decode loop
// when sources are added before it, removed, or change kind, so a diff of
// two plans shows only the sources that changed (a placement by index
// moved 46 unchanged sources of the seeds' show when one changed kind).
func TestPlacementIsStable(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.hevc")
	if err := os.WriteFile(clip, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, extra string, hevc, raw int) *lang.Show {
		var b strings.Builder
		fmt.Fprintf(&b, `show {
  name = "stable"
  size = "1920x1080"
  frame_rate = "30"
  format = "nv12"
}
canvas {
  pacing_loops = 4
  decode_loops = 2
}
%s
source "hevc_file" "cam" {
  count = %d
  path  = "clip.hevc"
}
source "test_pattern" "tp" {
  count = %d
}
scene "a" {
  layer { source = source.cam[0] }
}
bus "program" "pgm" {
  scene = scene.a
}
`, extra, hevc, raw)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return load(t, p, nil)
	}
	placements := func(show *lang.Show) map[string]string {
		m := map[string]string{}
		for _, n := range compile(t, show, Options{}).Plan.Nodes {
			if strings.HasPrefix(n.Address, "source.") {
				m[n.ID] = fmt.Sprint(n.Placement)
			}
		}
		return m
	}
	base := placements(write("base.hcl", "", 40, 40))
	for _, c := range []struct {
		name string
		show *lang.Show
	}{
		{"a source added before the others", write("added.hcl", `source "test_pattern" "first" {}`, 40, 40)},
		{"sources removed", write("removed.hcl", "", 30, 35)},
		{"sources added", write("more.hcl", "", 50, 45)},
	} {
		got := placements(c.show)
		same := 0
		for id, loop := range got {
			if old, ok := base[id]; ok {
				same++
				if old != loop {
					t.Errorf("%s: %s moved from %s to %s", c.name, id, old, loop)
				}
			}
		}
		if same == 0 {
			t.Fatalf("%s: no node in common with the base show", c.name)
		}
	}
	loops := map[string]int{}
	for _, loop := range base {
		loops[loop]++
	}
	if len(loops) < 6 {
		t.Errorf("80 sources' nodes use %d loops, want the 4 pacing loops and the 2 decode loops: %v", len(loops), loops)
	}
}
