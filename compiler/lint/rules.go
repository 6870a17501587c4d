package lint

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/compiler"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
)

// The lint rules: lessons the seeds paid for, and show hygiene. Each is a
// compiler.Rule run over a compiled show (Pass.Show, Pass.Graph, Pass.Plan),
// after the compiler's own checks. A rule reads the show model and the plan,
// never node kind names.
var rules = []*compiler.Rule{
	browserReturnQueue,
	browserRingSize,
	importTTLShort,
	rawHwuploadRate,
	residentPinnedMemory,
	residentWithoutLoop,
	compositorPollInterval,
	capacityHeadroom,
	gpuOverBudget,
	encodesExceedCores,
	singlePacingLoop,
	pacingLoopImbalance,
	decoderThreads,
	nvdecParserUnused,
	goProcsNarrow,
	unusedSource,
	busWithoutOutput,
	unusedScene,
	sharedOutputPath,
	layerOffCanvas,
	cpuDrawCost,
	sourceFrameRate,
}

// The rules an inline ignore comment itself can break. They have no Run:
// ApplyIgnores reports them, and none of them can be ignored (an ignore
// comment cannot vouch for itself).
var ignoreRules = []*compiler.Rule{
	{ID: RuleIgnoreWithoutReason, Severity: hcl.DiagError, Doc: `An onair-lint-ignore comment must say why.

Write the reason after a colon: "# onair-lint-ignore RULE-ID: why it does not
apply here". An ignore without a reason ignores nothing, and is itself an
error, so that every silenced finding in a show has a sentence a reviewer can
judge.`},
	{ID: RuleIgnoreUnknownRule, Severity: hcl.DiagError, Doc: `An onair-lint-ignore comment names a rule that does not exist.

The id is misspelt, or the rule was renamed or removed. The comment ignores
nothing. 'onair lint -explain' lists every rule id.`},
	{ID: RuleIgnoreNotAllowed, Severity: hcl.DiagError, Doc: `An onair-lint-ignore comment names a rule that cannot be ignored.

Some rules report shows that cannot run correctly (a plan that cannot be
built, two outputs writing one file). Their findings stand whatever the
comment says; fix what they report.`},
	{ID: RuleIgnoreUnused, Severity: hcl.DiagWarning, Doc: `An onair-lint-ignore comment matches no finding.

Nothing on the line it covers reports the rule any more. Remove the comment,
so that it cannot silence a different finding later.`},
}

// Rules returns the lint rules, in the order they run.
func Rules() []*compiler.Rule { return rules }

// AllRules returns every rule `onair lint` can report: the compiler's
// checks, the lint rules, the rules of ignore comments and the ids of the
// language's and the compiler's own diagnostics (show-load, compile), in
// that order.
func AllRules() []*compiler.Rule {
	out := append([]*compiler.Rule(nil), compiler.Checks()...)
	out = append(out, rules...)
	out = append(out, ignoreRules...)
	return append(out, driverRules...)
}

// Lookup returns the rule (check, lint rule or ignore rule) with the id.
func Lookup(id string) (*compiler.Rule, bool) {
	for _, r := range AllRules() {
		if r.ID == id {
			return r, true
		}
	}
	return nil, false
}

// Explain returns what `onair lint -explain ID` prints: the id, whether
// the rule can be ignored, and the first paragraph of its doc.
func Explain(id string) (string, error) {
	r, ok := Lookup(id)
	if !ok {
		return "", fmt.Errorf("no rule %q%s; 'onair lint -explain' lists them", id, suggestRule(id, infoMap()))
	}
	ri := info(r)
	sev := SeverityName(r.Severity)
	ign := "can be ignored inline with # onair-lint-ignore " + r.ID + ": REASON"
	switch {
	case !r.Ignorable:
		ign = "cannot be ignored"
	case ri.WarningsOnly:
		sev = "error or warning"
		ign = "its warnings can be ignored inline with # onair-lint-ignore " + r.ID + ": REASON, its errors cannot be ignored"
	}
	return fmt.Sprintf("%s (%s; %s)\n\n%s\n", r.ID, sev, ign, FirstParagraph(r.Doc)), nil
}

// ---- browser sources (seed 003) ----

var browserReturnQueue = &compiler.Rule{
	ID:        "browser-return-queue",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `browser_frame_queue of 3 or less leaves browser sources no return queue.

Three of a browser window's nine frames are the return queue: a finished
frame waits there and one goes back per arriving frame, so Chromium's pool
settles on a fixed set of buffers. A queue of three or fewer keeps all of
them for the mixer and has no return queue: frames go back in bunches, the
pool destroys and allocates buffers, and every new buffer is a CUDA import
and a release that blocks every GPU call in the process. On the seeds' 192
source show that missed 28 and 21 Program deadlines in ten minutes at 30 fps.
Leave browser_frame_queue at 9.`,
	Run: func(p *compiler.Pass) {
		n := countKind(p.Show, "browser")
		q := p.Show.Canvas.Int("browser_frame_queue")
		if n == 0 || q > 3 {
			return
		}
		report(p, canvasRange(p.Show, "browser_frame_queue"),
			fmt.Sprintf("browser_frame_queue = %d leaves the %s no return queue", q, plural(n, "browser source")),
			"Three of nine frames are the return queue; with 3 or fewer every frame goes back as soon as it is let go, in bunches, and the browser's buffer pool churns: each new buffer is a CUDA import whose release stalls every GPU call (the seeds' show missed Program deadlines at 30 fps). Set browser_frame_queue = 9.")
	},
}

