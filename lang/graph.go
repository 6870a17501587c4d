package lang

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// node is one element of the reference graph: a variable, a local, the show
// or canvas block, or a whole source, scene, bus or output block (all its
// instances). Nodes are evaluated in dependency order.
type node struct {
	key  string // "var.x", "local.x", "source.cam", "show", "canvas"
	typ  string // var | local | show | canvas | source | scene | bus | output
	name string
	rng  hcl.Range // where it is declared (the block header or local attribute)
	dir  string    // directory of its file, for relative paths

	block   *hcl.Block
	spec    *Block
	content *hcl.BodyContent // attributes and nested blocks (not for scenes)
	expr    hcl.Expression   // a local's expression
	hasCnt  bool             // count set
	hasEach bool             // for_each set

	refs   []hcl.Traversal // every reference its expressions make
	iters  map[string]bool // names of its dynamic-block iterators
	deps   []int
	refSet map[string]bool // referenced addresses, "var.x"
	// poison holds references already reported as wrong: root -> names
	// ("" for the whole root); they evaluate to unknown so hcl does not
	// report them a second time.
	poison map[string]map[string]bool

	value  cty.Value // its value for references (DynamicVal when it failed)
	done   bool
	failed bool
	// overLimit says its value went past a limit: what depends on it is
	// not evaluated (it would only go past the limit again).
	overLimit bool
	size      int64 // elements in its value, as its check walked them (vars and locals)

	// results
	sources []*Source
	scenes  []*Scene
	buses   []*Bus
	outputs []*Output
	tallies []*Tally
	missing []*Source   // instances whose media file does not exist
	items   []sceneItem // a scene's layers and dynamic layers
}

type loader struct {
	opts  Options
	diags hcl.Diagnostics
	show  *Show
	funcs map[string]function.Function

	nodes    []*node
	byKey    map[string]int
	names    map[string][]string // typ -> declared names, for did-you-mean
	showNode int
	canvas   int
	varOrder []int
	moved    []*hcl.Block

	// provided raw variable values
	varVals   map[string]cty.Value
	varOrigin map[string]string // where each given value came from
	varBad    map[string]bool   // given values that were refused

	srcByAddr   map[string]*Source
	sceneByAddr map[string]*Scene
	busByAddr   map[string]*Bus
	statCache   map[string]bool
	counts      []map[string]cty.Value // countVars, by index
	elements    int64                  // expanded so far, for show_elements
	tooBig      bool
	lim         limits                    // the limits in force
	spent       budget                    // of expansion and evaluation_work
	weights     map[*hclsyntax.Body]int64 // expressions in each body (guard)
	template    *templateCount            // the template being evaluated (guard)
	foldMemo    map[string]cty.Value      // folded calls by source text
	nested      map[*hcl.Block]*hcl.BodyContent
	attrs       map[*hcl.BodyContent]Attrs
}

func newLoader(opts Options) *loader {
	l := &loader{
		opts:        opts,
		show:        &Show{},
		lim:         limitValues,
		weights:     map[*hclsyntax.Body]int64{},
		byKey:       map[string]int{},
		names:       map[string][]string{},
		showNode:    -1,
		canvas:      -1,
		srcByAddr:   map[string]*Source{},
		sceneByAddr: map[string]*Scene{},
		busByAddr:   map[string]*Bus{},
		statCache:   map[string]bool{},
		foldMemo:    map[string]cty.Value{},
		nested:      map[*hcl.Block]*hcl.BodyContent{},
		attrs:       map[*hcl.BodyContent]Attrs{},
	}
	l.funcs = l.guardedFunctions()
	return l
}

func (l *loader) addNode(n *node) bool {
	if prev, dup := l.byKey[n.key]; dup {
		p := l.nodes[prev]
		what := n.typ
		if n.typ == "show" || n.typ == "canvas" {
			hint := "Merge the two."
			if n.typ == "show" && n.rng.Filename != p.rng.Filename {
				hint = "A directory is one show merged from its files, and these two files each hold a show of their own: pass one file (onair plan " + n.rng.Filename + "). onair validate and onair lint check such a directory show by show."
			}
			l.errorf(n.rng, fmt.Sprintf("Duplicate %s block", n.typ), "A show has at most one %s block; the first is at %s. %s", n.typ, p.rng.String(), hint)
			return false
		}
		l.errorf(n.rng, fmt.Sprintf("Duplicate %s %q", what, n.name), "%s is already declared at %s. Names of %ss must be unique across the show's files; rename one.", n.key, p.rng.String(), what)
		return false
	}
	n.value = cty.DynamicVal
	l.byKey[n.key] = len(l.nodes)
	l.nodes = append(l.nodes, n)
	if n.name != "" {
		l.names[n.typ] = append(l.names[n.typ], n.name)
	}
	return true
}

