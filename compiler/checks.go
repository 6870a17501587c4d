package compiler

// The compiler's checks: rules over node traits (nodes.Kind.Traits), never
// over kind names, so that a kind registered tomorrow with the Routing or
// FanOut role is checked like demux and one_to_many are today.
//
// The "check" pass runs them over the naive graph; "recheck" runs them again
// over the fused graph (reporting only what is new); "capacity" runs the
// capacity rule once the estimates exist.

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/dominikbraun/graph"
	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

var checks = []*Rule{groupOrderRule, inputRoutingRule, readinessRule, formatsRule, nvdecCapsRule, queueSizingRule, capacityRule}

var groupOrderRule = &Rule{
	ID: "group-order",
	Doc: `Node groups start in dependency order, and no two groups depend on each other.

A group (a source's chain, a bus, an output) starts only when every group
that feeds it is ready. The compiler orders the groups so that each starts
after the groups it reads from; a cycle between groups (a bus that feeds a
source that feeds the bus) has no such order and is an error naming it.`,
	Severity: hcl.DiagError,
	Run: func(p *Pass) {
		_, cycles := groupOrder(p.Graph)
		for _, cyc := range cycles {
			n := firstNodeOfGroup(p.Graph, cyc[0])
			p.Report(hcl.Diagnostic{
				Summary: "Node groups depend on each other in a cycle",
				Detail:  fmt.Sprintf("The groups %s feed each other, so none of them can start first. Remove one of the edges that closes the cycle.", strings.Join(cyc, " → ")+" → "+cyc[0]),
				Subject: rangeOfNode(n),
			})
		}
	},
}

var inputRoutingRule = &Rule{
	ID: "input-routing",
	Doc: `Every stream a routing node offers has exactly one consumer; queues never broadcast.

A routing node (a demuxer, or a reader that routes a one-stream file
straight to its decoder) declares how many streams it offers; each must go
to exactly one consumer, or frames pile up in a queue nobody reads. Only a
fan-out may feed several consumers, and never more than its kind allows.
A source shown twice goes through its one fan-out, never a second decoder.`,
	Severity: hcl.DiagError,
	Run: func(p *Pass) {
		g := p.Graph
		perSource := map[string][2]int{} // address → sources, decoders
		for _, n := range g.Nodes() {
			t := n.Decl.Traits
			outs := g.Out(n.ID)
			if n.Source != nil {
				c := perSource[n.Address]
				if t.Roles.Has(nodes.Source) {
					c[0]++
				}
				if t.Roles.Has(nodes.Decoder) {
					c[1]++
				}
				perSource[n.Address] = c
			}
			switch {
			case t.Roles.Has(nodes.Routing):
				offers := intParam(n, "offers")
				seen := map[string]bool{}
				for _, e := range outs {
					if seen[e.To] {
						p.Report(hcl.Diagnostic{Summary: "A stream has two queues to one consumer",
							Detail: fmt.Sprintf("%s (%s) sends to %s twice.", n.ID, n.Kind, e.To), Subject: rangeOfNode(n)})
					}
					seen[e.To] = true
				}
				if len(outs) != offers {
					p.Report(hcl.Diagnostic{Summary: "A routed stream has no single consumer",
						Detail:  fmt.Sprintf("%s (%s) offers %d stream(s) but %d consumer(s) read them; every offered stream needs exactly one consumer.", n.ID, n.Kind, offers, len(outs)),
						Subject: rangeOfNode(n)})
				}
			case t.Roles.Has(nodes.FanOut) || t.Roles.Has(nodes.Compositor):
				if len(outs) > t.MaxOutputs {
					p.Report(hcl.Diagnostic{Summary: "Fan-out wider than allowed",
						Detail:  fmt.Sprintf("%s (%s) feeds %d consumers; the kind allows %d. Show the source on fewer buses (each AUX bus and each Program bus that may cut to it takes one).", n.ID, n.Kind, len(outs), t.MaxOutputs),
						Subject: rangeOfNode(n)})
				}
			default:
				if len(outs) > max(t.MaxOutputs, 1) || len(outs) > 0 && t.MaxOutputs == 0 {
					p.Report(hcl.Diagnostic{Summary: "A queue would broadcast",
						Detail:  fmt.Sprintf("%s (%s) has %d output queues but is not a fan-out; a queue has one reader. Put a fan-out after it.", n.ID, n.Kind, len(outs)),
						Subject: rangeOfNode(n)})
				}
			}
			if t.Roles.Has(nodes.Compositor) {
				for _, e := range g.In(n.ID) {
					from := g.Node(e.From)
					if from.Source != nil && !from.Decl.Traits.Roles.Has(nodes.FanOut) {
						p.Report(hcl.Diagnostic{Summary: "A source reaches a compositor without its fan-out",
							Detail:  fmt.Sprintf("%s feeds %s directly from %s; a source's frames reach compositors only through its fan-out.", from.Address, n.Address, from.ID),
							Subject: rangeOfNode(from)})
					}
				}
			}
		}
		for _, addr := range sortedKeys(perSource) {
			c := perSource[addr]
			if c[0] > 1 || c[1] > 1 {
				n := firstNodeOfGroup(p.Graph, addr)
				p.Report(hcl.Diagnostic{Summary: "A source is read or decoded twice",
					Detail:  fmt.Sprintf("%s has %d reading and %d decoding nodes; a source used twice goes through its fan-out, never a second decoder.", addr, c[0], c[1]),
					Subject: rangeOfNode(n)})
			}
		}
	},
}

