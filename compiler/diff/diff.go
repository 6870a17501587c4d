// Package diff compares two compiled shows and says what applying the new
// one to the show on air would do: which show elements and nodes are
// created, updated in place (live), replaced (re-created) or deleted, why,
// and which buses glitch and which sources restart because of it.
//
// It reads plans only, so that a saved plan and a freshly compiled show
// compare alike. This package must never import lang/, the compiler's
// passes or runtime/; it reads nodes/ only for which params are live.
package diff

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/onairhq/onair/plan"
)

// Action is what applying the new plan does to one element or node. The set
// is closed, in Terraform's vocabulary.
type Action string

const (
	Create  Action = "create"  // new: started while the show is on air
	Update  Action = "update"  // changed in place while it runs (live)
	Replace Action = "replace" // stopped and re-created: its frames stop meanwhile
	Delete  Action = "delete"  // stopped and removed
)

// Symbol is the action's mark in the human rendering.
func (a Action) Symbol() string {
	switch a {
	case Create:
		return "+"
	case Update:
		return "~"
	case Replace:
		return "-/+"
	case Delete:
		return "-"
	}
	return " "
}

// Reason is a stable code saying why a change has its action.
type Reason string

const (
	ReasonAdded          Reason = "added"           // not in the old plan
	ReasonRemoved        Reason = "removed"         // not in the new plan
	ReasonKindChanged    Reason = "kind_changed"    // a node's kind differs: it cannot become the other kind
	ReasonParamNotLive   Reason = "param_not_live"  // a param the node kind does not declare Live changed
	ReasonParamLive      Reason = "param_live"      // only Live params changed
	ReasonFormatChanged  Reason = "format_changed"  // the frame format or memory domain a node emits changed
	ReasonThreadChanged  Reason = "thread_changed"  // a node moved between its own thread and an event loop
	ReasonLoopChanged    Reason = "loop_changed"    // a node moved from one event loop to another
	ReasonGPUChanged     Reason = "gpu_changed"     // a node moved to another GPU: its memory lives on the new one
	ReasonGroupChanged   Reason = "group_changed"   // a node now starts with another node group
	ReasonInputsChanged  Reason = "inputs_changed"  // the edges into a node changed (a scene's sources, a capacity)
	ReasonChainChanged   Reason = "chain_changed"   // nodes of an element that stays were added or removed
	ReasonMoved          Reason = "moved"           // renamed by a moved block
	ReasonLayersChanged  Reason = "layers_changed"  // a scene's layers changed
	ReasonShowChanged    Reason = "show_changed"    // a show-level setting changed
	ReasonCanvasChanged  Reason = "canvas_changed"  // a canvas setting changed
	ReasonSceneReference Reason = "scene_reference" // a scene's layer names a source that is replaced or deleted
)

// Result is the difference between two plans.
type Result struct {
	Old     Side     `json:"old"`
	New     Side     `json:"new"`
	Show    []Attr   `json:"show,omitempty"` // show and canvas settings that changed
	Changes []Change `json:"changes"`        // one per show element, in address order
	Impact  Impact   `json:"impact"`
	Summary Summary  `json:"summary"`
	// Live is what onair apply makes of it on air, and what it refuses.
	Live *Live `json:"-"`
}

// Side names one of the two plans compared.
type Side struct {
	Show     string `json:"show"`
	ShowHash string `json:"show_hash"`
	Label    string `json:"label,omitempty"` // the path the plan came from, set by the caller
}

// Change is what happens to one show element ("source.cam[3]", "bus.a",
// "scene.quad"), with node-level detail.
type Change struct {
	Address string `json:"address"`
	Element string `json:"element"` // source | scene | bus | output | show
	Action  Action `json:"action"`
	Reason  Reason `json:"reason"`
	// Attribute names what forced a replacement: a param that is not live
	// ("dec_video.path"), "kind", or a canvas setting.
	Attribute string       `json:"attribute,omitempty"`
	MovedFrom string       `json:"moved_from,omitempty"` // the old address, for a rename
	Nodes     []NodeChange `json:"nodes,omitempty"`
	Attrs     []Attr       `json:"attrs,omitempty"` // element-level changes (scene layers)
	Range     *plan.Range  `json:"range,omitempty"` // where the element is in the new (or, deleted, old) show
	// Refused, when set, says why onair apply cannot make this change on
	// air: it needs the show restarted (Live's refusal of it).
	Refused string `json:"refused,omitempty"`
}

