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
//     raw_upload mode; NVENC for ffmpeg outputs that ask for it.
//
// Needs: the emitted plan. Leaves: Plan.Estimates with one Budget per limit.

import (
	"fmt"
	"os"
	"sort"
	"strings"

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
		rate := fps(st.Show.FrameRate)
		if n.Source != nil && n.Source.FrameRate.Den != 0 {
			rate = fps(n.Source.FrameRate)
		}
		if n.Domain == nodes.Device && isFrame(n.Format) {
			for _, out := range g.Out(n.ID) {
				vram += int64(out.Capacity) * fb
			}
		}
		if n.Domain != nodes.Device {
			// host memory: nothing held on the GPU
		} else {
			switch {
			case t.Roles.Has(nodes.Compositor):
				vram += canvasesPerBus * fb
			case t.Roles.Has(nodes.Decoder): // NVDEC: dec_video (nvdec) or nvdec_file
				vram += int64(intParam(n, "surfaces")) * fb
				nvdec += rate * float64(n.Size.W*n.Size.H) / (1920 * 1080)
			case t.Roles.Has(nodes.Importer):
				vram += int64(st.Show.Canvas.Int("browser_frame_queue")) * fb
			case t.Roles.Has(nodes.Source | nodes.Uploader):
				vram += 2 * fb // the reader's pool: one frame queued, one being filled
			}
		}
		if t.Roles.Has(nodes.Uploader) {
			pcie += int64(rate * float64(fb))
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
	if st.Profile == nil {
		return
	}
	pr := st.Profile
	budget := func(name string, used, limit float64, unit string) {
		e.Budgets = append(e.Budgets, plan.Budget{Name: name, Used: used, Limit: limit, Unit: unit, OK: used <= limit})
	}
	sources := len(st.Show.Sources)
	for _, l := range pr.SourceLimitFor(st.Show.Canvas.String("raw_upload"), fps(st.Show.FrameRate)) {
		if l.MaxSources > 0 {
			budget(fmt.Sprintf("sources at %g fps", l.FrameRate), float64(sources), float64(l.MaxSources), "sources")
		}
		if l.MaxRawSources > 0 {
			budget(fmt.Sprintf("raw %s sources at %g fps", l.Mode, l.FrameRate), float64(raw), float64(l.MaxRawSources), "sources")
		}
	}
	if st.Options.Target.Domain == nodes.Host { // nothing of it on a GPU
		return
	}
	budget("vram", float64(vram), pr.VRAMBytes.Value, "bytes")
	budget("pinned host memory", float64(pinned), pr.PinnedHostBytes.Value, "bytes")
	budget("pcie upload", float64(pcie), pr.PCIeBytesPerSec.Value, "bytes/s")
	budget("nvdec", e.NVDECFramesPerSec, pr.NVDECFramesPerSec.Value, "frames/s")
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

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

func firstN(xs []string, n int) []string {
	if len(xs) > n {
		return append(xs[:n:n], fmt.Sprintf("and %d more", len(xs)-n))
	}
	return xs
}

func itoa(i int) string { return fmt.Sprint(i) }
