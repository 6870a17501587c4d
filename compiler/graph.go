package compiler

import (
	"sort"

	"github.com/dominikbraun/graph"
	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
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

// Graph is the node graph. It is a github.com/dominikbraun/graph directed
// graph whose store is the Graph itself (see store.go): adjacency is kept
// in insertion order, so every walk over it is deterministic, and the
// library's algorithms (paths, cycles, topological order) run over the
// same data through Graph.Graph().
type Graph struct {
	g     graph.Graph[string, *Node]
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
	g.g = graph.NewWithStore(func(n *Node) string { return n.ID }, graph.Store[string, *Node](store{g}), graph.Directed())
	return g
}

// AddNode adds n; a node id already present is a compiler bug and panics.
func (g *Graph) AddNode(n *Node) {
	if err := g.g.AddVertex(n); err != nil {
		panic("compiler: node " + n.ID + ": " + err.Error())
	}
}

// Replace adds n in the place of the node old (already removed or about to
// be), so that walks list n where old was.
func (g *Graph) Replace(old, n *Node) {
	n.seq = old.seq
	g.AddNode(n)
}

// AddEdge joins two nodes with a queue.
func (g *Graph) AddEdge(e *Edge) {
	if err := g.g.AddEdge(e.From, e.To, graph.EdgeData(e)); err != nil {
		panic("compiler: edge " + e.From + " -> " + e.To + ": " + err.Error())
	}
}

// RemoveEdge removes the queue from -> to.
func (g *Graph) RemoveEdge(from, to string) { _ = g.g.RemoveEdge(from, to) }

// RemoveNode removes a node and every edge touching it.
func (g *Graph) RemoveNode(id string) {
	for _, e := range append([]*Edge(nil), g.out[id]...) {
		g.RemoveEdge(e.From, e.To)
	}
	for _, e := range append([]*Edge(nil), g.in[id]...) {
		g.RemoveEdge(e.From, e.To)
	}
	_ = g.g.RemoveVertex(id)
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

// Len is the number of nodes.
func (g *Graph) Len() int { return len(g.nodes) }

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

// Graph exposes the underlying dominikbraun graph for algorithms (cycles,
// paths) that lint rules may want.
func (g *Graph) Graph() graph.Graph[string, *Node] { return g.g }

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
