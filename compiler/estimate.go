package compiler

// estimate computes what the show will cost and compares it with the
// capacity profile:
//   - threads (one per blocking node, one per event loop), loops, nodes, edges;
//   - VRAM: frames held in every queue of device frames, the frames each
//     device node keeps (NVDEC decode surfaces, a raw reader's pool, a
//     browser window's imported buffers), three canvases per bus;
//   - page-locked host memory: one frame per direct or pinned raw source, the
//     file's size per resident source (its size on disk; when it cannot be
//     read, frame size × frame rate × 2 s, and a note says so);
//   - PCIe upload bytes/s: every frame an uploading node moves to the GPU;
//   - NVDEC load in 1080p-equivalent frames/s;
//   - sources against the profile's source limits for the show's rate and
//     raw_upload mode; NVENC for ffmpeg outputs that ask for it;
//   - with delivery outputs, each one's encoding CPU at the show's encodes
//     at once (encodes) and onair's own CPU beside them (showCPU).
//
// A cpu plan (frames in host memory) is scored instead against a CPU
// profile, the host's: the cores its buses' drawing takes and the host
// memory its frames hold (estimateHost).
//
// Needs: the emitted plan. Leaves: Plan.Estimates with one Budget per limit.

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/onairhq/onair/delivery"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

// FrameBytes is the size of one frame: NV12 12 bits a pixel, P010 24.
func FrameBytes(s lang.Size, f string) int64 {
	px := int64(s.W) * int64(s.H)
	if f == string(lang.P010) {
		return px * 3
	}
	return px * 3 / 2
}

// Canvases each bus keeps in VRAM: the one being drawn, the one on air and
// the one being handed to outputs.
const canvasesPerBus = 3

func estimate(st *state) {
	if st.Plan == nil {
		return
	}
	g := st.Graph
	e := &st.Plan.Estimates
	threads := 0
	var vram, pinned, pcie int64
	var nvdec float64
	raw := 0
	stat := st.Options.StatFile
	if stat == nil {
		stat = func(path string) (int64, error) {
			fi, err := os.Stat(path)
			if err != nil {
				return 0, err
			}
			return fi.Size(), nil
		}
	}
	var guessed []string
	all := g.Nodes()
	pools := map[*nodes.Pool]int{} // nodes handing work to each shared pool
	for _, n := range all {
		t := n.Decl.Traits
		if n.Placement.Thread {
			threads++
		}
		if p := n.Decl.InPool(n.Params); p != nil {
			pools[p]++
		}
		fb := FrameBytes(n.Size, n.Format)
		rate := st.nodeRate(n)
		c := st.gpuCost(n)
		vram += c.vram
		pcie += c.pcie
		nvdec += c.nvdec
		if t.Roles.Has(nodes.Uploader) {
			if n.Source != nil && n.Source.Path != "" && n.Source.Codec() == "" { // raw pictures from a file
				raw++
			}
			switch n.Params["mode"] {
			case "pinned", "direct":
				pinned += fb
			case "resident":
				var path string // where onair runs: the plan's is relative to the show
				if n.Source != nil {
					path = n.Source.Path
				}
				size, err := stat(path)
				if err != nil {
					size = int64(float64(fb) * rate * 2)
					guessed = append(guessed, n.Address)
				}
				pinned += size
			}
		}
	}
	byName := make([]*nodes.Pool, 0, len(pools))
	for p := range pools {
		byName = append(byName, p)
	}
	sort.Slice(byName, func(i, j int) bool { return byName[i].Name < byName[j].Name }) // a plan is the same bytes every time
	for _, p := range byName {
		users := pools[p]
		threads += min(p.Threads, users)
		e.Notes = append(e.Notes, fmt.Sprintf("%s: %s share at most %s", p.Name, countOf(users, "node"), countOf(min(p.Threads, users), "thread")))
	}
	loops := len(st.Plan.Loops) // event loops and decode loops: a thread each
	e.Threads = threads + loops
	e.EventLoops = loops - st.decodeLoops
	e.Nodes = len(all)
	e.Edges = len(st.Plan.Edges)
	e.VRAMBytes, e.PinnedHostBytes, e.PCIeBytesPerSec = vram, pinned, pcie
	e.NVDECFramesPerSec = round3(nvdec)
	if len(guessed) > 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("pinned host memory for %d resident source(s) estimated as frame size × frame rate × 2 s: their files could not be read (%s)", len(guessed), strings.Join(firstN(guessed, 3), ", ")))
	}
	e.GPUs = st.gpuEstimates()
	if st.Profile == nil {
		return
	}
	pr := st.Profile
	st.encodes(pr)
	// A show over several GPUs has, show-wide, the budgets of all of them;
	// each GPU's own are in e.GPUs. Page-locked memory is the host's.
	gpus := float64(max(st.Show.Canvas.Int("gpus"), 1))
	budget := func(name string, used, limit float64, unit string) {
		e.Budgets = append(e.Budgets, plan.Budget{Name: name, Used: used, Limit: limit, Unit: unit, OK: used <= limit})
	}
	sources := len(st.Show.Sources)
	for _, l := range pr.SourceLimitFor(st.Show.Canvas.String("raw_upload"), fps(st.Show.FrameRate)) {
		if l.MaxSources > 0 {
			budget(fmt.Sprintf("sources at %g fps", l.FrameRate), float64(sources), gpus*float64(l.MaxSources), "sources")
		}
		if l.MaxRawSources > 0 {
			budget(fmt.Sprintf("raw %s sources at %g fps", l.Mode, l.FrameRate), float64(raw), gpus*float64(l.MaxRawSources), "sources")
		}
	}
	if st.Options.Target.Domain == nodes.Host { // nothing of it on a GPU
		st.estimateHost(budget)
		st.showCPU(pr)
		return
	}
	st.showCPU(pr)
	budget("vram", float64(vram), gpus*pr.VRAMBytes.Value, "bytes")
	budget("pinned host memory", float64(pinned), pr.PinnedHostBytes.Value, "bytes")
	budget("pcie upload", float64(pcie), gpus*pr.PCIeBytesPerSec.Value, "bytes/s")
	budget("nvdec", e.NVDECFramesPerSec, gpus*pr.NVDECFramesPerSec.Value, "frames/s")
	nvenc := 0
	for _, n := range st.Graph.Nodes() { // an output whose encoder arguments name NVENC
		if args, ok := n.Params["args"].([]string); ok && n.Decl.Has(nodes.Sink) && strings.Contains(strings.Join(args, " "), "nvenc") {
			nvenc++
		}
	}
	if nvenc > 0 && pr.NVENC.Value == 0 {
		// The profile's GPU has no hardware encoder: every h264_nvenc
		// output exceeds it.
		budget("nvenc outputs", float64(nvenc), 0, "outputs")
	}
}