var readinessRule = &Rule{
	ID: "readiness",
	Doc: `Every node group's readiness condition is derivable from its nodes' kinds.

A group is ready when every node in it has met its kind's readiness
condition and every edge leaving the group has carried a frame; a group
that is not ready within the timeout fails with an error naming the edge
that never carried one. A kind that declares no readiness condition
cannot be started safely.`,
	Severity: hcl.DiagError,
	Run: func(p *Pass) {
		reported := map[string]bool{}
		for _, n := range p.Graph.Nodes() {
			if n.Decl.Readiness == "" && !reported[n.Kind] {
				reported[n.Kind] = true
				p.Report(hcl.Diagnostic{Summary: "A node kind has no readiness condition",
					Detail:  fmt.Sprintf("%s is a %s, whose declaration in nodes/ states no readiness condition, so group %s cannot say when it is ready. Declare Readiness on the kind.", n.ID, n.Kind, n.Group),
					Subject: rangeOfNode(n)})
			}
		}
	},
}

var formatsRule = &Rule{
	ID: "formats",
	Doc: `Formats, bit depth and sizes agree along every edge; colour tags are stamped at the source.

Each edge carries what its tail emits and what its head takes: packets,
NV12 (8-bit) or P010 (10-bit). A node that works on frames keeps the
format and bit depth of its input, so a P010 source cannot feed a
compositor working in NV12: declare the source's format, or the show's.
Only compositors scale, so sizes agree along every other edge. Every
source stamps its colour tags, so that nothing downstream guesses, and
they are the show's (show { colour { ... } }): a compositor mixes samples
as they are and converts no colour.`,
	Severity: hcl.DiagError,
	Run: func(p *Pass) {
		g := p.Graph
		checkColours(p)
		for _, n := range g.Nodes() {
			t := n.Decl.Traits
			if t.Roles.Has(nodes.Source) && emitsFrames(n.Decl) {
				if c, _ := n.Params["colour"].(string); c == "" {
					p.Report(hcl.Diagnostic{Summary: "A source stamps no colour tags",
						Detail:  fmt.Sprintf("%s (%s) emits frames without colour tags; set the source's colour block.", n.ID, n.Kind),
						Subject: rangeOfNode(n)})
				}
			}
			for _, e := range g.Out(n.ID) {
				to := g.Node(e.To)
				if e.Format != n.Format {
					p.Report(hcl.Diagnostic{Summary: "An edge carries another format than its tail emits",
						Detail: fmt.Sprintf("%s emits %s but the edge to %s is marked %s.", n.ID, n.Format, to.ID, e.Format), Subject: rangeOfNode(n)})
					continue
				}
				if !takes(to.Decl, e.Format) {
					p.Report(hcl.Diagnostic{Summary: "A node is fed a format it does not take",
						Detail:  fmt.Sprintf("%s (%s) emits %s into %s (%s), which takes %s.", n.ID, n.Kind, e.Format, to.ID, to.Kind, strings.Join(to.Decl.Traits.Takes, ", ")),
						Subject: formatRange(n, to)})
					continue
				}
				if isFrame(e.Format) && emitsFrames(to.Decl) && to.Format != e.Format {
					p.Report(hcl.Diagnostic{Summary: "Formats disagree along an edge",
						Detail: fmt.Sprintf("%s emits %s (%d-bit) but %s works in %s (%d-bit). Declare the source's format as %s, or set the show's format to %s.",
							n.Address, e.Format, lang.PixelFormat(e.Format).BitDepth(), to.Address, to.Format, lang.PixelFormat(to.Format).BitDepth(), to.Format, e.Format),
						Subject: formatRange(n, to)})
				}
				if isFrame(e.Format) && !to.Decl.Traits.Roles.Has(nodes.Compositor) && to.Size != (lang.Size{}) && n.Size != (lang.Size{}) && to.Size != n.Size {
					p.Report(hcl.Diagnostic{Summary: "Frame sizes disagree along an edge",
						Detail:  fmt.Sprintf("%s emits %s frames into %s, which expects %s; only compositors scale.", n.ID, sizeString(n.Size), to.ID, sizeString(to.Size)),
						Subject: rangeOfNode(n)})
				}
			}
		}
	},
}