// NodeChange is what happens to one node.
type NodeChange struct {
	ID        string `json:"id"` // the new id; the old one for a delete
	OldID     string `json:"old_id,omitempty"`
	Kind      string `json:"kind"`
	Action    Action `json:"action"`
	Reason    Reason `json:"reason"`
	Attribute string `json:"attribute,omitempty"` // what forced the replacement
	Attrs     []Attr `json:"attrs,omitempty"`
}

// Attr is one attribute that changed. Old or New is nil when absent.
type Attr struct {
	Name  string `json:"name"`
	Old   any    `json:"old,omitempty"`
	New   any    `json:"new,omitempty"`
	Live  bool   `json:"live"`
	Force bool   `json:"forces_replacement,omitempty"`
}

// Impact is what the viewer of each bus sees while the change is applied.
type Impact struct {
	Glitches []Glitch `json:"glitches,omitempty"` // buses that lose frames
	Restarts []string `json:"restarts,omitempty"` // sources that restart (replaced)
	Starts   []string `json:"starts,omitempty"`   // sources that start
	Stops    []string `json:"stops,omitempty"`    // sources that stop
	// OutputsRestart are outputs re-created: a recording starts a new
	// file, an encoder reconnects.
	OutputsRestart []string `json:"outputs_restart,omitempty"`
}

// Glitch is one bus that glitches, and the sources (or its own compositor)
// that make it.
type Glitch struct {
	Bus     string   `json:"bus"`
	Because []string `json:"because"`
}

// Summary counts element-level changes by action.
type Summary struct {
	Create  int `json:"create"`
	Update  int `json:"update"`
	Replace int `json:"replace"`
	Delete  int `json:"delete"`
}

// Changed reports whether applying the new plan changes anything.
func (r *Result) Changed() bool { return len(r.Changes) > 0 || len(r.Show) > 0 }

// LiveParam reports whether a node kind declares a param as changeable on
// a running node. A kind or param it does not know is not live: a change
// to it is applied by re-creating the node, which is always safe.
// The default reads the nodes/ registry; tests may replace it.
var LiveParam = registryLive

// Diff compares two plans. Renames declared by the new plan's moved blocks
// (or, failing those, the old plan's) match elements across the two.
func Diff(old, new *plan.Plan) *Result {
	if old == nil {
		old = &plan.Plan{}
	}
	if new == nil {
		new = &plan.Plan{}
	}
	d := &differ{old: old, new: new, rename: renames(old, new)}
	return d.run()
}

type differ struct {
	old, new *plan.Plan
	rename   []plan.Moved
}

// renames returns the moved blocks in effect, the new plan's first.
func renames(old, new *plan.Plan) []plan.Moved {
	var out []plan.Moved
	seen := map[string]bool{}
	for _, ms := range [][]plan.Moved{new.Moved, old.Moved} {
		for _, m := range ms {
			if m.From == "" || m.To == "" || seen[m.From] {
				continue
			}
			seen[m.From] = true
			out = append(out, m)
		}
	}
	return out
}

// renamed maps an old address (or a node id or any string starting with an
// address) to its new name. A move of "source.a" also moves "source.a[3]"
// and "source.a/dec_video".
func (d *differ) renamed(s string) (string, bool) {
	if len(d.rename) == 0 {
		return s, false
	}
	for _, m := range d.rename {
		if s == m.From {
			return m.To, true
		}
		if strings.HasPrefix(s, m.From) {
			rest := s[len(m.From):]
			if rest[0] == '[' || rest[0] == '/' {
				return m.To + rest, true
			}
		}
	}
	return s, false
}

func (d *differ) renameValue(v any) any {
	switch x := v.(type) {
	case string:
		s, _ := d.renamed(x)
		return s
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = d.renameValue(e)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			out[i], _ = d.renamed(e)
		}
		return out
	}
	return v
}