var browserRingSize = &compiler.Rule{
	ID:        "browser-ring-size",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `browser_ring_size is the earlier spelling of browser_frame_queue.

The canvas key was renamed when the return queue came (seed 003): the
browser service's ring size is not a ring of buffers but how many frames a
window may have out at once, three of which are the return queue. The old
key is still read, and a value above 9 means 9, the most a window has out.
Write browser_frame_queue instead.`,
	Run: func(p *compiler.Pass) {
		if !p.Show.Canvas.Attrs.Has("browser_ring_size") {
			return
		}
		q := p.Show.Canvas.Int("browser_frame_queue")
		report(p, canvasRange(p.Show, "browser_ring_size"),
			fmt.Sprintf("browser_ring_size is the earlier spelling of browser_frame_queue; read as browser_frame_queue = %d", q),
			fmt.Sprintf("Write browser_frame_queue = %d (values above 9 are read as 9: a window has at most nine frames out, three of them returning).", q))
	},
}

var importTTLShort = &compiler.Rule{
	ID:        "import-ttl-short",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `import_ttl_ms under 10 seconds re-imports pages that are still live.

A browser buffer's CUDA import is dropped when it has not been seen for
import_ttl_ms. A mostly still page paints rarely, so with a short TTL its
buffers expire and are imported again, and each import and release takes the
lock every other GPU call waits on. The seeds' mixer used four frame-queue
lengths, under a second at 30 fps; imports now stay at least 10 s.`,
	Run: func(p *compiler.Pass) {
		n := countKind(p.Show, "browser")
		ttl := p.Show.Canvas.Int("import_ttl_ms")
		if n == 0 || ttl >= 10000 {
			return
		}
		report(p, canvasRange(p.Show, "import_ttl_ms"),
			fmt.Sprintf("import_ttl_ms = %d is under 10 s: still pages of the %s are imported again", ttl, plural(n, "browser source")),
			"A page that paints rarely lets its buffers expire and re-imports them; each import and release takes the CUDA lock every draw waits on. Set import_ttl_ms = 10000 or more.")
	},
}

// ---- raw sources (seeds 000 and 001) ----

var rawHwuploadRate = &compiler.Rule{
	ID:        "raw-hwupload-rate",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `raw_upload = "hwupload" misses deadlines with many raw sources at high rates.

hwupload copies each raw frame from pageable memory, so the driver makes it
transferable on every frame and upload, import and compositor threads wait on
one another inside it. In a 68 input show at 60 fps with 17 raw sources this
path missed 69 % of Program deadlines; the pinned uploader missed none.
The rule fires when raw sources upload with hwupload at 50 fps or more, or
when they move more raw frames a second than half that show did (510).
Use raw_upload = "direct" (one copy, no upload thread) or "resident".`,
	Run: func(p *compiler.Pass) {
		if p.Show.Canvas.String("raw_upload") != "hwupload" {
			return
		}
		var n int
		var fps, maxRate float64
		for _, s := range p.Show.Sources {
			if s.Kind != "raw_file" {
				continue
			}
			r := rate(s.FrameRate, p.Show.FrameRate)
			n++
			fps += r
			maxRate = math.Max(maxRate, r)
		}
		if n == 0 || (maxRate < 50 && fps < 510) {
			return
		}
		report(p, canvasRange(p.Show, "raw_upload"),
			fmt.Sprintf("raw_upload = \"hwupload\" with %s at up to %s fps (%.0f raw frames a second)", plural(n, "raw source"), fmtRate(maxRate), fps),
			"hwupload makes pageable memory transferable on every frame; upload, import and compositor threads then wait on each other in the driver. 17 raw sources at 60 fps missed 69 % of Program deadlines this way. Use raw_upload = \"direct\".")
	},
}

// residentPinnedWarn is the pinned host memory above which resident raw
// sources draw a warning, whatever the profile allows: 4 GiB, an eighth of
// a 32 GB playout host.
const residentPinnedWarn = 4 << 30

