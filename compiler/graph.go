package compiler

import (
	"sort"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

// Node is one node of the graph being compiled. Rules read Decl.Traits,
// never Kind.
type Node struct {
	ID      string      // "<address>/<kind>", unique
	Kind    string      // the registered kind's name
	Decl    *nodes.Kind // the kind's declaration: traits, params, readiness
	Address string      // the show element it was made for
	Group   string      // the node group it starts with

	Params map[string]any
	Format string // what it emits: nv12 | p010 | packets | dmabuf
	Domain nodes.Domain
	Size   lang.Size

	Placement plan.Placement

	// The show element behind the node (one of these is set) and the range
	// diagnostics point at.
	Source *lang.Source
	Bus    *lang.Bus
	Output *lang.Output
	Range  hcl.Range

	seq float64 // position in Graph.Nodes: a replacement takes its predecessor's
}

// Edge is a bounded queue between two nodes.
type Edge struct {
	From, To string
	Capacity int
	Policy   string // block | drop
	Format   string // what travels
}

// Graph is the node graph, a directed graph whose adjacency is kept in
// insertion order, so every walk over it is deterministic.
type Graph struct {
	nodes map[string]*Node
	out   map[string][]*Edge
	in    map[string][]*Edge
	order []*Node // nodes by seq (may hold removed nodes until Nodes runs)
	next  float64
	dirty bool
	edges int
}

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	g := &Graph{
		nodes: map[string]*Node{},
		out:   map[string][]*Edge{},
		in:    map[string][]*Edge{},
	}
	return g
}

// AddNode adds n; a node id already present is a compiler bug and panics.
func (g *Graph) AddNode(n *Node) {
	if _, dup := g.nodes[n.ID]; dup {
		panic("compiler: node " + n.ID + " added twice")
	}
	g.nodes[n.ID] = n
	if n.seq == 0 {
		g.next++
		n.seq = g.next
	} else {
		g.dirty = true
	}
	g.order = append(g.order, n)
}

// Replace adds n in the place of the node old (already removed or about to
// be), so that walks list n where old was.
func (g *Graph) Replace(old, n *Node) {
	n.seq = old.seq
	g.AddNode(n)
}

// AddEdge joins two nodes with a queue.
func (g *Graph) AddEdge(e *Edge) {
	switch {
	case g.nodes[e.From] == nil || g.nodes[e.To] == nil:
		panic("compiler: edge " + e.From + " -> " + e.To + " joins a node not in the graph")
	case g.find(e.From, e.To) != nil:
		panic("compiler: edge " + e.From + " -> " + e.To + " added twice")
	}
	g.out[e.From] = append(g.out[e.From], e)
	g.in[e.To] = append(g.in[e.To], e)
	g.edges++
}

// RemoveEdge removes the queue from -> to, if there is one.
func (g *Graph) RemoveEdge(from, to string) {
	if g.find(from, to) == nil {
		return
	}
	g.out[from] = dropEdge(g.out[from], from, to)
	g.in[to] = dropEdge(g.in[to], from, to)
	g.edges--
}

// RemoveNode removes a node and every edge touching it.
func (g *Graph) RemoveNode(id string) {
	for _, e := range append([]*Edge(nil), g.out[id]...) {
		g.RemoveEdge(e.From, e.To)
	}
	for _, e := range append([]*Edge(nil), g.in[id]...) {
		g.RemoveEdge(e.From, e.To)
	}
	delete(g.nodes, id)
	delete(g.out, id)
	delete(g.in, id)
}

// Rename gives a node a new id and kind in place: its edges (the same Edge
// values, so every neighbour's edge order is kept) now name the new id.
func (g *Graph) Rename(n *Node, id, kind string, decl *nodes.Kind) {
	old := n.ID
	if _, dup := g.nodes[id]; dup {
		panic("compiler: rename onto an existing node: " + id)
	}
	outs, ins := g.out[old], g.in[old]
	delete(g.nodes, old)
	delete(g.out, old)
	delete(g.in, old)
	n.ID, n.Kind, n.Decl = id, kind, decl
	g.nodes[id] = n
	for _, e := range outs {
		e.From = id
	}
	for _, e := range ins {
		e.To = id
	}
	g.out[id], g.in[id] = outs, ins
}

// Splice removes a node that has one input and one output edge and joins
// its neighbours with the output edge's queue.
func (g *Graph) Splice(id string) {
	ins, outs := g.in[id], g.out[id]
	if len(ins) != 1 || len(outs) != 1 {
		panic("compiler: splice of " + id + " needs one input and one output")
	}
	e := *outs[0]
	e.From = ins[0].From
	e.Format = ins[0].Format
	g.RemoveNode(id)
	g.AddEdge(&e)
}

// Node returns the node with the given id, or nil.
func (g *Graph) Node(id string) *Node { return g.nodes[id] }

// Nodes returns the nodes in the order they were added (which follows the
// show's declaration order); a replacement stands where its original stood.
func (g *Graph) Nodes() []*Node {
	live := g.order[:0]
	for _, n := range g.order {
		if g.nodes[n.ID] == n {
			live = append(live, n)
		}
	}
	for i := len(live); i < len(g.order); i++ {
		g.order[i] = nil
	}
	g.order = live
	if g.dirty {
		sort.SliceStable(g.order, func(i, j int) bool { return g.order[i].seq < g.order[j].seq })
		g.dirty = false
	}
	return append([]*Node(nil), g.order...)
}

// Out returns the edges leaving a node, in the order they were added.
func (g *Graph) Out(id string) []*Edge { return g.out[id] }

// In returns the edges entering a node, in the order they were added.
func (g *Graph) In(id string) []*Edge { return g.in[id] }

// Edges returns every edge, ordered by the node order of their tails.
func (g *Graph) Edges() []*Edge {
	var out []*Edge
	for _, n := range g.Nodes() {
		out = append(out, g.out[n.ID]...)
	}
	return out
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// find returns the edge from -> to, scanning the shorter adjacency list.
func (g *Graph) find(from, to string) *Edge {
	outs, ins := g.out[from], g.in[to]
	if len(ins) < len(outs) {
		for _, e := range ins {
			if e.From == from {
				return e
			}
		}
		return nil
	}
	for _, e := range outs {
		if e.To == to {
			return e
		}
	}
	return nil
}

func dropEdge(es []*Edge, from, to string) []*Edge {
	for i, e := range es {
		if e.From == from && e.To == to {
			return append(es[:i:i], es[i+1:]...)
		}
	}
	return es
}