// elementOf returns "source" for "source.cam[3]".
func elementOf(addr string) string {
	if i := strings.IndexByte(addr, '.'); i > 0 {
		return addr[:i]
	}
	return addr
}

type nodeState struct {
	node   plan.Node
	oldID  string // before renaming
	inputs []string
}

func inputsOf(p *plan.Plan, rn func(string) string) map[string][]string {
	in := make(map[string][]string, len(p.Nodes))
	for _, e := range p.Edges {
		to := rn(e.To)
		in[to] = append(in[to], rn(e.From)+"\x00"+edgeDesc(e))
	}
	for k := range in {
		sort.Strings(in[k])
	}
	return in
}

func (d *differ) run() *Result {
	r := &Result{
		Old: Side{Show: d.old.Show, ShowHash: d.old.ShowHash},
		New: Side{Show: d.new.Show, ShowHash: d.new.ShowHash},
	}
	r.Show = showAttrs(d.old, d.new)
	canvasCause := ""
	if len(r.Show) > 0 {
		canvasCause = r.Show[0].Name
	}

	ident := func(s string) string { return s }
	rn := func(s string) string { s2, _ := d.renamed(s); return s2 }
	oldIn := inputsOf(d.old, rn)
	newIn := inputsOf(d.new, ident)

	oldNodes := make(map[string]*nodeState, len(d.old.Nodes))
	for _, n := range d.old.Nodes {
		st := &nodeState{node: n, oldID: n.ID}
		st.node.ID = rn(n.ID)
		st.node.Address = rn(n.Address)
		st.node.Group = rn(n.Group)
		if len(n.Params) > 0 {
			st.node.Params = map[string]any{}
			for k, v := range n.Params {
				st.node.Params[k] = d.renameValue(v)
			}
		}
		st.inputs = oldIn[st.node.ID]
		oldNodes[st.node.ID] = st
	}

	// Element-level bookkeeping, keyed by the new address.
	type elem struct {
		change   Change
		inOld    bool
		inNew    bool
		moved    string
		oldRange *plan.Range
		oldKinds []string // kinds of its nodes in the old plan
		newKinds []string
	}
	elems := map[string]*elem{}
	get := func(addr string) *elem {
		e := elems[addr]
		if e == nil {
			e = &elem{change: Change{Address: addr, Element: elementOf(addr)}}
			elems[addr] = e
		}
		return e
	}
	for _, n := range d.old.Nodes {
		addr, moved := d.renamed(n.Address)
		e := get(addr)
		e.inOld = true
		e.oldKinds = append(e.oldKinds, n.Kind)
		if moved {
			e.moved = n.Address
		}
		if e.oldRange == nil {
			e.oldRange = n.Range
		}
	}

	seen := make(map[string]bool, len(d.new.Nodes))
	for _, n := range d.new.Nodes {
		e := get(n.Address)
		e.inNew = true
		e.newKinds = append(e.newKinds, n.Kind)
		if e.change.Range == nil {
			e.change.Range = n.Range
		}
		seen[n.ID] = true
		o, ok := oldNodes[n.ID]
		if !ok {
			e.change.Nodes = append(e.change.Nodes, NodeChange{ID: n.ID, Kind: n.Kind, Action: Create, Reason: ReasonAdded})
			continue
		}
		if nc, changed := compareNode(o, n, newIn[n.ID]); changed {
			e.change.Nodes = append(e.change.Nodes, nc)
		}
	}
	for _, n := range d.old.Nodes {
		st := oldNodes[rn(n.ID)]
		if seen[st.node.ID] {
			continue
		}
		e := get(st.node.Address)
		e.change.Nodes = append(e.change.Nodes, NodeChange{ID: n.ID, Kind: n.Kind, Action: Delete, Reason: ReasonRemoved})
	}

	// Scenes are elements without nodes of their own.
	oldScenes := map[string]plan.Scene{}
	for _, s := range d.old.Scenes {
		addr, moved := d.renamed(s.Address)
		if len(d.rename) > 0 { // a copy: the old plan stays as it was
			s.Layers = append([]plan.Layer(nil), s.Layers...)
			for i := range s.Layers {
				s.Layers[i].Source = rn(s.Layers[i].Source)
			}
		}
		oldScenes[addr] = s
		e := get(addr)
		e.inOld = true
		if moved {
			e.moved = s.Address
		}
		e.oldRange = s.Range
	}
	for _, s := range d.new.Scenes {
		e := get(s.Address)
		e.inNew = true
		e.change.Range = s.Range
		if o, ok := oldScenes[s.Address]; ok {
			e.change.Attrs = layerAttrs(o.Layers, s.Layers)
		}
	}

	// Decide each element's action.
	for addr, e := range elems {
		c := &e.change
		sort.Slice(c.Nodes, func(i, j int) bool { return c.Nodes[i].ID < c.Nodes[j].ID })
		c.MovedFrom = e.moved
		switch {
		case !e.inOld:
			c.Action, c.Reason = Create, ReasonAdded
		case !e.inNew:
			c.Action, c.Reason = Delete, ReasonRemoved
			c.Range = e.oldRange
		default:
			var creates, deletes, updates int
			var replace *NodeChange
			for i := range c.Nodes {
				switch c.Nodes[i].Action {
				case Create:
					creates++
				case Delete:
					deletes++
				case Update:
					updates++
				case Replace:
					if replace == nil {
						replace = &c.Nodes[i]
					}
				}
			}
			switch {
			case replace != nil:
				c.Action, c.Reason = Replace, replace.Reason
				c.Attribute = replace.Kind + "." + replace.Attribute
				if replace.Attribute == "kind" {
					c.Attribute = "kind"
				}
			case len(e.oldKinds) == 1 && len(e.newKinds) == 1 && e.oldKinds[0] != e.newKinds[0]:
				// One node that became another kind: an output "null"
				// that is now "record".
				c.Action, c.Reason, c.Attribute = Replace, ReasonKindChanged, "kind"
				c.Attrs = append(c.Attrs, Attr{Name: "kind", Old: e.oldKinds[0], New: e.newKinds[0], Force: true})
			case (creates > 0 || deletes > 0) && (c.Element == "source" || (creates > 0 && deletes > 0)):
				// The source's chain changed shape: it restarts.
				c.Action, c.Reason, c.Attribute = Replace, ReasonChainChanged, canvasCause
			case creates > 0 || deletes > 0 || updates > 0:
				c.Action = Update
				c.Reason = c.Nodes[0].Reason
				if creates > 0 || deletes > 0 {
					c.Reason = ReasonChainChanged
				}
			case len(c.Attrs) > 0:
				c.Action, c.Reason = Update, ReasonLayersChanged
			case e.moved != "":
				c.Action, c.Reason = Update, ReasonMoved
			default:
				delete(elems, addr)
				continue
			}
			if e.moved != "" && c.Action == Update && c.Reason != ReasonMoved {
				// A rename that also changed something: say both.
				c.Reason = ReasonMoved
			}
		}
	}

	for _, e := range elems {
		r.Changes = append(r.Changes, e.change)
	}
	sort.Slice(r.Changes, func(i, j int) bool { return addrLess(r.Changes[i].Address, r.Changes[j].Address) })
	for _, c := range r.Changes {
		switch c.Action {
		case Create:
			r.Summary.Create++
		case Update:
			r.Summary.Update++
		case Replace:
			r.Summary.Replace++
		case Delete:
			r.Summary.Delete++
		}
	}
	r.Impact = d.impact(r.Changes, oldNodes)
	r.Live = d.live(r)
	return r
}