// declare records one top-level block.
func (l *loader) declare(blk *hcl.Block, dir string) {
	switch blk.Type {
	case "show", "canvas":
		spec := topBlock(blk.Type)
		content, diags := blk.Body.Content(spec.bodySchemaRequired())
		l.diags = append(l.diags, removedCanvasKeys(diags)...)
		n := &node{key: blk.Type, typ: blk.Type, rng: blk.DefRange, dir: dir, block: blk, spec: spec, content: content}
		if l.addNode(n) {
			if blk.Type == "show" {
				l.showNode = len(l.nodes) - 1
			} else {
				l.canvas = len(l.nodes) - 1
			}
		}
	case "variable":
		spec := topBlock("variable")
		name := blk.Labels[0]
		if !l.validName(name, blk.LabelRanges[0], "variable") {
			return
		}
		content, diags := blk.Body.Content(spec.bodySchemaRequired())
		l.diags = append(l.diags, diags...)
		n := &node{key: "var." + name, typ: "var", name: name, rng: blk.DefRange, dir: dir, block: blk, spec: spec, content: content}
		if l.addNode(n) {
			l.varOrder = append(l.varOrder, len(l.nodes)-1)
		}
	case "locals":
		list, diags := attrsInOrder(blk.Body)
		l.diags = append(l.diags, diags...)
		for _, a := range list {
			if !l.validName(a.Name, a.NameRange, "local") {
				continue
			}
			l.addNode(&node{key: "local." + a.Name, typ: "local", name: a.Name, rng: a.Range, dir: dir, expr: a.Expr})
		}
	case "source", "bus", "output", "tally":
		kind, name := blk.Labels[0], blk.Labels[1]
		spec := lookupKind(blk.Type, kind)
		if spec == nil {
			kinds := kindsOf(blk.Type)
			l.errorf(blk.LabelRanges[0], fmt.Sprintf("Unknown %s kind", blk.Type), "%q is not a %s kind; the kinds are %s.%s", kind, blk.Type, strings.Join(kinds, ", "), didYouMean(kind, kinds))
			return
		}
		if !l.validName(name, blk.LabelRanges[1], blk.Type) {
			return
		}
		content, diags := blk.Body.Content(spec.bodySchemaRequired())
		l.diags = append(l.diags, diags...)
		l.addNode(&node{key: blk.Type + "." + name, typ: blk.Type, name: name, rng: blk.DefRange, dir: dir, block: blk, spec: spec, content: content,
			hasCnt: content.Attributes["count"] != nil, hasEach: content.Attributes["for_each"] != nil})
	case "scene":
		name := blk.Labels[0]
		if !l.validName(name, blk.LabelRanges[0], "scene") {
			return
		}
		n := &node{key: "scene." + name, typ: "scene", name: name, rng: blk.DefRange, dir: dir, block: blk, spec: topBlock("scene")}
		if sb, ok := blk.Body.(*hclsyntax.Body); ok {
			n.hasCnt = sb.Attributes["count"] != nil
			n.hasEach = sb.Attributes["for_each"] != nil
		}
		if l.addNode(n) {
			l.readScene(n)
		}
	case "moved":
		l.moved = append(l.moved, blk)
	}
}

// validName checks a label is an identifier usable in references.
func (l *loader) validName(name string, r hcl.Range, what string) bool {
	if hclsyntax.ValidIdentifier(name) {
		return true
	}
	l.errorf(r, fmt.Sprintf("Invalid %s name", what), "%q cannot be used in references; a name starts with a letter or underscore and holds only letters, digits, underscores and dashes.", name)
	return false
}

// bodySchemaRequired is bodySchema with required attributes marked, so hcl
// reports missing ones at the block.
func (b *Block) bodySchemaRequired() *hcl.BodySchema {
	if b.schema != nil {
		return b.schema
	}
	return b.buildSchema()
}

func (b *Block) buildSchema() *hcl.BodySchema {
	s := b.bodySchema()
	for i := range s.Attributes {
		if a := b.Attr(s.Attributes[i].Name); a != nil && a.Required {
			s.Attributes[i].Required = true
		}
	}
	return s
}