var residentPinnedMemory = &compiler.Rule{
	ID:        "resident-pinned-memory",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `raw_upload = "resident" pins host memory equal to the raw files.

Resident raw sources keep each looped file's pictures in one page-locked
block the size of the file. That memory cannot be swapped out: the seeds'
47 two-second 1080p clips pinned 8.8 GB, and the mixer held about 10 GB. The
rule fires when the plan's pinned host memory is above 4 GiB (4.3 GB), or
above half of what the capacity profile allows if that is less; for a file
it cannot read the compiler estimates two seconds of frames. Use "direct"
(one page-locked frame per source) where the memory is needed elsewhere.

Why 4 GiB: the profile's figure is what the GPU's driver can pin, not what
the host can spare. A playout host typically has 32 to 64 GB of RAM, shared
by the mixer, its ffmpeg outputs, the browser sources and the page cache
that feeds every file source; 4 GiB that can never be swapped out is an
eighth of a 32 GB host, and the seeds' 8.8 GB was more than a quarter of
one. Ignore the finding with a reason when the host is sized for it.`,
	Run: func(p *compiler.Pass) {
		if p.Show.Canvas.String("raw_upload") != "resident" || countKind(p.Show, "raw_file") == 0 || p.Plan == nil {
			return
		}
		used := p.Plan.Estimates.PinnedHostBytes
		limit := float64(residentPinnedWarn)
		why := "more than 4 GiB, an eighth of a 32 GB playout host"
		if p.Profile != nil && p.Profile.PinnedHostBytes.Value > 0 && p.Profile.PinnedHostBytes.Value/2 < limit {
			limit = p.Profile.PinnedHostBytes.Value / 2
			why = fmt.Sprintf("more than half of the %s profile %s allows", gb(p.Profile.PinnedHostBytes.Value), p.Profile.Name)
		}
		if float64(used) <= limit {
			return
		}
		n := countKind(p.Show, "raw_file")
		report(p, canvasRange(p.Show, "raw_upload"),
			fmt.Sprintf("raw_upload = \"resident\" pins %s of host memory for %s", gb(float64(used)), plural(n, "raw source")),
			fmt.Sprintf("Page-locked memory cannot be swapped out, and this is %s. The seeds pinned 8.8 GB for 47 two-second clips. Use raw_upload = \"direct\" to pin one frame per source, or ignore this with a reason if the host is sized for it.", why))
	},
}

var residentWithoutLoop = &compiler.Rule{
	ID:        "resident-without-loop",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `A resident raw source that does not loop pins its whole file for nothing.

Resident mode reads each picture once into a page-locked block the size of
the file, and later passes only transfer it to the GPU. A source that does
not loop shows each picture once, so it pays the unswappable memory and
saves no read. Set loop = true, or use raw_upload = "direct".`,
	Run: func(p *compiler.Pass) {
		if p.Show.Canvas.String("raw_upload") != "resident" {
			return
		}
		for _, s := range p.Show.Sources {
			if s.Kind != "raw_file" || s.Loop {
				continue
			}
			report(p, attrOr(s.Attrs, "loop", s.DeclRange),
				fmt.Sprintf("%s does not loop but raw_upload = \"resident\" pins its whole file", s.Address()),
				"Each picture is shown once, so keeping the file in page-locked memory saves no read. Set loop = true, or raw_upload = \"direct\".")
		}
	},
}

// ---- compositors and queues (seed 001) ----

var compositorPollInterval = &compiler.Rule{
	ID:        "compositor-poll-interval",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `input_poll_ms = 0 wakes a compositor for every frame that arrives.

A compositor only draws at a tick's deadline; waking for each arriving frame
moves frames between queues earlier than needed. At 8 ms each Program
compositor of the seeds' show fell from 12.1 to 7.3 % of a core and from
3,400 to 230 wake-ups a second, and the 20 AUX compositors from 20.6 to
17.6 %. A cut still looks at once. The rule fires for input_poll_ms = 0 with
a Program bus, and aux_input_poll_ms = 0 with AUX buses, on shows of 8
sources or more.`,
	Run: func(p *compiler.Pass) {
		if len(p.Show.Sources) < 8 {
			return
		}
		prog, aux := 0, 0
		for _, b := range p.Show.Buses {
			if b.Kind == "program" {
				prog++
			} else {
				aux++
			}
		}
		c := p.Show.Canvas
		if c.Int("input_poll_ms") == 0 && prog > 0 {
			report(p, canvasRange(p.Show, "input_poll_ms"),
				fmt.Sprintf("input_poll_ms = 0 wakes %s for every frame that arrives from %d sources", plural(prog, "Program compositor"), len(p.Show.Sources)),
				"Set input_poll_ms = 8: a compositor then sleeps to its deadline and looks for frames at most every 8 ms (at once for a cut). The seeds' Program compositors fell from 3,400 to 230 wake-ups a second.")
		}
		if c.Int("aux_input_poll_ms") == 0 && aux > 0 {
			report(p, canvasRange(p.Show, "aux_input_poll_ms"),
				fmt.Sprintf("aux_input_poll_ms = 0 wakes %s for every frame that arrives", plural(aux, "AUX compositor")),
				"Set aux_input_poll_ms = 8; the seeds' 20 AUX compositors fell from 264 to 184 wake-ups a second each.")
		}
	},
}

// ---- capacity ----