// compareNode compares a node of the old plan (already renamed) with the
// node of the same id in the new plan.
func compareNode(o *nodeState, n plan.Node, newInputs []string) (NodeChange, bool) {
	nc := NodeChange{ID: n.ID, Kind: n.Kind, Action: Update}
	if o.oldID != n.ID {
		nc.OldID = o.oldID
	}
	force := func(r Reason, attr string) {
		if nc.Action != Replace {
			nc.Action, nc.Reason, nc.Attribute = Replace, r, attr
		}
	}
	if o.node.Kind != n.Kind {
		nc.Attrs = append(nc.Attrs, Attr{Name: "kind", Old: o.node.Kind, New: n.Kind, Force: true})
		force(ReasonKindChanged, "kind")
	}
	keys := map[string]bool{}
	for k := range o.node.Params {
		keys[k] = true
	}
	for k := range n.Params {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ov, oOK := o.node.Params[k]
		nv, nOK := n.Params[k]
		if oOK && nOK && sameValue(ov, nv) {
			continue
		}
		live := o.node.Kind == n.Kind && paramLive(n.Kind, k, ov, nv) == nil
		a := Attr{Name: k, Live: live, Force: !live}
		if oOK {
			a.Old = ov
		}
		if nOK {
			a.New = nv
		}
		nc.Attrs = append(nc.Attrs, a)
		if !live {
			force(ReasonParamNotLive, k)
		} else if nc.Reason == "" {
			nc.Reason = ReasonParamLive
		}
	}
	if o.node.Format != n.Format {
		nc.Attrs = append(nc.Attrs, Attr{Name: "format", Old: o.node.Format, New: n.Format, Force: true})
		force(ReasonFormatChanged, "format")
	}
	if o.node.Domain != n.Domain {
		nc.Attrs = append(nc.Attrs, Attr{Name: "domain", Old: o.node.Domain, New: n.Domain, Force: true})
		force(ReasonFormatChanged, "domain")
	}
	if o.node.Placement.Thread != n.Placement.Thread {
		nc.Attrs = append(nc.Attrs, Attr{Name: "placement", Old: placementString(o.node.Placement), New: placementString(n.Placement), Force: true})
		force(ReasonThreadChanged, "placement")
	} else if o.node.Placement.Loop != n.Placement.Loop {
		nc.Attrs = append(nc.Attrs, Attr{Name: "placement", Old: placementString(o.node.Placement), New: placementString(n.Placement)})
		if nc.Reason == "" {
			nc.Reason = ReasonLoopChanged
		}
	}
	if og, ng := gpuString(o.node.Placement), gpuString(n.Placement); og != ng {
		nc.Attrs = append(nc.Attrs, Attr{Name: "gpu", Old: og, New: ng, Force: true})
		force(ReasonGPUChanged, "gpu")
	}
	if o.node.Group != n.Group {
		nc.Attrs = append(nc.Attrs, Attr{Name: "group", Old: o.node.Group, New: n.Group})
		if nc.Reason == "" {
			nc.Reason = ReasonGroupChanged
		}
	}
	if ia := inputAttrs(o.inputs, newInputs); len(ia) > 0 {
		nc.Attrs = append(nc.Attrs, ia...)
		if nc.Reason == "" {
			nc.Reason = ReasonInputsChanged
		}
	}
	if nc.OldID != "" && len(nc.Attrs) == 0 {
		nc.Reason = ReasonMoved
		return nc, true
	}
	return nc, len(nc.Attrs) > 0
}