// traversals collects every reference made by a body's expressions, and the
// names of the dynamic-block iterators declared in it.
func traversals(body hcl.Body, out []hcl.Traversal, iters map[string]bool) []hcl.Traversal {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return out
	}
	for _, a := range sb.Attributes {
		out = append(out, a.Expr.Variables()...)
	}
	for _, b := range sb.Blocks {
		if b.Type == "dynamic" && len(b.Labels) > 0 {
			it := b.Labels[0]
			if a := b.Body.Attributes["iterator"]; a != nil {
				if t, d := hcl.AbsTraversalForExpr(a.Expr); !d.HasErrors() && len(t) == 1 {
					it = t.RootName()
				}
			}
			iters[it] = true
		}
		out = traversals(b.Body, out, iters)
	}
	return out
}

// referenceable lists the roots a reference may start with, for did-you-mean.
var referenceRoots = []string{"var", "local", "source", "scene", "bus", "count", "each"}

// buildGraph finds every node's references, reports the bad ones and links
// the dependencies.
func (l *loader) buildGraph() {
	for _, n := range l.nodes {
		iters := map[string]bool{}
		switch {
		case n.expr != nil:
			n.refs = n.expr.Variables()
		case n.typ == "var":
			// a variable's default may not reference anything; its
			// validation may reference only itself.
			n.refs = nil
			for _, vb := range n.content.Blocks {
				if a, ok := vb.Body.(*hclsyntax.Body); ok {
					for _, at := range a.Attributes {
						for _, t := range at.Expr.Variables() {
							if t.RootName() != "var" || len(t) < 2 || attrName(t[1]) != n.name {
								l.errorf(t.SourceRange(), "Invalid reference in variable validation", "A validation rule may refer only to var.%s.", n.name)
							}
						}
					}
				}
			}
			if d := n.content.Attributes["default"]; d != nil {
				for _, t := range d.Expr.Variables() {
					l.errorf(t.SourceRange(), "Variables not allowed", "A variable's default must be a literal value; it cannot refer to %s.", traversalString(t))
				}
			}
			continue
		case n.block != nil:
			n.refs = traversals(n.block.Body, nil, iters)
			n.iters = iters
		}
		n.refSet = map[string]bool{}
		depSet := map[int]bool{}
		for _, t := range n.refs {
			l.checkRef(n, t, iters, depSet)
		}
		if n.typ == "source" || n.typ == "scene" {
			if l.showNode >= 0 {
				depSet[l.showNode] = true
			}
		}
		for d := range depSet {
			n.deps = append(n.deps, d)
		}
		sortInts(n.deps)
	}
}

func attrName(t hcl.Traverser) string {
	switch s := t.(type) {
	case hcl.TraverseAttr:
		return s.Name
	}
	return ""
}

// checkRef checks one reference and records the dependency it makes.
func (l *loader) checkRef(n *node, t hcl.Traversal, iters map[string]bool, deps map[int]bool) {
	root := t.RootName()
	r := t.SourceRange()
	switch root {
	case "var", "local", "source", "scene", "bus":
		typ := root
		if len(t) < 2 {
			n.poisonRef(root, "")
			l.errorf(r, "Invalid reference", "A reference to %s must name one, e.g. %s.NAME.", root, root)
			return
		}
		name := attrName(t[1])
		if name == "" {
			n.poisonRef(root, "")
			l.errorf(r, "Invalid reference", "A reference to %s must name one with a dot: %s.NAME.", root, root)
			return
		}
		key := typ + "." + name
		idx, ok := l.byKey[key]
		if !ok {
			n.poisonRef(root, name)
			l.errorf(hcl.RangeBetween(t[0].SourceRange(), t[1].SourceRange()), "Unknown reference", "There is no %s named %q.%s", kindWord(typ), name, didYouMean(name, l.names[typ]))
			return
		}
		if n.typ == "show" || n.typ == "canvas" {
			if typ != "var" && typ != "local" {
				n.poisonRef(root, name)
				l.errorf(r, "Invalid reference", "The %s block may refer only to variables and locals.", n.typ)
				return
			}
		}
		n.refSet[key] = true
		deps[idx] = true
	case "count":
		if !n.hasCnt {
			l.errorf(r, `Reference to "count" in non-counted context`, "count.index is available only in a block that sets count.")
			return
		}
		if len(t) < 2 || attrName(t[1]) != "index" {
			l.errorf(r, "Invalid count attribute", "count has one attribute, index.")
		}
	case "each":
		if !n.hasEach {
			l.errorf(r, `Reference to "each" in context without for_each`, "each.key and each.value are available only in a block that sets for_each.")
			return
		}
		if len(t) < 2 || (attrName(t[1]) != "key" && attrName(t[1]) != "value") {
			l.errorf(r, "Invalid each attribute", "each has two attributes, key and value.")
		}
	default:
		if iters[root] {
			return
		}
		n.poisonRef(root, "")
		opts := append([]string(nil), referenceRoots...)
		for it := range iters {
			opts = append(opts, it)
		}
		l.errorf(t[0].SourceRange(), "Unknown reference", "There is nothing named %q here; references start with var., local., source., scene. or bus.%s", root, didYouMean(root, opts))
	}
}