var capacityHeadroom = &compiler.Rule{
	ID:        "capacity-headroom",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `An estimate is within 10 % of the capacity profile's limit.

The compiler refuses a show whose estimates exceed its GPU profile (sources
by mode and frame rate, VRAM, page-locked memory, PCIe, NVDEC). A show that
fits with less than 10 % to spare goes on air with no room for a late
source, a longer queue or a measurement that was optimistic: the seeds' L4
show ran clean at 25 fps and collapsed at 30 with every gauge showing room.`,
	Run: func(p *compiler.Pass) {
		if p.Plan == nil {
			return
		}
		for _, b := range p.Plan.Estimates.Budgets {
			if !b.OK || b.Limit <= 0 || b.Used < 0.9*b.Limit {
				continue
			}
			report(p, showRange(p.Show, "profile"),
				fmt.Sprintf("%s at %.0f %% of profile %s's limit: the show needs %s, the profile allows %s", capitalise(compiler.BudgetLabel(b.Name)), 100*b.Used/b.Limit, p.Plan.Profile, compiler.FmtAmount(b.Used, b.Unit), compiler.FmtAmount(b.Limit, b.Unit)),
				"Less than 10 % headroom: a late change or an optimistic estimate takes the show over. Move sources to another GPU or pick a cheaper canvas setting.")
		}
	},
}

var gpuOverBudget = &compiler.Rule{
	ID:        "gpu-over-budget",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `One GPU of a show spread over several carries more than its profile allows.

With canvas gpus above 1 the compiler checks the show against all the GPUs
together and places each source where it fits; a source that fits nowhere
stays on its bus's GPU. That GPU is then over one GPU's VRAM, PCIe upload or
NVDEC budget while the others may have room: the show's totals look fine and
the GPU drops frames on air. Add a GPU, move a bus (a bus goes where its
address picks) or drop a source.`,
	Run: func(p *compiler.Pass) {
		if p.Plan == nil {
			return
		}
		for _, g := range p.Plan.Estimates.GPUs {
			for _, b := range g.Budgets {
				if b.OK {
					continue
				}
				report(p, canvasRange(p.Show, "gpus"),
					fmt.Sprintf("GPU %d is over profile %s's %s: its sources and buses need %s, one GPU has %s", g.GPU, p.Plan.Profile, compiler.BudgetLabel(b.Name), compiler.FmtAmount(b.Used, b.Unit), compiler.FmtAmount(b.Limit, b.Unit)),
					fmt.Sprintf("GPU %d carries %d of the show's sources and %d of its buses. Raise canvas gpus, or take sources off the buses on GPU %d.", g.GPU, g.Sources, g.Buses, g.GPU))
			}
		}
	},
}

var encodesExceedCores = &compiler.Rule{
	ID:        "encodes-exceed-cores",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `The show's delivery outputs and onair itself need more CPU than the machine has cores.

Each output "stream", "file" and "hls" is an ffmpeg encoding on the CPU
(where the GPU has no NVENC). The plan estimates each one's share of a core
from the capacity profile's measured figures for its encoder, preset, size
and rate at the number of outputs the show encodes at once, and onair's own
CPU beside them (a cpu plan's drawing; a GPU plan's from the profile's
reading of a show, scaled by sources and frame rate). Over the profile's
cores in total, the encoders fall behind the show's rate and drop frames,
and the mixer's own threads wait for a core and miss deadlines: on the H200
machine 8 x264 veryfast 1080p30 outputs beside the seeds' show missed 30.
Use a faster preset, fewer or smaller outputs, or a machine with more cores
(or NVENC).`,
	Run: func(p *compiler.Pass) {
		if p.Plan == nil {
			return
		}
		e := p.Plan.Estimates
		limit := float64(100 * e.HostCores)
		total := e.ShowCorePercent + e.EncodeCorePercent
		if e.HostCores <= 0 || len(e.Encodes) == 0 || total <= limit {
			return
		}
		// The finding points at the output that takes the sum over.
		sum := e.ShowCorePercent
		at := p.Show.DeclRange
		for _, c := range e.Encodes {
			sum += c.CorePercent
			if sum > limit {
				for _, o := range p.Show.Outputs {
					if o.Address() == c.Output {
						at = o.DeclRange
					}
				}
				break
			}
		}
		costliest := e.Encodes[0]
		for _, c := range e.Encodes {
			if c.CorePercent > costliest.CorePercent {
				costliest = c
			}
		}
		report(p, at,
			fmt.Sprintf("The show's %d encodes need %.0f %% of one core and onair itself about %.0f %%: %.0f %%, more than profile %s's %d cores (%.0f %%)",
				len(e.Encodes), e.EncodeCorePercent, e.ShowCorePercent, total, p.Plan.Profile, e.HostCores, limit),
			fmt.Sprintf("The costliest is %s, %s at preset %s, about %.0f %% of a core with %d encoding at once (from the profile's measured figures). Use a faster preset, fewer or smaller outputs, or a machine with more cores.",
				costliest.Output, costliest.Encoder, costliest.Preset, costliest.CorePercent, e.ConcurrentEncodes))
	},
}

// ---- pacing loops (seed 004) ----