func edgeDesc(e plan.Edge) string {
	s := "capacity " + itoa(e.Capacity)
	if e.Policy != "" {
		s += ", " + e.Policy
	}
	if e.Format != "" {
		s += ", " + string(e.Format)
	}
	return s
}

// inputAttrs lists the input edges added, removed or changed, one
// attribute "input <from node>" each. A running node's inputs never
// change: edges are made when it starts (apply refuses a change of them).
func inputAttrs(old, new []string) []Attr {
	if slices.Equal(old, new) {
		return nil
	}
	split := func(in []string) (map[string]string, []string) {
		m := map[string]string{}
		var order []string
		for _, e := range in {
			from, desc, _ := strings.Cut(e, "\x00")
			if _, dup := m[from]; !dup {
				order = append(order, from)
			}
			m[from] = desc
		}
		return m, order
	}
	om, oorder := split(old)
	nm, norder := split(new)
	froms := append(oorder, norder...)
	sort.Strings(froms)
	var out []Attr
	for i, f := range froms {
		if i > 0 && froms[i-1] == f {
			continue
		}
		ov, oOK := om[f]
		nv, nOK := nm[f]
		if oOK && nOK && ov == nv {
			continue
		}
		a := Attr{Name: "input " + f}
		if oOK {
			a.Old = ov
		}
		if nOK {
			a.New = nv
		}
		out = append(out, a)
	}
	return out
}