var queueSizingRule = &Rule{
	ID: "queue-sizing",
	Doc: `A source's queue at a compositor holds what arrives within one poll interval.

A compositor looks at its inputs at most every input_poll_ms (or
aux_input_poll_ms). Between two looks a source keeps arriving; its queue
must hold those frames plus the one being drawn and the one in flight, or
frames are dropped. Three frames cover 8 ms up to 60 fps; at higher rates
or longer intervals lower the interval.`,
	Severity: hcl.DiagError,
	Run: func(p *Pass) {
		g := p.Graph
		for _, n := range g.Nodes() {
			if !n.Decl.Traits.Roles.Has(nodes.Compositor) {
				continue
			}
			poll := intParam(n, "input_poll_ms")
			for _, e := range g.In(n.ID) {
				from := g.Node(e.From)
				if !from.Decl.Traits.Roles.Has(nodes.FanOut) {
					continue
				}
				rate := p.Show.FrameRate
				if from.Source != nil && from.Source.FrameRate.Den != 0 {
					rate = from.Source.FrameRate
				}
				need := QueueNeeded(poll, fps(rate))
				if e.Capacity < need {
					key := "input_poll_ms"
					if b := n.Bus; b != nil && b.Kind == "aux" {
						key = "aux_input_poll_ms"
					}
					p.Report(hcl.Diagnostic{Summary: "A source queue is too short for the poll interval",
						Detail: fmt.Sprintf("%s's queue at %s holds %d frames, but at %s fps a poll every %d ms needs %d. Lower canvas.%s to at most %d.",
							from.Address, n.Address, e.Capacity, ratString(rate), poll, need, key, maxPollFor(e.Capacity, fps(rate))),
						Subject: canvasRange(p.Show, key)})
				}
			}
		}
	},
}

// QueueNeeded is the frames a source queue must hold when its compositor
// looks every pollMs at a source arriving at fps: the frames arriving in one
// interval, the one being drawn and the one in flight.
func QueueNeeded(pollMs int, fps float64) int {
	return int(math.Ceil(float64(pollMs)*fps/1000-1e-9)) + 2
}