var singlePacingLoop = &compiler.Rule{
	ID:        "single-pacing-loop",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `One pacing loop for a large show: its cost grows as the square of the sources.

A loop's wake-ups grow with the sources it paces and so does the work per
wake-up, so one loop costs N². Four loops carry N/4 each: (N/4)² = N²/16 on
the busiest core, 16 times less, and a slow callback delays only its own
quarter. 100 sources on one loop measured 43 % of a core and 924 wake-ups a
second. The rule fires for pacing_loops = 1 with 50 sources or more.`,
	Run: func(p *compiler.Pass) {
		n := len(p.Show.Sources)
		if p.Show.Canvas.Int("pacing_loops") != 1 || n < 50 {
			return
		}
		rel := float64(n*n) / 10000
		report(p, canvasRange(p.Show, "pacing_loops"),
			fmt.Sprintf("pacing_loops = 1 paces all %d sources on one loop", n),
			fmt.Sprintf("One loop's cost grows as N²: %d sources cost %.2f× the measured 100-on-one-loop point (43 %% of a core); with pacing_loops = 4 the busiest loop carries (N/4)² = %.2f×. Set pacing_loops = 4.", n, rel, rel/16))
	},
}

// ---- NVDEC decoders ----

// decoderThreadsFrom is the decoder count from which a thread each is
// worth a warning.
const decoderThreadsFrom = 8

var decoderThreads = &compiler.Rule{
	ID:        "decoder-threads",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `NVDEC decoders on a thread each: a few decode loops do the same work for a fraction of the CPU.

With decoder_placement = "thread" every HEVC or H.264 source's decoder has a
thread of its own, as the seeds' mixer ran them, and each thread sleeps and
wakes for every picture. On the H200, 105 1080p30 sources so placed read
168 % of one core in 240 threads; on two decode loops, 46.7 % in 25, with
0 missed deadlines either way (nodes/cuda/BENCHMARKS.md). The rule fires
from 8 decoders on threads.`,
	Run: func(p *compiler.Pass) {
		if p.Plan == nil || p.Show.Canvas.String("decoder_placement") != "thread" {
			return
		}
		n := 0
		for _, nd := range p.Plan.Nodes {
			k, ok := nodes.Lookup(nd.Kind)
			if ok && k.Has(nodes.Decoder) && nd.Domain == string(nodes.Device) && nd.Placement.Thread {
				n++ // an NVDEC decoder on a thread of its own
			}
		}
		if n < decoderThreadsFrom {
			return
		}
		report(p, canvasRange(p.Show, "decoder_placement"),
			fmt.Sprintf("decoder_placement = \"thread\" gives each of %d NVDEC decoders a thread", n),
			"Decode loops serve many decoders on a few threads: 105 sources measured 3.6 times less CPU and a tenth of the threads on two loops. Set decoder_placement = \"decode_loops\".")
	},
}

var nvdecParserUnused = &compiler.Rule{
	ID:        "nvdec-parser-unused",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `nvdec_parser = "onair" is set, but HEVC decoders still read with NVIDIA's parser.

onair's HEVC parser feeds NVDEC only where the file's reader and its decoder
are one node on a decode loop (nvdec_file: input_routing = "input",
decoder_placement = "decode_loops"). A decoder fed over an edge, from a
demux node or on a thread of its own, keeps NVIDIA's parser, so the setting
does nothing for it: on the H200 the decode loops read 17.7 % of one core
for 105 sources with onair's parser, about 6 points under NVIDIA's
(nodes/cuda/BENCHMARKS.md).`,
	Run: func(p *compiler.Pass) {
		if p.Plan == nil || p.Show.Canvas.String("nvdec_parser") != "onair" {
			return
		}
		n := 0
		for _, nd := range p.Plan.Nodes {
			if k, ok := nodes.Lookup(nd.Kind); ok && fedOverEdge(k) && nd.Domain == string(nodes.Device) && nd.Params["codec"] == "hevc" {
				n++ // NVDEC fed over an edge: NVIDIA's parser
			}
		}
		if n == 0 {
			return
		}
		report(p, canvasRange(p.Show, "nvdec_parser"),
			fmt.Sprintf("nvdec_parser = \"onair\" does not reach %d HEVC decoders: they are fed over an edge and read with NVIDIA's parser", n),
			"Set input_routing = \"input\" and decoder_placement = \"decode_loops\" for onair's parser to read them, or drop nvdec_parser.")
	},
}

// fedOverEdge reports whether a kind decodes what another node hands it
// (a decoder, not a source), with no choice of parser (no param parser).
func fedOverEdge(k *nodes.Kind) bool {
	_, parser := k.Param("parser")
	return k.Has(nodes.Decoder) && !k.Has(nodes.Source) && !parser
}

// goProcsNarrowAbove is the frame rate above which go_procs under the
// show's own threads is worth a warning.
const goProcsNarrowAbove = 30.5