// encodes estimates each delivery output's encoding CPU from the
// profile's measured figures (Profile.EncodeCost): the encoder the plan
// names ("auto" is the software encoder; a machine with NVENC takes it off
// the CPU, and so does the estimate), its preset or the encoder's
// default, the output's size and the show's rate, with the show's
// software encodes all running at once (EncodeCost interpolates between
// the concurrencies measured). Each encode says which figures it used.
func (st *state) encodes(pr *Profile) {
	e := &st.Plan.Estimates
	type planned struct {
		n           *Node
		enc, preset string
		rate        float64
		software    bool
	}
	var outs []planned
	for _, n := range st.Graph.Nodes() {
		if !nodes.IsDelivery(n.Decl) {
			continue
		}
		codec, _ := n.Params["codec"].(string)
		encoder, _ := n.Params["encoder"].(string)
		preset, _ := n.Params["preset"].(string)
		enc := delivery.PlannedEncoder(delivery.Video{Codec: codec, Encoder: encoder})
		if encoder == "auto" && pr.NVENC.Value > 0 {
			enc = delivery.Codecs[codec].NVENC
		}
		if preset == "" {
			preset = delivery.DefaultPreset(enc)
		}
		sw := !strings.HasSuffix(enc, "_nvenc")
		if sw {
			e.ConcurrentEncodes++
		}
		outs = append(outs, planned{n, enc, preset, st.nodeRate(n), sw})
	}
	var unmeasured []string
	for _, o := range outs {
		est, ok := pr.EncodeCost(o.enc, o.preset, o.n.Size.W, o.n.Size.H, o.rate, e.ConcurrentEncodes)
		if !ok && o.software {
			unmeasured = append(unmeasured, o.n.Address+" ("+o.enc+" "+o.preset+")")
		}
		pct := round3(est.CorePercent)
		e.Encodes = append(e.Encodes, plan.Encode{Output: o.n.Address, Encoder: o.enc, Preset: o.preset, Width: o.n.Size.W, Height: o.n.Size.H,
			FrameRate: round3(o.rate), CorePercent: pct, Measured: ok, Basis: est.Basis})
		e.EncodeCorePercent += pct
	}
	e.EncodeCorePercent = round3(e.EncodeCorePercent)
	if len(e.Encodes) > 0 {
		e.HostCores = int(pr.Cores.Value)
	}
	if len(unmeasured) > 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("encoding CPU not estimated for %d output(s): profile %s has no measured figure for %s", len(unmeasured), pr.Name, strings.Join(firstN(unmeasured, 3), ", ")))
	}
}