// gpuString names the GPU a placement runs on; "" on a show of one GPU.
func gpuString(p plan.Placement) string {
	if i, ok := p.OnGPU(); ok {
		return fmt.Sprintf("gpu %d", i)
	}
	return ""
}

func placementString(p plan.Placement) string {
	if p.Thread {
		return "thread"
	}
	if p.Loop != "" {
		return "loop " + p.Loop
	}
	return "inline"
}

// sameValue compares two param values whatever their Go types (a saved
// plan decodes numbers as float64 and lists as []any).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case []string:
		if y, ok := b.([]string); ok {
			return slices.Equal(x, y)
		}
	}
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// number returns a numeric param value as float64, whatever its Go type.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	}
	return 0, false
}

func layerAttrs(old, new []plan.Layer) []Attr {
	var out []Attr
	n := max(len(old), len(new))
	for i := 0; i < n; i++ {
		name := "layer[" + itoa(i) + "]"
		switch {
		case i >= len(old):
			out = append(out, Attr{Name: name, New: layerString(new[i]), Live: true})
		case i >= len(new):
			out = append(out, Attr{Name: name, Old: layerString(old[i]), Live: true})
		default:
			a, b := old[i], new[i]
			if a.Source != b.Source {
				out = append(out, Attr{Name: name + ".source", Old: a.Source, New: b.Source, Live: true})
			}
			if a.Rect != b.Rect {
				out = append(out, Attr{Name: name + ".rect", Old: a.Rect, New: b.Rect, Live: true})
			}
			if a.Fit != b.Fit {
				out = append(out, Attr{Name: name + ".fit", Old: a.Fit, New: b.Fit, Live: true})
			}
			if !sameValue(a.Crop, b.Crop) {
				out = append(out, Attr{Name: name + ".crop", Old: a.Crop, New: b.Crop, Live: true})
			}
			if a.Opacity != b.Opacity {
				out = append(out, Attr{Name: name + ".opacity", Old: a.Opacity, New: b.Opacity, Live: true})
			}
			if a.Z != b.Z {
				out = append(out, Attr{Name: name + ".z", Old: a.Z, New: b.Z, Live: true})
			}
		}
	}
	return out
}

func layerString(l plan.Layer) string {
	s := fmt.Sprintf("%s at [%d, %d, %d, %d], fit %s, opacity %g, z %d", l.Source, l.Rect[0], l.Rect[1], l.Rect[2], l.Rect[3], l.Fit, l.Opacity, l.Z)
	if l.Crop != nil {
		s += fmt.Sprintf(", crop [%d, %d, %d, %d]", l.Crop[0], l.Crop[1], l.Crop[2], l.Crop[3])
	}
	return s
}

// showAttrs lists the show-level and canvas settings that changed.
func showAttrs(old, new *plan.Plan) []Attr {
	var out []Attr
	add := func(name string, a, b any) {
		if !sameValue(a, b) {
			out = append(out, Attr{Name: name, Old: a, New: b})
		}
	}
	if old.Show != "" || old.Nodes != nil {
		add("show.size", old.Size, new.Size)
		add("show.frame_rate", old.FrameRate, new.FrameRate)
		add("show.format", old.Format, new.Format)
		add("show.profile", old.Profile, new.Profile)
	}
	keys := map[string]bool{}
	for k := range old.Canvas {
		keys[k] = true
	}
	for k := range new.Canvas {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		add("canvas."+k, old.Canvas[k], new.Canvas[k])
	}
	add("tally", tallies(old), tallies(new))
	return out
}

// tallies are a plan's tally destinations in words, one a block:
// "tally.desk tsl5 udp 10.0.0.5:8900 screen 0". The sender starts with the
// show, so a change is a show setting's (Live refuses it: a restart).
func tallies(p *plan.Plan) []string {
	out := []string{}
	for _, t := range p.Tallies {
		out = append(out, fmt.Sprintf("tally.%s %s %s %s:%d screen %d", t.Name, t.Kind, t.Transport, t.Address, t.Port, t.Screen))
	}
	return out
}