func maxPollFor(capacity int, fps float64) int {
	if fps <= 0 {
		return 0
	}
	return int(math.Floor(float64(capacity-2) * 1000 / fps))
}

var capacityRule = &Rule{
	ID: "capacity",
	Doc: `The show fits its capacity profile (a GPU's, or the machine's CPU).

The plan's estimates (sources at the show's frame rate, VRAM, page-locked
host memory, PCIe upload, NVDEC decode, NVENC) are compared with the
capacity profile the show names (show.profile, default nvidia_l4).
Exceeding any of them is an error: the show would miss deadlines or fail
to start. A show compiled for the cpu backend is scored instead against
the machine's cores (the buses' drawing) and memory, and exceeding them is
a warning. Reduce the sources, the frame rate or the raw_upload mode's
memory, or compile for a larger profile.`,
	Severity: hcl.DiagError,
	Run: func(p *Pass) {
		if p.Plan == nil {
			return
		}
		for _, b := range p.Plan.Estimates.Budgets {
			if b.OK {
				continue
			}
			d := hcl.Diagnostic{Summary: "Capacity exceeded: " + BudgetLabel(b.Name),
				Detail:  capacityDetail(b, p.Profile.Name),
				Subject: budgetRange(p.Show, b.Name)}
			switch {
			case p.Options.BeyondCapacity:
				d.Severity = hcl.DiagWarning
				d.Detail += " Measuring beyond the profile (-beyond-capacity): the show runs anyway."
			case p.Options.Target != nil && p.Options.Target.Domain == nodes.Host:
				d.Severity = hcl.DiagWarning
				d.Detail += " On the cpu backend this is a warning: the estimate is of the drawing alone and the machine's load decides; the show runs, and may miss deadlines (onair status counts them)."
			}
			p.Report(d)
		}
	},
}

// runChecks runs every check except capacity, reporting only findings not
// already reported by an earlier run.
func runChecks(st *state) {
	var rules []*Rule
	for _, r := range checks {
		if r != capacityRule {
			rules = append(rules, r)
		}
	}
	st.addFindings(st.Result.Run(rules...))
}

func runCapacity(st *state) {
	if st.Plan == nil {
		return
	}
	st.addFindings(st.Result.Run(capacityRule))
}

func (st *state) addFindings(fs []Finding) {
	seen := make(map[string]bool, len(st.Findings))
	key := func(f Finding) string {
		k := f.Rule.ID + "\x00" + f.Diag.Summary + "\x00" + f.Diag.Detail
		if f.Diag.Subject != nil {
			k += "\x00" + f.Diag.Subject.String()
		}
		return k
	}
	for _, f := range st.Findings {
		seen[key(f)] = true
	}
	for _, f := range fs {
		if seen[key(f)] {
			continue
		}
		seen[key(f)] = true
		st.Findings = append(st.Findings, f)
		d := *f.Diag
		d.Summary += " [" + f.Rule.ID + "]"
		st.diags = append(st.diags, &d)
	}
}