// showCPU estimates, for a show with delivery outputs, onair's own CPU
// beside their encodes, which lint encodes-exceed-cores adds to them: a
// cpu plan's is its buses' drawing (CPUCores); a GPU plan's is the
// profile's reading of a show (ShowCPU) scaled by the show's sources ×
// frame rate, a note says from what. A GPU profile without the reading
// leaves it 0, and a note says so.
func (st *state) showCPU(pr *Profile) {
	e := &st.Plan.Estimates
	if len(e.Encodes) == 0 {
		return
	}
	if st.Options.Target.Domain == nodes.Host {
		e.ShowCorePercent = round3(100 * e.CPUCores)
		return
	}
	c := pr.ShowCPU
	if c == nil {
		e.Notes = append(e.Notes, fmt.Sprintf("onair's own CPU beside the encodes not estimated: profile %s has no reading of a show's (show_cpu)", pr.Name))
		return
	}
	sources, rate := len(st.Show.Sources), fps(st.Show.FrameRate)
	e.ShowCorePercent = round3(c.CorePercent * float64(sources) * rate / (float64(c.Sources) * c.FrameRate))
	e.Notes = append(e.Notes, fmt.Sprintf("show cpu: onair's own, profile %s's reading of %g %% of one core for %d sources at %g fps scaled to %d at %g fps; what runs apart from onair (browser producers, Chromium) is not in it",
		pr.Name, c.CorePercent, c.Sources, c.FrameRate, sources, rate))
}

// gpuEstimates is each GPU's share of a show placed on several: what its
// nodes cost (gpuCost), its sources and buses, the frames copied onto it
// from other GPUs (one copy per tick for each source's frame and GPU that
// reads it, however many edges there read it), and, with a GPU profile,
// each against one GPU's budget. Nil for a show on one GPU.
func (st *state) gpuEstimates() []plan.GPUEstimate {
	n := st.Show.Canvas.Int("gpus")
	if n < 2 {
		return nil
	}
	out := make([]plan.GPUEstimate, n)
	costs := make([]cost, n)
	counted := map[any]bool{}
	for _, nd := range st.Graph.Nodes() {
		i, ok := nd.Placement.OnGPU()
		if !ok {
			continue
		}
		costs[i].add(st.gpuCost(nd))
		if nd.Source != nil && !counted[nd.Source] {
			counted[nd.Source] = true
			out[i].Sources++
		}
		if nd.Bus != nil && !counted[nd.Bus] {
			counted[nd.Bus] = true
			out[i].Buses++
		}
	}
	type crossing struct {
		from string // the node whose frames cross
		to   int    // onto this GPU
	}
	copied := map[crossing]bool{}
	for _, e := range st.Plan.Edges {
		if e.Cross == nil || copied[crossing{e.From, e.Cross.To}] {
			continue // none, or this frame reaches that GPU already
		}
		copied[crossing{e.From, e.Cross.To}] = true
		from := st.Graph.Node(e.From)
		rate := st.nodeRate(from)
		out[e.Cross.To].PeerCopiesPerSec += rate
		out[e.Cross.To].PeerBytesPerSec += int64(rate * float64(FrameBytes(from.Size, from.Format)))
	}
	target := st.Options.Target
	for i := range out {
		g := &out[i]
		g.GPU = i
		g.VRAMBytes, g.PCIeBytesPerSec, g.NVDECFramesPerSec = costs[i].vram, costs[i].pcie, round3(costs[i].nvdec)
		g.PeerCopiesPerSec = round3(g.PeerCopiesPerSec)
		if st.Profile == nil || (target != nil && target.Domain == nodes.Host) {
			continue
		}
		pr := st.Profile
		for _, b := range []plan.Budget{
			{Name: "vram", Used: float64(g.VRAMBytes), Limit: pr.VRAMBytes.Value, Unit: "bytes"},
			{Name: "pcie upload", Used: float64(g.PCIeBytesPerSec), Limit: pr.PCIeBytesPerSec.Value, Unit: "bytes/s"},
			{Name: "nvdec", Used: g.NVDECFramesPerSec, Limit: pr.NVDECFramesPerSec.Value, Unit: "frames/s"},
		} {
			b.OK = b.Used <= b.Limit
			g.Budgets = append(g.Budgets, b)
		}
	}
	return out
}