// impact works out, over the old plan's edges, which buses take frames from
// a source that is replaced or deleted, or whose own compositor is.
func (d *differ) impact(changes []Change, oldNodes map[string]*nodeState) Impact {
	var im Impact
	disturbed := map[string]string{} // renamed source address -> action
	for _, c := range changes {
		if c.Element != "source" {
			continue
		}
		switch c.Action {
		case Replace:
			im.Restarts = append(im.Restarts, c.Address)
			disturbed[c.Address] = string(Replace) + "d"
		case Delete:
			im.Stops = append(im.Stops, c.Address)
			disturbed[c.Address] = string(Delete) + "d"
		case Create:
			im.Starts = append(im.Starts, c.Address)
		}
	}
	busAction := map[string]Action{}
	for _, c := range changes {
		switch c.Element {
		case "bus":
			busAction[c.Address] = c.Action
		case "output":
			if c.Action == Replace {
				im.OutputsRestart = append(im.OutputsRestart, c.Address)
			}
		}
	}

	// Upstream walk over the old graph (renamed ids).
	up := map[string][]string{}
	for _, e := range d.old.Edges {
		to, _ := d.renamed(e.To)
		from, _ := d.renamed(e.From)
		up[to] = append(up[to], from)
	}
	glitch := map[string]map[string]bool{}
	mark := func(bus, why string) {
		if glitch[bus] == nil {
			glitch[bus] = map[string]bool{}
		}
		glitch[bus][why] = true
	}
	for _, st := range oldNodes {
		n := st.node
		if elementOf(n.Address) != "bus" {
			continue
		}
		if a := busAction[n.Address]; a == Replace || a == Delete {
			if a == Replace {
				mark(n.Address, n.Address+" (its compositor is replaced)")
			}
			continue
		}
		// Walk back from the bus's nodes to the sources feeding it.
		seen := map[string]bool{n.ID: true}
		stack := []string{n.ID}
		for len(stack) > 0 {
			id := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, from := range up[id] {
				if seen[from] {
					continue
				}
				seen[from] = true
				if fs, ok := oldNodes[from]; ok {
					if how, bad := disturbed[fs.node.Address]; bad {
						mark(n.Address, fs.node.Address+" ("+how+")")
						continue
					}
				}
				stack = append(stack, from)
			}
		}
	}
	for bus, why := range glitch {
		g := Glitch{Bus: bus}
		for w := range why {
			g.Because = append(g.Because, w)
		}
		sort.Slice(g.Because, func(i, j int) bool { return addrLess(g.Because[i], g.Because[j]) })
		im.Glitches = append(im.Glitches, g)
	}
	sort.Slice(im.Glitches, func(i, j int) bool { return addrLess(im.Glitches[i].Bus, im.Glitches[j].Bus) })
	return im
}

// addrLess orders addresses by element type in show order (sources,
// scenes, buses, outputs), then by name with numeric keys in number order.
func addrLess(a, b string) bool {
	ea, eb := elemRank(elementOf(a)), elemRank(elementOf(b))
	if ea != eb {
		return ea < eb
	}
	na, ka := splitKey(a)
	nb, kb := splitKey(b)
	if na != nb {
		return na < nb
	}
	ia, aNum := atoi(ka)
	ib, bNum := atoi(kb)
	if aNum && bNum {
		return ia < ib
	}
	return ka < kb
}

func elemRank(e string) int {
	switch e {
	case "show":
		return 0
	case "source":
		return 1
	case "scene":
		return 2
	case "bus":
		return 3
	case "output":
		return 4
	}
	return 5
}

func splitKey(a string) (name, key string) {
	if i := strings.IndexByte(a, '['); i >= 0 {
		j := strings.IndexByte(a[i:], ']')
		if j > 0 {
			return a[:i], a[i+1 : i+j]
		}
	}
	return a, ""
}

func atoi(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func itoa(i int) string { return strconv.Itoa(i) }
