package compiler

import (
	"github.com/dominikbraun/graph"
)

// store makes a Graph the storage of its own dominikbraun graph: vertices
// are the Graph's nodes, an edge's Properties.Data is the *Edge.
type store struct{ g *Graph }

var _ graph.Store[string, *Node] = store{}

func (s store) AddVertex(id string, n *Node, _ graph.VertexProperties) error {
	g := s.g
	if _, dup := g.nodes[id]; dup {
		return graph.ErrVertexAlreadyExists
	}
	g.nodes[id] = n
	if n.seq == 0 {
		g.next++
		n.seq = g.next
	} else {
		g.dirty = true
	}
	g.order = append(g.order, n)
	return nil
}

func (s store) Vertex(id string) (*Node, graph.VertexProperties, error) {
	n, ok := s.g.nodes[id]
	if !ok {
		return nil, graph.VertexProperties{}, graph.ErrVertexNotFound
	}
	return n, graph.VertexProperties{}, nil
}

func (s store) RemoveVertex(id string) error {
	g := s.g
	if _, ok := g.nodes[id]; !ok {
		return graph.ErrVertexNotFound
	}
	if len(g.out[id]) > 0 || len(g.in[id]) > 0 {
		return graph.ErrVertexHasEdges
	}
	delete(g.nodes, id)
	delete(g.out, id)
	delete(g.in, id)
	return nil
}

func (s store) ListVertices() ([]string, error) {
	ns := s.g.Nodes()
	ids := make([]string, len(ns))
	for i, n := range ns {
		ids[i] = n.ID
	}
	return ids, nil
}

func (s store) VertexCount() (int, error) { return len(s.g.nodes), nil }

func (s store) AddEdge(from, to string, e graph.Edge[string]) error {
	g := s.g
	ed, ok := e.Properties.Data.(*Edge)
	if !ok {
		ed = &Edge{From: from, To: to, Capacity: 1, Policy: "block"}
	}
	g.out[from] = append(g.out[from], ed)
	g.in[to] = append(g.in[to], ed)
	g.edges++
	return nil
}

func (s store) UpdateEdge(from, to string, e graph.Edge[string]) error {
	old := s.g.find(from, to)
	if old == nil {
		return graph.ErrEdgeNotFound
	}
	if ed, ok := e.Properties.Data.(*Edge); ok && ed != old {
		*old = *ed
	}
	return nil
}

func (s store) RemoveEdge(from, to string) error {
	g := s.g
	if g.find(from, to) == nil {
		return graph.ErrEdgeNotFound
	}
	g.out[from] = dropEdge(g.out[from], from, to)
	g.in[to] = dropEdge(g.in[to], from, to)
	g.edges--
	return nil
}

func (s store) Edge(from, to string) (graph.Edge[string], error) {
	e := s.g.find(from, to)
	if e == nil {
		return graph.Edge[string]{}, graph.ErrEdgeNotFound
	}
	return toLibEdge(e), nil
}

func (s store) ListEdges() ([]graph.Edge[string], error) {
	es := s.g.Edges()
	out := make([]graph.Edge[string], len(es))
	for i, e := range es {
		out[i] = toLibEdge(e)
	}
	return out, nil
}

func toLibEdge(e *Edge) graph.Edge[string] {
	return graph.Edge[string]{Source: e.From, Target: e.To, Properties: graph.EdgeProperties{Data: e, Attributes: map[string]string{}}}
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