// cost is what one node puts on the GPU it runs on, or for a node in host
// memory what it keeps there.
type cost struct {
	vram, pcie int64
	nvdec      float64 // 1080p-equivalent pictures/s
	host       int64   // bytes of frames in host memory (a cpu plan's)
}

func (c *cost) add(o cost) { c.vram += o.vram; c.pcie += o.pcie; c.nvdec += o.nvdec; c.host += o.host }

// estimateHost scores a cpu plan against a CPU profile: the cores its
// buses' drawing takes (EstimateCPUTicks: each bus's dearest scene every
// tick) and the host memory its frames take. A GPU profile (named by the
// show or -profile) has no such figures; a note says so.
func (st *state) estimateHost(budget func(name string, used, limit float64, unit string)) {
	e := &st.Plan.Estimates
	var ns float64
	for _, t := range EstimateCPUTicks(st.Show) {
		ns += t.CPUNs / t.PeriodNs
	}
	e.CPUCores = round3(ns)
	for _, n := range st.Graph.Nodes() {
		e.HostBytes += st.gpuCost(n).host
	}
	pr := st.Profile
	if pr.Backend != "cpu" {
		e.Notes = append(e.Notes, fmt.Sprintf("profile %s is a GPU's: a cpu plan's cores and host memory are scored against a CPU profile (cpu)", pr.Name))
		return
	}
	budget("cpu", e.CPUCores, pr.Cores.Value, "cores")
	budget("host memory", float64(e.HostBytes), pr.MemoryBytes.Value, "bytes")
	e.Notes = append(e.Notes, "cpu: the buses' drawing, each bus's dearest scene every tick; decoding and outputs come on top")
}

// nodeRate is the frames per second a node moves: its source's rate, else
// the show's.
func (st *state) nodeRate(n *Node) float64 {
	if n.Source != nil && n.Source.FrameRate.Den != 0 {
		return fps(n.Source.FrameRate)
	}
	return fps(st.Show.FrameRate)
}

// gpuCost is node n's share of VRAM, PCIe upload and NVDEC: the frames
// held in its queues of device frames, the frames it keeps (NVDEC decode
// surfaces, a raw reader's pool, a browser window's imported buffers, a
// bus's canvases) and the frames it uploads.
func (st *state) gpuCost(n *Node) cost {
	var c cost
	t := n.Decl.Traits
	fb := FrameBytes(n.Size, n.Format)
	rate := st.nodeRate(n)
	var held int64 // bytes of frames the node keeps, on the GPU or the host
	if isFrame(n.Format) {
		for _, out := range st.Graph.Out(n.ID) {
			held += int64(out.Capacity) * fb
		}
	}
	switch {
	case t.Roles.Has(nodes.Compositor):
		held += canvasesPerBus * fb
	case t.Roles.Has(nodes.Decoder) && n.Domain == nodes.Device: // NVDEC: dec_video (nvdec) or nvdec_file
		held += int64(intParam(n, "surfaces")) * fb
		c.nvdec += rate * float64(n.Size.W*n.Size.H) / (1920 * 1080)
	case t.Roles.Has(nodes.Importer):
		held += int64(st.Show.Canvas.Int("browser_frame_queue")) * fb
	case t.Roles.Has(nodes.Source | nodes.Uploader):
		held += 2 * fb // the reader's pool: one frame queued, one being filled
	}
	if n.Domain == nodes.Device {
		c.vram = held
	} else {
		c.host = held
	}
	if t.Roles.Has(nodes.Uploader) {
		c.pcie += int64(rate * float64(fb))
	}
	return c
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

func firstN(xs []string, n int) []string {
	if len(xs) > n {
		return append(xs[:n:n], fmt.Sprintf("and %d more", len(xs)-n))
	}
	return xs
}

func itoa(i int) string { return fmt.Sprint(i) }
