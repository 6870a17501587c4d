package diff

import (
	"fmt"
	"slices"
	"strings"

	ivalue "github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

// registryLive reads the Live flag of a param in the nodes/ registry.
func registryLive(kind, param string) bool {
	k, ok := nodes.Lookup(kind)
	if !ok {
		return false
	}
	p, ok := k.Param(param)
	return ok && p.Live
}

// paramLive says why a param of a node of kind cannot go from old to new
// on air, nil when it can: declared Live (LiveParam), and the registry's
// checks (range, a list only grown at its end). It is the one predicate
// behind an attribute's "# live" and what apply changes.
func paramLive(kind, param string, old, new any) error {
	if !LiveParam(kind, param) {
		return fmt.Errorf("%s.%s is not live", kind, param)
	}
	k, ok := nodes.Lookup(kind)
	if !ok {
		return fmt.Errorf("no node kind %s", kind)
	}
	return k.CheckLive(param, old, new)
}

// Live is what applying the new plan on air does: the node params it
// changes (each checked against its declaration), the scenes it changes,
// adds and renames, the show elements it touches, and what needs the
// show restarted instead, each with why. onair diff marks "# live"
// exactly what is here; onair apply -dry-run prints the refusals, and
// onair apply changes all of it, or, with a refusal, nothing.
type Live struct {
	Updates []nodes.Update
	Scenes  []plan.Scene      // new layers, or new scenes
	Renames map[string]string // scenes renamed by a moved block: old address → new
	// Elements are the show elements changed, in address order.
	Elements []string
	// Refused says, for each change that cannot be made on air, what
	// changed and why it needs the show restarted.
	Refused []string
	// Add is what starts on air: the nodes of the sources created, the
	// edges among them and from them (or from a source's fan-out on a
	// loop) into the buses on air, their groups, and the loops they are
	// placed on that the plan on air does not run.
	Add Addition
}

// Addition is the part of a plan started on air (runtime.Extension's
// fields; this package does not link the runtime).
type Addition struct {
	Nodes  []plan.Node
	Edges  []plan.Edge
	Groups []plan.Group
	Loops  []plan.Loop
}

// Sources are the addresses of the sources the addition starts, in order.
func (a Addition) Sources() []string {
	var out []string
	for _, n := range a.Nodes {
		if !slices.Contains(out, n.Address) {
			out = append(out, n.Address)
		}
	}
	return out
}

// live works out r.Live from r's changes and the two plans.
func (d *differ) live(r *Result) *Live {
	lv := &Live{}
	for _, sa := range r.Show {
		name, isCanvas := strings.CutPrefix(sa.Name, "canvas.")
		k, p, ok := nodes.LiveCanvas(name)
		switch {
		case !isCanvas || !ok:
			lv.Refused = append(lv.Refused, fmt.Sprintf("%s changed (%v → %v): a show or canvas setting that no live param carries", sa.Name, sa.Old, sa.New))
		default:
			if err := p.Check(normalized(sa.New)); err != nil {
				lv.Refused = append(lv.Refused, fmt.Sprintf("%s: %v (it feeds %s.%s)", sa.Name, err, k.Name, p.Name))
			}
		}
	}
	sceneOf := make(map[string]int, len(d.new.Scenes))
	for i, sc := range d.new.Scenes {
		sceneOf[sc.Address] = i
	}
	nodeOf := make(map[string]*plan.Node, len(d.new.Nodes))
	for i := range d.new.Nodes {
		nodeOf[d.new.Nodes[i].ID] = &d.new.Nodes[i]
	}
	g := &growth{d: d, created: map[string]bool{}, oldKind: make(map[string]string, len(d.old.Nodes))}
	for _, n := range d.old.Nodes {
		g.oldKind[n.ID] = n.Kind
	}
	for _, c := range r.Changes {
		if c.Element == "source" && c.Action == Create {
			for _, nc := range c.Nodes {
				g.created[nc.ID] = true
			}
		}
	}
	for i := range r.Changes {
		c := &r.Changes[i]
		why := ""
		switch {
		case c.MovedFrom != "" && c.Element != "scene":
			why = fmt.Sprintf("%s from %s: on air only scenes are renamed", c.Reason, c.MovedFrom)
		case c.Element == "scene" && (c.Action == Update || c.Action == Create) && len(c.Nodes) == 0:
			if i, ok := sceneOf[c.Address]; ok {
				lv.Scenes = append(lv.Scenes, d.new.Scenes[i])
			}
			if c.MovedFrom != "" {
				if lv.Renames == nil {
					lv.Renames = map[string]string{}
				}
				lv.Renames[c.MovedFrom] = c.Address
			}
		case c.Element == "source" && c.Action == Create:
			// Started on air (g.addition), ready before a bus shows it.
		case c.Action == Update && len(c.Nodes) > 0:
			why = lv.nodeUpdates(c, nodeOf, g)
		default:
			why = fmt.Sprintf("%s: on air only scenes and sources are added, and nodes change only the params their kinds declare live; a source removed or re-created needs the show restarted", c.Reason)
		}
		if why != "" {
			c.Refused = why
			lv.Refused = append(lv.Refused, fmt.Sprintf("%s %s (%s)", c.Address, c.Action, why))
			continue
		}
		lv.Elements = append(lv.Elements, c.Address)
	}
	if len(lv.Refused) == 0 {
		lv.Add = g.addition()
	}
	return lv
}

// growth is what a change starts on air: the nodes created (the sources
// created), and the edges into running compositors that live input
// changes add.
type growth struct {
	d       *differ
	created map[string]bool   // node ids of the sources created
	oldKind map[string]string // the plan on air's nodes' kinds
	into    []plan.Edge
}

// fanOutOnLoop reports whether kind is a fan-out an event loop drives
// (no thread of its own): its outputs can grow while it runs.
func fanOutOnLoop(kind string) bool {
	k, ok := nodes.Lookup(kind)
	return ok && k.Has(nodes.FanOut) && !k.Traits.Blocking
}

// kindHas reports whether kind is registered with role r.
func kindHas(kind string, r nodes.Role) bool {
	k, ok := nodes.Lookup(kind)
	return ok && k.Has(r)
}

// input says why the new edge from into the running compositor to cannot
// be added on air, "" when it can (and is kept for the addition): it
// comes from a source created, or from a source's fan-out on a loop (an
// AUX bus routed to a source on air).
func (g *growth) input(from, to string) string {
	if !g.created[from] && !fanOutOnLoop(g.oldKind[from]) {
		return fmt.Sprintf("%s is not a source's fan-out on a loop, whose outputs are fixed while it runs", from)
	}
	for _, e := range g.d.new.Edges {
		if e.From == from && e.To == to {
			g.into = append(g.into, e)
			return ""
		}
	}
	return fmt.Sprintf("the plan has no edge %s -> %s", from, to)
}

// addition is the part of the new plan that starts on air.
func (g *growth) addition() Addition {
	var a Addition
	groups, loops := map[string]bool{}, map[string]bool{}
	for _, l := range g.d.old.Loops {
		loops[l.Name] = true
	}
	loops["default"] = true
	for _, n := range g.d.new.Nodes {
		if g.created[n.ID] {
			a.Nodes = append(a.Nodes, n)
			groups[n.Group] = true
		}
	}
	for _, gr := range g.d.new.Groups {
		if groups[gr.Name] {
			a.Groups = append(a.Groups, gr)
		}
	}
	for _, l := range g.d.new.Loops {
		for _, n := range a.Nodes {
			if n.Placement.Loop == l.Name && !loops[l.Name] {
				a.Loops = append(a.Loops, l)
				loops[l.Name] = true
			}
		}
	}
	for _, e := range g.d.new.Edges {
		if g.created[e.From] && g.created[e.To] {
			a.Edges = append(a.Edges, e)
		}
	}
	a.Edges = append(a.Edges, g.into...)
	return a
}

// nodeUpdates adds the updates of c's nodes to lv, or says why c needs
// the show restarted.
func (lv *Live) nodeUpdates(c *Change, nodeOf map[string]*plan.Node, g *growth) string {
	var ups []nodes.Update
	var not []string
	for ni := range c.Nodes {
		nc := &c.Nodes[ni]
		if nc.Action != Update {
			not = append(not, fmt.Sprintf("%s is %sd", nc.ID, nc.Action))
			continue
		}
		for ai := range nc.Attrs {
			a := &nc.Attrs[ai]
			if from, ok := strings.CutPrefix(a.Name, "input "); ok && a.Old == nil && kindHas(nc.Kind, nodes.Compositor) {
				if why := g.input(from, nc.ID); why != "" {
					not = append(not, fmt.Sprintf("%s %s is added (%s)", nc.ID, a.Name, why))
				} else {
					a.Live = true // a bus's new input: started with its source (Add)
				}
				continue
			}
			if !a.Live {
				not = append(not, fmt.Sprintf("%s %s changes (%s)", nc.ID, a.Name, whyNotLive(nc.Kind, *a)))
				continue
			}
			if n := nodeOf[nc.ID]; n != nil {
				v := n.Params[a.Name]
				if k, ok := nodes.Lookup(n.Kind); ok {
					v = k.Value(n.Params, a.Name) // a param left out is its default
				}
				ups = append(ups, nodes.Update{Node: n.ID, Address: n.Address, Kind: n.Kind, Param: a.Name, Value: v})
			}
		}
	}
	if len(not) > 0 {
		return strings.Join(not, "; ")
	}
	lv.Updates = append(lv.Updates, ups...)
	return ""
}

// whyNotLive says why attribute a of a node of kind cannot change on air.
func whyNotLive(kind string, a Attr) string {
	switch {
	case strings.HasPrefix(a.Name, "input "):
		return "a running node's inputs are fixed but for a bus's new input from a source added or a source's fan-out on a loop"
	case a.Name == "placement" || a.Name == "group":
		return "a running node keeps its loop and its group"
	}
	if err := paramLive(kind, a.Name, a.Old, a.New); err != nil {
		return err.Error()
	}
	return "it is not live"
}

// normalized reads a value from a saved plan as the compiler wrote it
// (whole numbers as int, lists as []string).
func normalized(v any) any {
	if n, err := ivalue.Normalize(v); err == nil {
		return n
	}
	return v
}
