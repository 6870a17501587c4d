package compiler

// emit writes the plan from the placed graph: nodes and edges in graph
// order (which follows the show's declaration order), loops ("default"
// first, "outputs" when outputs run on a loop, then pacing_0..n-1), groups in start order with their readiness,
// the fusion log, the scenes and moved blocks. Everything is ordered, never
// iterated out of a map, so the same show gives the same bytes.
//
// Needs: the placed graph. Leaves: st.Plan (estimates still empty).

import (
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

// ReadinessTimeoutMs is how long a group may take to become ready.
const ReadinessTimeoutMs = 10000

func emit(st *state) {
	show, g := st.Show, st.Graph
	p := &plan.Plan{
		FormatVersion: plan.FormatVersion,
		ToolVersion:   st.Options.ToolVersion,
		Show:          show.Name,
		ShowHash:      show.Hash,
		Backend:       st.Options.Target.Backend,
		Size:          show.Size,
		FrameRate:     show.FrameRate,
		Canvas:        show.Canvas.Settings.Clone(),
		Fusions:       append([]plan.Fusion{}, st.fusions...),
	}
	if st.Profile != nil {
		p.Profile = st.Profile.Name
	}
	var err error
	if p.Format, err = value.ParsePixelFormat(string(show.Format)); err != nil {
		st.errorf(nil, "Internal error: the show's pixel format", "%v. Please report this with the show.", err)
	}
	all := g.Nodes()
	p.Nodes = make([]plan.Node, 0, len(all))
	loopNodes := map[string][]string{}
	for _, n := range all {
		if err := n.Decl.Validate(n.Params); err != nil {
			// The compiler built a node its kind refuses: a compiler bug,
			// reported rather than emitted into a plan the runtime would
			// refuse later.
			st.errorf(rangePtr(n.Range), "Internal error: invalid node parameters", "%s: %v. Please report this with the show.", n.ID, err)
		}
		p.Nodes = append(p.Nodes, plan.Node{
			ID: n.ID, Kind: n.Kind, Address: n.Address, Group: n.Group, Placement: n.Placement,
			Params: n.Params, Format: value.Stream(n.Format), Domain: string(n.Domain), Size: frameSize(n), Range: st.planRange(n.Range),
		})
		if n.Placement.Loop != "" {
			loopNodes[n.Placement.Loop] = append(loopNodes[n.Placement.Loop], n.ID)
		}
	}
	edges := g.Edges()
	p.Edges = make([]plan.Edge, 0, len(edges))
	for _, e := range edges {
		p.Edges = append(p.Edges, plan.Edge{From: e.From, To: e.To, Capacity: e.Capacity, Policy: e.Policy, Format: value.Stream(e.Format), Cross: crossGPU(g.Node(e.From), g.Node(e.To))})
	}
	n := max(show.Canvas.Int("pacing_loops"), 1)
	p.Loops = append(p.Loops, plan.Loop{Name: "default", Nodes: loopNodes["default"]})
	if ns := loopNodes[OutputsLoop]; len(ns) > 0 {
		p.Loops = append(p.Loops, plan.Loop{Name: OutputsLoop, Nodes: ns})
	}
	paced := make([][]string, n)
	present := map[*lang.Source]bool{}
	for _, nd := range all {
		if nd.Source != nil {
			present[nd.Source] = true
		}
	}
	for _, s := range show.Sources {
		if present[s] {
			i := Slot(st.placementKey(s.Address()), n)
			paced[i] = append(paced[i], s.Address())
		}
	}
	for i := 0; i < n; i++ {
		name := PacingLoop(i)
		p.Loops = append(p.Loops, plan.Loop{Name: name, Sources: paced[i], Nodes: loopNodes[name]})
	}
	for i := 0; i < st.decodeLoops; i++ {
		name := DecodeLoop(i)
		p.Loops = append(p.Loops, plan.Loop{Name: name, Kind: decodeLoopKind, Nodes: loopNodes[name]})
	}

	order, _ := groupOrder(g)
	st.groups = order
	deps := GroupDeps(g)
	members := map[string][]*Node{}
	for _, nd := range all {
		members[nd.Group] = append(members[nd.Group], nd)
	}
	p.Groups = make([]plan.Group, 0, len(order))
	for i, name := range order {
		p.Groups = append(p.Groups, plan.Group{Name: name, Order: i, DependsOn: deps[name],
			Readiness: groupReadiness(g, members[name]), ReadyTimeoutMs: ReadinessTimeoutMs, Restartable: restartable(members[name])})
	}
	for _, sc := range show.Scenes {
		ps := plan.Scene{Address: sc.Address(), Layers: []plan.Layer{}, Range: st.planRange(sc.DeclRange)}
		for _, l := range sc.Layers {
			if l.Source == nil {
				continue
			}
			pl := plan.Layer{Source: l.Source.Address(), Rect: [4]int{l.Rect.X, l.Rect.Y, l.Rect.W, l.Rect.H}, Fit: l.Fit, Opacity: l.Opacity, Z: l.Z}
			if l.Crop != nil {
				pl.Crop = &[4]int{l.Crop.X, l.Crop.Y, l.Crop.W, l.Crop.H}
			}
			ps.Layers = append(ps.Layers, pl)
		}
		p.Scenes = append(p.Scenes, ps)
	}
	if p.Scenes == nil {
		p.Scenes = []plan.Scene{}
	}
	for _, m := range show.Moved {
		p.Moved = append(p.Moved, plan.Moved{From: m.From, To: m.To})
	}
	for _, t := range show.Tallies {
		p.Tallies = append(p.Tallies, plan.Tally{Name: t.Name, Kind: t.Kind, Transport: t.Transport, Address: t.Address, Port: t.Port, Screen: t.Screen, Range: st.planRange(t.DeclRange)})
	}
	st.Plan = p
}

// frameSize is the size of the frames a node emits, none when it emits none.
func frameSize(n *Node) value.Size {
	if !isFrame(n.Format) || len(n.Decl.Traits.Emits) == 0 {
		return value.Size{}
	}
	return n.Size
}

// groupReadiness states a group's readiness from its nodes' kinds: each
// kind's condition, and every edge leaving the group having carried a frame.
func groupReadiness(g *Graph, members []*Node) string {
	var conds []string
	seen := map[string]bool{}
	leaving := 0
	for _, n := range members {
		if n.Decl.Readiness != "" && !seen[n.Kind] {
			seen[n.Kind] = true
			conds = append(conds, n.Kind+": "+n.Decl.Readiness)
		}
		for _, e := range g.Out(n.ID) {
			if g.Node(e.To).Group != n.Group {
				leaving++
			}
		}
	}
	s := strings.Join(conds, "; ")
	if leaving > 0 {
		s += "; every edge leaving the group has carried a frame"
	}
	return s + "; within " + itoa(ReadinessTimeoutMs/1000) + " s, else an error naming the edge that carried none"
}

// restartable: every group restarts alone when one of its nodes fails
// (an error, or a panic in its work). A source's restart shows black or
// its last frame for a moment; a bus's takes its outputs off air for the
// restart delay, which is still better than ending the show for every bus
// (a compositor's band that panics on one broken picture, say).
func restartable([]*Node) bool { return true }

// planRange is PlanRange with the file named relative to the show's
// directory, as every path in a plan is.
func (st *state) planRange(r hcl.Range) *plan.Range {
	pr := PlanRange(r)
	if pr != nil {
		pr.Filename = st.Show.Rel(pr.Filename)
	}
	return pr
}

// PlanRange converts an HCL range for the plan; nil for an empty range.
func PlanRange(r hcl.Range) *plan.Range {
	if r.Filename == "" && r.Start.Line == 0 {
		return nil
	}
	return &plan.Range{Filename: r.Filename,
		Start: plan.Pos{Line: r.Start.Line, Column: r.Start.Column, Byte: r.Start.Byte},
		End:   plan.Pos{Line: r.End.Line, Column: r.End.Column, Byte: r.End.Byte}}
}

// crossGPU is the copy an edge needs when its ends run on different GPUs
// and what travels is a frame in device memory; nil otherwise.
func crossGPU(from, to *Node) *plan.CrossGPU {
	if from == nil || to == nil || from.Domain != nodes.Device || !isFrame(from.Format) {
		return nil
	}
	a, ok1 := from.Placement.OnGPU()
	b, ok2 := to.Placement.OnGPU()
	if !ok1 || !ok2 || a == b {
		return nil
	}
	return &plan.CrossGPU{From: a, To: b}
}