// groupOrder orders the node groups so that each comes after the groups
// feeding it (ties in the order groups first appear), and returns the
// cycles between groups, each as its member groups in first-seen order.
// It is Kahn's algorithm over group indices: linear and deterministic;
// only when groups are left over does it build a dominikbraun graph of the
// groups to name the strongly connected components.
func groupOrder(g *Graph) (order []string, cycles [][]string) {
	all := g.Nodes()
	idx := make(map[string]int, len(all)/3+1)
	var names []string
	for _, n := range all {
		if _, ok := idx[n.Group]; !ok {
			idx[n.Group] = len(names)
			names = append(names, n.Group)
		}
	}
	seen := make(map[uint64]struct{})
	adj := make([][]int, len(names))
	indeg := make([]int, len(names))
	for _, n := range all {
		a := idx[n.Group]
		for _, e := range g.Out(n.ID) {
			b := idx[g.Node(e.To).Group]
			if a == b {
				continue
			}
			k := uint64(a)<<32 | uint64(b)
			if _, dup := seen[k]; dup {
				continue
			}
			seen[k] = struct{}{}
			adj[a] = append(adj[a], b)
			indeg[b]++
		}
	}
	ready := &intHeap{}
	for i := range names {
		if indeg[i] == 0 {
			ready.push(i)
		}
	}
	order = make([]string, 0, len(names))
	for ready.len() > 0 {
		i := ready.pop()
		order = append(order, names[i])
		for _, j := range adj[i] {
			indeg[j]--
			if indeg[j] == 0 {
				ready.push(j)
			}
		}
	}
	if len(order) == len(names) {
		return order, nil
	}
	gg := graph.New(graph.StringHash, graph.Directed())
	for _, nm := range names {
		_ = gg.AddVertex(nm)
	}
	for a, bs := range adj {
		for _, b := range bs {
			_ = gg.AddEdge(names[a], names[b])
		}
	}
	sccs, _ := graph.StronglyConnectedComponents(gg)
	for _, c := range sccs {
		if len(c) < 2 {
			continue
		}
		sort.Slice(c, func(i, j int) bool { return idx[c[i]] < idx[c[j]] })
		cycles = append(cycles, c)
	}
	sort.Slice(cycles, func(i, j int) bool { return idx[cycles[i][0]] < idx[cycles[j][0]] })
	return order, cycles
}

// GroupDeps returns, for each group, the groups that feed it, sorted.
func GroupDeps(g *Graph) map[string][]string {
	deps := map[string]map[string]bool{}
	for _, e := range g.Edges() {
		a, b := g.Node(e.From).Group, g.Node(e.To).Group
		if a == b {
			continue
		}
		if deps[b] == nil {
			deps[b] = map[string]bool{}
		}
		deps[b][a] = true
	}
	out := make(map[string][]string, len(deps))
	for b, as := range deps {
		out[b] = sortedKeys(as)
	}
	return out
}

type intHeap struct{ xs []int }

func (h *intHeap) len() int { return len(h.xs) }
func (h *intHeap) push(x int) {
	h.xs = append(h.xs, x)
	for i := len(h.xs) - 1; i > 0; {
		p := (i - 1) / 2
		if h.xs[p] <= h.xs[i] {
			break
		}
		h.xs[p], h.xs[i] = h.xs[i], h.xs[p]
		i = p
	}
}
func (h *intHeap) pop() int {
	top := h.xs[0]
	last := len(h.xs) - 1
	h.xs[0] = h.xs[last]
	h.xs = h.xs[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.xs) && h.xs[l] < h.xs[m] {
			m = l
		}
		if r < len(h.xs) && h.xs[r] < h.xs[m] {
			m = r
		}
		if m == i {
			break
		}
		h.xs[m], h.xs[i] = h.xs[i], h.xs[m]
		i = m
	}
	return top
}

func firstNodeOfGroup(g *Graph, group string) *Node {
	for _, n := range g.Nodes() {
		if n.Group == group {
			return n
		}
	}
	return nil
}

func rangeOfNode(n *Node) *hcl.Range {
	if n == nil {
		return nil
	}
	return rangePtr(n.Range)
}

// formatRange points a format disagreement at the source's format
// attribute when it was written, else at the node's block.
func formatRange(from, to *Node) *hcl.Range {
	for _, n := range []*Node{from, to} {
		if n.Source != nil {
			if r, ok := n.Source.Attrs["format"]; ok {
				return &r
			}
		}
	}
	return rangeOfNode(from)
}

func canvasRange(s *lang.Show, key string) *hcl.Range {
	if r, ok := s.Canvas.Attrs[key]; ok {
		return &r
	}
	if r := rangePtr(s.Canvas.DeclRange); r != nil {
		return r
	}
	return rangePtr(s.DeclRange)
}