func (n *node) poisonRef(root, name string) {
	if n.poison == nil {
		n.poison = map[string]map[string]bool{}
	}
	if n.poison[root] == nil {
		n.poison[root] = map[string]bool{}
	}
	n.poison[root][name] = true
}

func kindWord(typ string) string {
	switch typ {
	case "var":
		return "variable"
	}
	return typ
}

// traversalString renders a traversal as written: source.cam[3].
func traversalString(t hcl.Traversal) string {
	var sb strings.Builder
	for _, s := range t {
		switch s := s.(type) {
		case hcl.TraverseRoot:
			sb.WriteString(s.Name)
		case hcl.TraverseAttr:
			sb.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			switch {
			case s.Key.Type() == cty.String:
				sb.WriteString("[" + quote(s.Key.AsString()) + "]")
			case s.Key.Type() == cty.Number:
				sb.WriteString("[" + s.Key.AsBigFloat().Text('f', -1) + "]")
			default:
				sb.WriteString("[?]")
			}
		case hcl.TraverseSplat:
			sb.WriteString("[*]")
		}
	}
	return sb.String()
}

// evaluate runs every node in dependency order. Strongly connected
// components (Tarjan) come out dependencies first; a component of more than
// one node, or a node that refers to itself, is a reference cycle.
func (l *loader) evaluate() {
	for _, comp := range l.components() {
		if len(comp) == 1 && !l.selfLoop(comp[0]) {
			l.evalNode(l.nodes[comp[0]])
			continue
		}
		l.reportCycle(comp)
		for _, i := range comp {
			l.nodes[i].failed = true
			l.nodes[i].done = true
			l.nodes[i].value = cty.DynamicVal
		}
	}
}

func (l *loader) selfLoop(i int) bool {
	for _, d := range l.nodes[i].deps {
		if d == i {
			return true
		}
	}
	return false
}

// components is Tarjan's algorithm, iterative so deep chains cannot blow
// the stack.
func (l *loader) components() [][]int {
	n := len(l.nodes)
	index := make([]int, n)
	low := make([]int, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var out [][]int
	next := 0
	type frame struct{ v, e int }
	for root := 0; root < n; root++ {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		on[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.e < len(l.nodes[v].deps) {
				w := l.nodes[v].deps[f.e]
				f.e++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					on[w] = true
					call = append(call, frame{w, 0})
				} else if on[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] == index[v] {
				var comp []int
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				sortInts(comp)
				out = append(out, comp)
			}
		}
	}
	return out
}

// reportCycle names every element of a cycle, in the order the references
// run, starting from the first declared.
func (l *loader) reportCycle(comp []int) {
	in := map[int]bool{}
	for _, i := range comp {
		in[i] = true
	}
	// The shortest path from the first declared node back to itself
	// through dependencies inside the component (breadth first).
	start := comp[0]
	prev := map[int]int{}
	queue := []int{start}
	last := -1
	for len(queue) > 0 && last < 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, d := range l.nodes[cur].deps {
			if !in[d] {
				continue
			}
			if d == start {
				last = cur
				break
			}
			if _, seen := prev[d]; !seen {
				prev[d] = cur
				queue = append(queue, d)
			}
		}
	}
	path := []int{}
	for cur := last; cur != start && cur >= 0; cur = prev[cur] {
		path = append([]int{cur}, path...)
	}
	path = append([]int{start}, path...)
	seen := map[int]bool{}
	for _, i := range path {
		seen[i] = true
	}
	names := make([]string, 0, len(path)+1)
	for _, i := range path {
		names = append(names, l.nodes[i].key)
	}
	names = append(names, l.nodes[start].key)
	detail := "These refer to each other in a loop: " + strings.Join(names, " → ") + "."
	var rest []string
	for _, i := range comp {
		if !seen[i] {
			rest = append(rest, l.nodes[i].key)
		}
	}
	if len(rest) > 0 {
		detail += " Also in the cycle: " + strings.Join(rest, ", ") + "."
	}
	detail += " Break the loop by removing one of the references."
	l.errorf(l.nodes[start].rng, "Reference cycle", "%s", detail)
}