var goProcsNarrow = &compiler.Rule{
	ID:        "go-procs-narrow",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `go_procs gives Go fewer processors than the show has threads of its own, at more than 30 frames a second.

Each of onair's loops and node threads needs one of Go's processors
whenever it runs; with fewer processors than threads they take turns, and
a loop that waits for one draws late. At 30 fps the seeds' show held every
deadline on 4 processors for its 10 threads. At 60 fps it did not: 128
sources of the seeds' mix with go_procs = 4 missed 89 deadlines in 5
minutes on the H200 (AUX buses on the default loop, longest draw 19.5 ms
against the 16.7 ms tick), and 0 with Go's default processors (longest
draw 5.5 ms), for the same CPU (bench/seeds/README.md). The rule fires
above 30 fps when go_procs is set below the plan's thread count.`,
	Run: func(p *compiler.Pass) {
		procs := p.Show.Canvas.Int("go_procs")
		if p.Plan == nil || procs == 0 || rate(p.Show.FrameRate, lang.Rational{}) <= goProcsNarrowAbove {
			return
		}
		threads := p.Plan.Estimates.Threads
		if procs >= threads {
			return
		}
		report(p, canvasRange(p.Show, "go_procs"),
			fmt.Sprintf("go_procs = %d gives Go fewer processors than the show's %d threads at %s fps", procs, threads, p.Show.FrameRate),
			fmt.Sprintf("Loops wait for a processor and draw late: at 60 fps on the H200, go_procs = 4 missed deadlines where Go's default held them, for the same CPU. Set go_procs = 0 (Go's default), or at least %d.", threads))
	},
}

var pacingLoopImbalance = &compiler.Rule{
	ID:        "pacing-loop-imbalance",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `One pacing loop is far busier than the others.

Each source paces on the loop its address picks, which shares sources out
about evenly by count but not by rate: when the fast sources fall on the same
loop, that loop wakes
for most of the show's frames while the others idle, and its cost grows as
the square of what it carries. The rule weighs each loop by the frames per
second it paces and fires when the busiest carries at least 1.5 times the
average and 60 frames a second more. Change pacing_loops so the fast ones
spread (or rename one: a source's loop follows from its address).`,
	Run: func(p *compiler.Pass) {
		n := p.Show.Canvas.Int("pacing_loops")
		if n < 2 || len(p.Show.Sources) < 8 {
			return
		}
		// Where each source paces, as placed: the loop of its nodes.
		loopOf := map[*lang.Source]int{}
		for _, nd := range p.Graph.Nodes() {
			if i, err := strconv.Atoi(strings.TrimPrefix(nd.Placement.Loop, "pacing_")); nd.Source != nil && err == nil && i < n && strings.HasPrefix(nd.Placement.Loop, "pacing_") {
				loopOf[nd.Source] = i
			}
		}
		load := make([]float64, n)
		for _, s := range p.Show.Sources {
			if i, ok := loopOf[s]; ok {
				load[i] += rate(s.FrameRate, p.Show.FrameRate)
			}
		}
		busiest, total := 0, 0.0
		for i, l := range load {
			total += l
			if l > load[busiest] {
				busiest = i
			}
		}
		mean := total / float64(n)
		if load[busiest] < 1.5*mean || load[busiest]-mean < 60 {
			return
		}
		var parts []string
		for i := range load {
			parts = append(parts, fmt.Sprintf("pacing_%d %.0f", i, load[i]))
		}
		report(p, canvasRange(p.Show, "pacing_loops"),
			fmt.Sprintf("pacing_%d paces %.0f frames a second, %.1f× the average of %.0f", busiest, load[busiest], load[busiest]/mean, mean),
			fmt.Sprintf("Frames a second per loop: %s. A source paces on the loop its address picks among the %d: change pacing_loops so the fast sources spread, or rename one.", strings.Join(parts, ", "), n))
	},
}

// ---- show hygiene ----

var unusedSource = &compiler.Rule{
	ID:        "unused-source",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `A source no bus can show.

The source is in no scene a bus can show and no AUX bus shows it, yet it is
decoded, uploaded and paced all show long: an NVDEC session, queues in VRAM
and a share of a pacing loop for frames nobody sees. Put it on a scene or
remove it.`,
	Run: func(p *compiler.Pass) {
		used := map[*lang.Source]bool{}
		shown := showableScenes(p.Show)
		for _, sc := range p.Show.Scenes {
			if !shown[sc] {
				continue
			}
			for _, l := range sc.Layers {
				used[l.Source] = true
			}
		}
		for _, b := range p.Show.Buses {
			if b.Source != nil {
				used[b.Source] = true
			}
			for _, r := range b.Routes {
				if r.Source != nil {
					used[r.Source] = true
				}
			}
		}
		for _, s := range p.Show.Sources {
			if !used[s] {
				report(p, s.DeclRange, fmt.Sprintf("%s is never shown", s.Address()),
					"No scene a bus can show has a layer with it and no AUX bus shows it, but it is still read, decoded and paced. Add it to a scene or remove it.")
			}
		}
	},
}

var busWithoutOutput = &compiler.Rule{
	ID:        "bus-without-output",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `A bus that no output takes.

Every bus runs a compositor that draws a frame each tick. A bus no output
records, encodes, previews or discards draws for nobody. Add an output (a
"null" output if the bus is only for control-room monitoring through the
API) or remove the bus.`,
	Run: func(p *compiler.Pass) {
		has := map[*lang.Bus]bool{}
		for _, o := range p.Show.Outputs {
			has[o.Bus] = true
		}
		for _, b := range p.Show.Buses {
			if !has[b] {
				report(p, b.DeclRange, fmt.Sprintf("%s has no output", b.Address()),
					"Its compositor draws every tick for nobody. Add an output that takes it, or remove the bus.")
			}
		}
	},
}