func budgetRange(s *lang.Show, name string) *hcl.Range {
	switch name {
	case "pinned host memory":
		if r, ok := s.Canvas.Attrs["raw_upload"]; ok {
			return &r
		}
	}
	if strings.Contains(name, "sources at") {
		if r, ok := s.Attrs["frame_rate"]; ok {
			return &r
		}
	}
	if r, ok := s.Attrs["profile"]; ok {
		return &r
	}
	return rangePtr(s.DeclRange)
}

// intParam is a whole-number param of a node of the graph (the compiler
// writes ints), or the default its kind declares.
func intParam(n *Node, name string) int {
	if v, ok := n.Params[name].(int); ok {
		return v
	}
	if p, ok := n.Decl.Param(name); ok {
		if d, ok := p.Default.(int); ok {
			return d
		}
	}
	return 0
}

func isFrame(f string) bool { return f == nodes.FormatNV12 || f == nodes.FormatP010 }

func emitsFrames(k *nodes.Kind) bool {
	for _, f := range k.Traits.Emits {
		if isFrame(f) {
			return true
		}
	}
	return false
}

func takes(k *nodes.Kind, f string) bool {
	for _, t := range k.Traits.Takes {
		if t == f || t == nodes.FormatAny {
			return true
		}
	}
	return false
}

// capacityDetail says what an exceeded budget needs and what the profile
// allows, in words: "The show needs 192 sources at 30 fps; profile
// nvidia_t4 allows 100."
func capacityDetail(b plan.Budget, profile string) string {
	if b.Name == "nvenc outputs" && b.Limit == 0 {
		return fmt.Sprintf("The show has %s encoding with h264_nvenc, but profile %s's GPU has no NVENC encoder. Encode in software (libx264), or compile for a profile whose GPU has NVENC.", countOf(int(b.Used), "output"), profile)
	}
	return fmt.Sprintf("The show needs %s; profile %s allows %s.", BudgetNeed(b.Used, b), profile, FmtAmount(b.Limit, b.Unit))
}

// BudgetLabel is how a budget reads in a sentence: "VRAM", "PCIe upload",
// "sources at 30 fps".
func BudgetLabel(name string) string {
	switch name {
	case "vram":
		return "VRAM"
	case "pcie upload":
		return "PCIe upload"
	case "nvdec":
		return "NVDEC decode (1080p-equivalent)"
	case "nvenc outputs":
		return "NVENC outputs"
	case "cpu":
		return "CPU for the buses' drawing"
	}
	return name
}

// BudgetNeed says an amount of a budget in words: "192 sources at 30 fps"
// for a count (the budget's name holds the noun), "8.8 GiB of pinned host
// memory" for a quantity.
func BudgetNeed(v float64, b plan.Budget) string {
	switch b.Unit {
	case "bytes", "bytes/s", "frames/s", "cores":
		return FmtAmount(v, b.Unit) + " of " + BudgetLabel(b.Name)
	}
	return fmt.Sprintf("%g %s", v, BudgetLabel(b.Name))
}

// FmtAmount prints an amount with its unit; a count ("sources",
// "outputs") prints bare, since the sentence names what it counts.
func FmtAmount(v float64, unit string) string {
	switch unit {
	case "sources", "outputs":
		return fmt.Sprintf("%g", v)
	}
	return fmtAmount(v, unit)
}

func fmtAmount(v float64, unit string) string {
	switch unit {
	case "bytes":
		return gib(v)
	case "bytes/s":
		return fmt.Sprintf("%.2f GB/s", v/1e9)
	case "frames/s":
		return fmt.Sprintf("%g frames/s", v)
	case "cores":
		return fmt.Sprintf("%.2f cores", v)
	}
	return fmt.Sprintf("%g %s", v, unit)
}

