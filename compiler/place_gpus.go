package compiler

// placeGPUs puts a show that spans several GPUs (canvas gpus above 1) on
// them. Each bus's nodes go to the GPU its address picks (Slot, as pacing
// loops do). Each source's chain (reader, decoder, upload or import, fan-out)
// goes, whole, to the GPU of the first bus that shows it at the start (else
// reads it) when its cost fits
// there beside what is placed already, else to the next GPU in its own
// rendezvous order that has room, else (nowhere has room) to its bus's GPU,
// which the gpu-over-budget lint rule then reports. Sources are placed in
// the order of their addresses' hashes, not the show's, so where one is
// declared changes nothing: adding a source moves no other while every GPU
// has room for it. An output runs on the GPU of the bus it reads. A source
// a bus on another GPU reads crosses there once per tick (emit marks the
// edges, estimate counts the copies).
//
// Needs: the placed graph and the profile (its VRAM, PCIe and NVDEC are one
// GPU's budget). Leaves: Placement.GPU of every node of a source, bus or
// output; nothing on a show of one GPU.

import (
	"sort"

	"github.com/onairhq/onair/lang"
)

func placeGPUs(st *state) {
	n := st.Show.Canvas.Int("gpus")
	if n < 2 {
		return
	}
	g := st.Graph
	all := g.Nodes()
	busGPU := map[*lang.Bus]int{}
	used := make([]cost, n)
	srcCost := map[*lang.Source]cost{}
	var sources []*lang.Source
	for _, nd := range all {
		switch {
		case nd.Bus != nil:
			i, ok := busGPU[nd.Bus]
			if !ok {
				i = Slot(st.placementKey(nd.Bus.Address()), n)
				busGPU[nd.Bus] = i
			}
			used[i].add(st.gpuCost(nd))
		case nd.Source != nil:
			if _, ok := srcCost[nd.Source]; !ok {
				sources = append(sources, nd.Source)
			}
			c := srcCost[nd.Source]
			c.add(st.gpuCost(nd))
			srcCost[nd.Source] = c
		}
	}
	// A source's home is the GPU of the first bus (in the show's order)
	// that shows it at the start, else of the first bus that reads it (a
	// Program bus reads every source it can cut to).
	home := map[*lang.Source]int{}
	for _, b := range st.Show.Buses {
		i, ok := busGPU[b]
		if !ok {
			continue
		}
		for _, s := range shownAtStart(b) {
			if _, done := home[s]; !done {
				home[s] = i
			}
		}
	}
	for _, nd := range all {
		if nd.Bus == nil {
			continue
		}
		for _, e := range g.In(nd.ID) {
			if from := g.Node(e.From); from != nil && from.Source != nil {
				if _, ok := home[from.Source]; !ok {
					home[from.Source] = busGPU[nd.Bus]
				}
			}
		}
	}
	key := map[*lang.Source]uint64{}
	for _, s := range sources {
		key[s] = score(st.placementKey(s.Address()), -1)
	}
	sort.SliceStable(sources, func(i, j int) bool { return key[sources[i]] < key[sources[j]] })
	srcGPU := map[*lang.Source]int{}
	for _, s := range sources {
		c := srcCost[s]
		order := rendezvousOrder(st.placementKey(s.Address()), n)
		first, ok := home[s]
		if ok {
			order = append([]int{first}, without(order, first)...)
		}
		pick := order[0]
		for _, i := range order {
			if st.fitsGPU(used[i], c) {
				pick = i
				break
			}
		}
		srcGPU[s] = pick
		used[pick].add(c)
	}
	for _, nd := range all {
		var i int
		switch {
		case nd.Bus != nil:
			i = busGPU[nd.Bus]
		case nd.Source != nil:
			i = srcGPU[nd.Source]
		default:
			continue
		}
		nd.Placement.GPU = &i
	}
	for _, nd := range all { // outputs: on the GPU of what they read
		if nd.Output == nil {
			continue
		}
		for _, e := range g.In(nd.ID) {
			if from := g.Node(e.From); from != nil && from.Placement.GPU != nil {
				i := *from.Placement.GPU
				nd.Placement.GPU = &i
				break
			}
		}
	}
}

// shownAtStart is the sources bus b shows when the show starts.
func shownAtStart(b *lang.Bus) []*lang.Source {
	if b.Source != nil {
		return []*lang.Source{b.Source}
	}
	var out []*lang.Source
	if b.Scene != nil {
		for _, l := range b.Scene.Layers {
			out = append(out, l.Source)
		}
	}
	return out
}

// fitsGPU says whether c fits on a GPU already carrying used, within one
// GPU of the profile. Without a profile everything fits.
func (st *state) fitsGPU(used, c cost) bool {
	pr := st.Profile
	if pr == nil {
		return true
	}
	return float64(used.vram+c.vram) <= pr.VRAMBytes.Value &&
		float64(used.pcie+c.pcie) <= pr.PCIeBytesPerSec.Value &&
		used.nvdec+c.nvdec <= pr.NVDECFramesPerSec.Value
}

// rendezvousOrder is the n slots ranked by their score for key, best
// first: Slot(key, n) is its first.
func rendezvousOrder(key string, n int) []int {
	order := make([]int, n)
	scores := make([]uint64, n)
	for i := range order {
		order[i], scores[i] = i, score(key, i)
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	return order
}

func without(xs []int, x int) []int {
	out := make([]int, 0, len(xs))
	for _, v := range xs {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}