var unusedScene = &compiler.Rule{
	ID:        "unused-scene",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `A scene no bus can show.

A Program bus can cut to any scene, so with a Program bus every scene is
usable. Without one, only the scenes AUX buses show are ever drawn; the
others are dead layout. Show the scene on a bus or remove it.`,
	Run: func(p *compiler.Pass) {
		shown := showableScenes(p.Show)
		for _, sc := range p.Show.Scenes {
			if !shown[sc] {
				report(p, sc.DeclRange, fmt.Sprintf("%s is never shown", sc.Address()),
					"The show has no Program bus that could cut to it and no AUX bus shows it. Show it on a bus or remove it.")
			}
		}
	},
}

var layerOffCanvas = &compiler.Rule{
	ID:        "layer-off-canvas",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `A layer wholly outside the canvas.

No pixel of the layer's rect is on the canvas, so it draws nothing. A rect
may reach past the canvas's edges (a zoom, a picture sliding in), up to the
rect_reach geometry limit, past which the language refuses it, and the
compositors draw only the part on the canvas; a rect with no part on it is
usually a sign error or a coordinate meant for a larger canvas. Move it onto
the canvas or remove the layer.`,
	Run: func(p *compiler.Pass) {
		cw, ch := p.Show.Size.W, p.Show.Size.H
		for _, sc := range p.Show.Scenes {
			for _, l := range sc.Layers {
				r := l.Rect
				if r.X < cw && r.Y < ch && r.X+r.W > 0 && r.Y+r.H > 0 {
					continue
				}
				what := "a layer"
				if l.Source != nil {
					what = "the layer of " + l.Source.Address()
				}
				report(p, attrOr(l.Attrs, "rect", l.DeclRange),
					fmt.Sprintf("%s: %s lies wholly outside the %dx%d canvas", sc.Address(), what, cw, ch),
					fmt.Sprintf("Its rect [%d, %d, %d, %d] has no pixel on the canvas, so it draws nothing. Move it onto the canvas (x below %d, y below %d, x + width and y + height above 0) or remove it.", r.X, r.Y, r.W, r.H, cw, ch))
			}
		}
	},
}

var sharedOutputPath = &compiler.Rule{
	ID:        "shared-output-path",
	Severity:  hcl.DiagError,
	Ignorable: false,
	Doc: `Two record outputs write the same file.

Each record output truncates and writes its Y4M file; two writing one path
interleave frames from different buses into a file neither can read back.
This cannot be right, so the rule cannot be ignored: give each output its
own path.`,
	Run: func(p *compiler.Pass) {
		first := map[string]*lang.Output{}
		for _, o := range p.Show.Outputs {
			if o.Kind != "record" || o.Path == "" {
				continue
			}
			if prev, dup := first[o.Path]; dup {
				report(p, attrOr(o.Attrs, "path", o.DeclRange),
					fmt.Sprintf("%s writes %s, which %s already writes", o.Address(), o.Path, prev.Address()),
					"Two outputs writing one file interleave their frames. Give each output its own path.")
				continue
			}
			first[o.Path] = o
		}
	},
}

// ---- the CPU backend ----

// RuleCPUDrawCost is the id of the rule `onair run` also checks before a
// show goes on air on the CPU backend.
const RuleCPUDrawCost = "cpu-draw-cost"

var cpuDrawCost = &compiler.Rule{
	ID:        RuleCPUDrawCost,
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `The CPU backend cannot draw a bus within its frame period.

The cpu backend composites in Go on the host. Its cost per tick follows the
pixels it draws: about 3 ns of one core a pixel for a layer shrunk exactly
2:1 and 13 for 4:1 (a grid's cells), 20 for other ratios or blended, more
for larger shrinks, under 1 ns for one shown opaque at its
own size (a row copy) and to paint the canvas black (nodes/cpu/BENCHMARKS.md).
A canvas of 720p and up is drawn in bands on up to 4 cores. The rule estimates each bus's dearest
scene and fires when even 4 cores (1 below 720p) would take longer than a
frame period: the bus then misses most of its deadlines and runs below its
rate (a 16384x16384 show ran at 4 fps, with 475 missed deadlines in 20 s).
Only shows compiled for a backend that draws in host memory are checked;
onair run prints the warning too. Use a smaller canvas or fewer layers, a
lower frame_rate, or the GPU backend.`,
	Run: func(p *compiler.Pass) {
		if p.Options.Target == nil || p.Options.Target.Domain != nodes.Host {
			return
		}
		for _, t := range compiler.EstimateCPUTicks(p.Show) {
			if t.WallNs <= t.PeriodNs {
				continue
			}
			what := "its source"
			if t.Scene != nil {
				what = t.Scene.Address()
			}
			cores := fmt.Sprintf("even on %d cores", t.Bands)
			if t.Bands == 1 {
				cores = "on the one core a canvas under 720p is drawn on"
			}
			report(p, t.Bus.DeclRange,
				fmt.Sprintf("%s needs about %s of CPU to draw a tick of %s (%.0f Mpixels of layers on a %dx%d canvas); %s that is %s a tick, more than the %s frame period",
					t.Bus.Address(), ms(t.CPUNs), what, float64(t.Pixels)/1e6, p.Show.Size.W, p.Show.Size.H, cores, ms(t.WallNs), ms(t.PeriodNs)),
				fmt.Sprintf("The cpu backend would miss most of this bus's deadlines and run at about %s fps instead of %s. Use a smaller canvas or fewer layers, a lower frame_rate, or compile for the GPU backend.",
					fmtRate(math.Min(1e9/t.WallNs, 1e9/t.PeriodNs)), fmtRate(1e9/t.PeriodNs)))
		}
	},
}