func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// checkColours reports a source whose colour tags differ from the show's
// colour, which every compositor stamps on its pictures.
func checkColours(p *Pass) {
	g := p.Graph
	colourOf := map[string]*Node{} // source address → the node that stamps its tags
	for _, n := range g.Nodes() {
		if n.Decl.Traits.Roles.Has(nodes.Source) && emitsFrames(n.Decl) {
			if _, ok := n.Params["colour"].(string); ok {
				colourOf[n.Address] = n
			}
		}
	}
	reported := map[string]bool{}
	for _, comp := range g.Nodes() {
		want, ok := comp.Params["colour"].(string)
		if !ok || !comp.Decl.Traits.Roles.Has(nodes.Compositor) {
			continue
		}
		for _, e := range g.In(comp.ID) {
			src := colourOf[g.Node(e.From).Address]
			if src == nil || reported[src.Address] {
				continue
			}
			if got := src.Params["colour"].(string); got != want {
				reported[src.Address] = true
				subject := rangeOfNode(src)
				if src.Source != nil {
					if r, ok := src.Source.Attrs["colour"]; ok {
						subject = rangePtr(r)
					}
				}
				p.Report(hcl.Diagnostic{Summary: "A source's colour is not the show's",
					Detail: fmt.Sprintf("%s carries %s (primaries/transfer/matrix/range) but the show's colour is %s, which %s stamps on its pictures; the compositor converts no colour. Give the source the show's colour block, or declare the show's colour once in show { colour { ... } }.",
						src.Address, got, want, comp.Address),
					Subject: subject})
			}
		}
	}
}

var nvdecCapsRule = &Rule{
	ID: "nvdec-caps",
	Doc: `Every NVDEC decoder's stream is one the profile's GPU decodes.

NVDEC decodes HEVC and H.264 within limits its capabilities report: HEVC
8- and 10-bit from 144x144 up to 8192x8192, H.264 8-bit only, from 48x16
up to 4096x4096, on the GPUs onair knows (the profile's nvdec_caps). A
source outside them would fail when the show starts; it is refused here
instead, saying what to change.`,
	Severity: hcl.DiagError,
	Run: func(p *Pass) {
		if p.Profile == nil || len(p.Profile.NVDECCaps) == 0 {
			return
		}
		for _, n := range p.Graph.Nodes() {
			if !n.Decl.Traits.Roles.Has(nodes.Decoder) || n.Domain != nodes.Device || n.Source == nil {
				continue
			}
			codec, _ := n.Params["codec"].(string)
			depth := lang.PixelFormat(n.Format).BitDepth()
			var c *NVDECCap
			for i := range p.Profile.NVDECCaps {
				if p.Profile.NVDECCaps[i].Codec == codec {
					c = &p.Profile.NVDECCaps[i]
				}
			}
			rng := rangeOfNode(n)
			switch {
			case c == nil:
				p.Report(hcl.Diagnostic{Summary: "NVDEC does not decode this codec", Subject: rng,
					Detail: fmt.Sprintf("%s is %s video; profile %s's NVDEC decodes %s.", n.Address, codec, p.Profile.Name, nvdecCodecs(p.Profile))})
			case !slices.Contains(c.BitDepths, depth):
				p.Report(hcl.Diagnostic{Summary: "NVDEC does not decode this bit depth", Subject: rng,
					Detail: fmt.Sprintf("%s is %d-bit %s (format %s); profile %s's NVDEC decodes %s at %v bits. Encode it as 8-bit, or as HEVC for 10-bit.", n.Address, depth, codec, n.Format, p.Profile.Name, codec, c.BitDepths)})
			case n.Size.W < c.MinWidth || n.Size.H < c.MinHeight || n.Size.W > c.MaxWidth || n.Size.H > c.MaxHeight:
				p.Report(hcl.Diagnostic{Summary: "NVDEC does not decode this picture size", Subject: rng,
					Detail: fmt.Sprintf("%s is %s %s; profile %s's NVDEC decodes %s from %dx%d to %dx%d. Scale the file into that range.", n.Address, sizeString(n.Size), codec, p.Profile.Name, codec, c.MinWidth, c.MinHeight, c.MaxWidth, c.MaxHeight)})
			}
		}
	},
}

func nvdecCodecs(pr *Profile) string {
	var s []string
	for _, c := range pr.NVDECCaps {
		s = append(s, c.Codec)
	}
	return strings.Join(s, " and ")
}