// ms writes ns as milliseconds for a person: 33.3 ms, 2,684 ms.
func ms(ns float64) string {
	if ns >= 100e6 {
		return fmt.Sprintf("%.0f ms", ns/1e6)
	}
	return fmt.Sprintf("%.1f ms", ns/1e6)
}

// ---- helpers ----

// capitalise upper-cases the first letter: "sources at 30 fps" starts a
// sentence as "Sources at 30 fps".
func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// showableScenes returns the scenes a bus can show: every scene when the
// show has a Program bus (it can cut to any), else those AUX buses show.
var sourceFrameRate = &compiler.Rule{
	ID:        "source-frame-rate",
	Severity:  hcl.DiagWarning,
	Ignorable: true,
	Doc: `A source whose frame rate is not the show's.

Every bus draws at the show's frame rate and shows each source's newest
frame at each tick: a faster source has frames skipped (a 30 fps source in a
25 fps show loses one frame in six, and motion judders), a slower one has
frames repeated. Give the source the show's rate (convert the media), or set
the show's rate to the sources'.`,
	Run: func(p *compiler.Pass) {
		show := p.Show.FrameRate
		if show.Num <= 0 || show.Den <= 0 {
			return
		}
		for _, s := range p.Show.Sources {
			r := s.FrameRate
			if r.Num <= 0 || r.Den <= 0 || r.Num*show.Den == show.Num*r.Den {
				continue
			}
			rng := s.DeclRange
			if a, ok := s.Attrs["frame_rate"]; ok {
				rng = a
			}
			// Per second of the show: the source's frames against the bus's ticks.
			src, bus := float64(r.Num)/float64(r.Den), float64(show.Num)/float64(show.Den)
			what := fmt.Sprintf("the bus skips %.3g of its %.3g frames a second", src-bus, src)
			if src < bus {
				what = fmt.Sprintf("the bus repeats %.3g of its %.3g ticks a second", bus-src, bus)
			}
			report(p, rng, fmt.Sprintf("%s runs at %s fps; the show at %s", s.Address(), rateText(r), rateText(show)),
				what+". Convert the media to the show's rate, or set the source's frame_rate to the show's.")
		}
	},
}

func rateText(r lang.Rational) string {
	if r.Den == 1 {
		return fmt.Sprint(r.Num)
	}
	return fmt.Sprintf("%d/%d", r.Num, r.Den)
}

func showableScenes(s *lang.Show) map[*lang.Scene]bool {
	out := map[*lang.Scene]bool{}
	program := false
	for _, b := range s.Buses {
		if b.Kind == "program" {
			program = true
		}
		if b.Scene != nil {
			out[b.Scene] = true
		}
		for _, r := range b.Routes { // an AUX bus may be switched to its routes
			if r.Scene != nil {
				out[r.Scene] = true
			}
		}
	}
	if program {
		for _, sc := range s.Scenes {
			out[sc] = true
		}
	}
	return out
}

func report(p *compiler.Pass, rng hcl.Range, summary, detail string) {
	r := rng
	p.Report(hcl.Diagnostic{Summary: summary, Detail: detail, Subject: &r})
}

func countKind(s *lang.Show, kind string) int {
	n := 0
	for _, src := range s.Sources {
		if src.Kind == kind {
			n++
		}
	}
	return n
}

// canvasRange points at a canvas setting: its attribute when written, else
// the canvas block, else the show block.
func canvasRange(s *lang.Show, name string) hcl.Range {
	if r, ok := s.Canvas.Attrs[name]; ok {
		return r
	}
	if s.Canvas.DeclRange.Filename != "" {
		return s.Canvas.DeclRange
	}
	return s.DeclRange
}

func showRange(s *lang.Show, name string) hcl.Range {
	return attrOr(s.Attrs, name, s.DeclRange)
}

func attrOr(a lang.Attrs, name string, def hcl.Range) hcl.Range {
	if r, ok := a[name]; ok {
		return r
	}
	return def
}

// rate is a source's frames per second, the show's when it has none.
func rate(r, def lang.Rational) float64 {
	if r.Den == 0 {
		r = def
	}
	if r.Den == 0 {
		return 0
	}
	return float64(r.Num) / float64(r.Den)
}

func fmtRate(r float64) string { return trimFloat(math.Round(r*100) / 100) }

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func gb(b float64) string { return fmt.Sprintf("%.1f GB", b/1e9) }
