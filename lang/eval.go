package lang

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// spend counts n more expanded elements (instances or layers) of a body
// of the given weight (expressions evaluated per element) and reports
// false, with an error the first time, once the show has more than
// show_elements, or goes past the expansion limit.
func (l *loader) spend(n int, weight int64, r hcl.Range) bool {
	if l.tooBig {
		return false
	}
	if err := l.spendExpansion(int64(n) * max(weight, 1)); err != nil {
		l.limitDiag(err, r)
		return false
	}
	l.elements += int64(n)
	if l.elements <= l.lim[limitShowElements] {
		return true
	}
	if !l.tooBig {
		l.tooBig = true
		l.errorf(r, "Show too large", "The show expands to more than %s sources, scenes, buses, outputs and layers (the %s limit); this block goes past it. Check its count, for_each or dynamic for_each.", thousands(l.lim[limitShowElements]), limitTable[limitShowElements].Name)
	}
	return false
}

// checkedNode is checked for a node's value, recording its size.
func (l *loader) checkedNode(n *node, v cty.Value, r hcl.Range) bool {
	size, err := l.checkSize(v)
	n.size = size
	if err != nil {
		l.limitDiag(err, r)
		return false
	}
	return true
}

// checkedExpr is checked for the value of e, which needs no second check
// when e only names a variable or a local (or part of one): their values
// were checked when they were evaluated.
func (l *loader) checkedExpr(v cty.Value, e hcl.Expression, r hcl.Range) bool {
	if st, ok := e.(*hclsyntax.ScopeTraversalExpr); ok {
		if root := st.Traversal.RootName(); root == "local" || root == "var" {
			return true
		}
	}
	err := l.checkValue(v)
	if err == nil {
		return true
	}
	l.limitDiag(err, r)
	return false
}

// limitDiag reports a check's error at r, unless it is quiet.
func (l *loader) limitDiag(err error, r hcl.Range) {
	if le, ok := err.(*limitError); ok && !le.quiet {
		l.diags = append(l.diags, limitDiagnostic(le, r))
	}
}

// functions are the functions a show may call, as cty defines them;
// a Load calls them through guardedFunctions.
func functions() map[string]function.Function {
	return map[string]function.Function{
		"abs": stdlib.AbsoluteFunc, "ceil": stdlib.CeilFunc, "floor": stdlib.FloorFunc,
		"max": stdlib.MaxFunc, "min": stdlib.MinFunc, "pow": stdlib.PowFunc, "signum": stdlib.SignumFunc,
		"log": stdlib.LogFunc, "parseint": stdlib.ParseIntFunc, "int": stdlib.IntFunc,
		"format": stdlib.FormatFunc, "formatlist": stdlib.FormatListFunc,
		"join": stdlib.JoinFunc, "split": stdlib.SplitFunc, "replace": stdlib.ReplaceFunc,
		"regex": stdlib.RegexFunc, "regexall": stdlib.RegexAllFunc, "regex_replace": stdlib.RegexReplaceFunc,
		"upper": stdlib.UpperFunc, "lower": stdlib.LowerFunc, "title": stdlib.TitleFunc,
		"trimspace": stdlib.TrimSpaceFunc, "trim": stdlib.TrimFunc, "trimprefix": stdlib.TrimPrefixFunc,
		"trimsuffix": stdlib.TrimSuffixFunc, "chomp": stdlib.ChompFunc, "indent": stdlib.IndentFunc,
		"substr": stdlib.SubstrFunc, "strlen": stdlib.StrlenFunc, "strrev": stdlib.ReverseFunc,
		"length": lengthFunc, "concat": stdlib.ConcatFunc, "merge": stdlib.MergeFunc,
		"lookup": stdlib.LookupFunc, "keys": stdlib.KeysFunc, "values": stdlib.ValuesFunc,
		"sort": stdlib.SortFunc, "distinct": stdlib.DistinctFunc, "flatten": stdlib.FlattenFunc,
		"slice": stdlib.SliceFunc, "reverse": stdlib.ReverseListFunc, "element": elementFunc,
		"index": stdlib.IndexFunc, "contains": stdlib.ContainsFunc, "coalesce": stdlib.CoalesceFunc,
		"coalescelist": stdlib.CoalesceListFunc, "compact": stdlib.CompactFunc, "chunklist": stdlib.ChunklistFunc,
		"zipmap": stdlib.ZipmapFunc, "setproduct": stdlib.SetProductFunc, "setunion": stdlib.SetUnionFunc,
		"setintersection": stdlib.SetIntersectionFunc, "setsubtract": stdlib.SetSubtractFunc,
		"range": stdlib.RangeFunc, "jsonencode": stdlib.JSONEncodeFunc, "jsondecode": stdlib.JSONDecodeFunc,
		"toset": stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)), "tolist": stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"tomap": stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)), "tostring": stdlib.MakeToFunc(cty.String),
		"tonumber": stdlib.MakeToFunc(cty.Number), "tobool": stdlib.MakeToFunc(cty.Bool),
		"try": tryfunc.TryFunc, "can": tryfunc.CanFunc,
	}
}

// FunctionNames lists the functions a show may call, sorted.
func FunctionNames() []string {
	var out []string
	for n := range functions() {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ctxFor builds the evaluation context of a node holding only what it
// refers to, so the cost is proportional to its references, not to the
// size of the show.
func (l *loader) ctxFor(n *node) *hcl.EvalContext {
	groups := map[string]map[string]cty.Value{}
	for key := range n.refSet {
		typ, name := splitKey(key)
		g := groups[typ]
		if g == nil {
			g = map[string]cty.Value{}
			groups[typ] = g
		}
		g[name] = l.valueOf(key)
	}
	vars := map[string]cty.Value{}
	for root, names := range n.poison {
		if names[""] {
			vars[root] = cty.DynamicVal
			continue
		}
		g := groups[root]
		if g == nil {
			g = map[string]cty.Value{}
			groups[root] = g
		}
		for name := range names {
			g[name] = cty.DynamicVal
		}
	}
	for typ, g := range groups {
		if vars[typ] == cty.DynamicVal {
			continue
		}
		vars[typ] = cty.ObjectVal(g)
	}
	if !n.hasCnt {
		vars["count"] = cty.DynamicVal
	}
	if !n.hasEach {
		vars["each"] = cty.DynamicVal
	}
	return &hcl.EvalContext{Variables: vars, Functions: l.funcs}
}

func splitKey(key string) (string, string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '.' {
			return key[:i], key[i+1:]
		}
	}
	return key, ""
}

func (l *loader) evalNode(n *node) {
	n.done = true
	if l.spent.stopped == nil {
		l.spent.stopAt = n.rng
	}
	for _, d := range n.deps {
		if l.nodes[d].overLimit {
			n.overLimit, n.failed, n.value = true, true, cty.DynamicVal
			return
		}
	}
	switch n.typ {
	case "var":
		l.evalVariable(n)
	case "local":
		ctx := l.ctxFor(n)
		v, diags := n.expr.Value(ctx)
		l.diags = append(l.diags, diags...)
		switch {
		case diags.HasErrors():
			v = cty.DynamicVal
			n.overLimit = limitHit(diags)
		case !l.checkedNode(n, v, n.expr.Range()):
			v = cty.DynamicVal
			n.overLimit = true
		}
		n.value = v
	case "show":
		l.evalShow(n)
	case "canvas":
		l.evalCanvas(n)
	default:
		l.evalExpanded(n)
	}
}

// bodyWeight is the number of expressions in a block's body: what each of
// its instances evaluates.
func (l *loader) bodyWeight(b *hcl.Block) int64 {
	if b == nil {
		return 1
	}
	if sb, ok := b.Body.(*hclsyntax.Body); ok {
		return l.weights[sb]
	}
	return 1
}

// instance is one expansion of a counted or for_each block.
type instance struct {
	key  Key
	vars map[string]cty.Value // count or each
}

// expand evaluates count or for_each and returns the instances; ok is false
// when they could not be evaluated (the error is already reported).
func (l *loader) expand(n *node, ctx *hcl.EvalContext, count, forEach *hcl.Attribute) ([]instance, bool) {
	if count != nil && forEach != nil {
		l.errorf(forEach.NameRange, "Invalid combination of count and for_each", "A block may set count or for_each, not both.")
		return nil, false
	}
	switch {
	case count != nil:
		v, diags := l.evalMemo(count.Expr, ctx)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			return nil, false
		}
		if !v.IsKnown() {
			return nil, false
		}
		c, ok := wholeNumber(v)
		if !ok || c < 0 {
			l.errorf(count.Expr.Range(), "Invalid count", "count must be a whole number, 0 or more; got %s.", showValue(v))
			return nil, false
		}
		if int64(c) > l.lim[limitInstances] {
			l.errorf(count.Expr.Range(), "Invalid count", "count is %d; at most %s instances of one block are allowed (the %s limit).", c, thousands(l.lim[limitInstances]), limitTable[limitInstances].Name)
			return nil, false
		}
		out := make([]instance, c)
		for i := range out {
			out[i] = instance{key: Key{Kind: IntKey, Int: i}, vars: l.countVars(i)}
		}
		return out, true
	case forEach != nil:
		v, diags := l.evalMemo(forEach.Expr, ctx)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() || !l.checkedExpr(v, forEach.Expr, forEach.Expr.Range()) || !v.IsWhollyKnown() {
			return nil, false
		}
		if v.IsNull() {
			l.errorf(forEach.Expr.Range(), "Invalid for_each", "for_each must be a map or a set of strings, not null.")
			return nil, false
		}
		ty := v.Type()
		var out []instance
		switch {
		case ty.IsMapType() || ty.IsObjectType():
			for it := v.ElementIterator(); it.Next(); {
				k, ev := it.Element()
				out = append(out, instance{key: Key{Kind: StringKey, Str: k.AsString()}, vars: eachVars(k, ev)})
			}
		case ty.IsSetType() && ty.ElementType() == cty.String:
			for it := v.ElementIterator(); it.Next(); {
				_, ev := it.Element()
				if ev.IsNull() {
					l.errorf(forEach.Expr.Range(), "Invalid for_each", "for_each set holds a null.")
					return nil, false
				}
				out = append(out, instance{key: Key{Kind: StringKey, Str: ev.AsString()}, vars: eachVars(ev, ev)})
			}
		case ty.IsTupleType() || ty.IsListType() || ty.IsSetType():
			l.errorf(forEach.Expr.Range(), "Invalid for_each", "for_each takes a map or a set of strings; got a %s. To use a list of strings, write toset(...) ; to use anything else, build a map with a for expression: { for x in LIST : x.name => x }.", ty.FriendlyName())
			return nil, false
		default:
			l.errorf(forEach.Expr.Range(), "Invalid for_each", "for_each takes a map or a set of strings; got %s.", ty.FriendlyName())
			return nil, false
		}
		if int64(len(out)) > l.lim[limitInstances] {
			l.errorf(forEach.Expr.Range(), "Invalid for_each", "for_each has %d elements; at most %s instances of one block are allowed (the %s limit).", len(out), thousands(l.lim[limitInstances]), limitTable[limitInstances].Name)
			return nil, false
		}
		return out, true
	}
	return []instance{{key: Key{Kind: NoKey}}}, true
}

// countVars returns the variables {count = {index = i}}, built once per
// index per Load and shared by every counted block (they are read-only).
func (l *loader) countVars(i int) map[string]cty.Value {
	for len(l.counts) <= i {
		n := len(l.counts)
		l.counts = append(l.counts, map[string]cty.Value{"count": cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(int64(n))})})
	}
	return l.counts[i]
}

// evalMemo evaluates a count or for_each expression. These refer only to
// variables, locals and whole blocks, whose values are fixed once
// evaluated, so the same text has the same value in every block of the
// show (count = length(local.all) on several scenes walks local.all once).
func (l *loader) evalMemo(e hcl.Expression, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	r := e.Range()
	src := l.show.Files[r.Filename]
	if r.Start.Byte > r.End.Byte || r.End.Byte > len(src) {
		return e.Value(ctx)
	}
	key := string(src[r.Start.Byte:r.End.Byte])
	if v, ok := l.foldMemo[key]; ok {
		return v, nil
	}
	v, diags := e.Value(ctx)
	if !diags.HasErrors() && v.IsWhollyKnown() {
		l.foldMemo[key] = v
	}
	return v, diags
}

func eachVars(k, v cty.Value) map[string]cty.Value {
	return map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": k, "value": v})}
}

// instanceCtx is the node's context plus count or each.
func instanceCtx(base *hcl.EvalContext, in instance) *hcl.EvalContext {
	if in.vars == nil {
		return base
	}
	c := base.NewChild()
	c.Variables = in.vars
	return c
}

// refValue is the value a reference to one instance evaluates to: an object
// carrying its address, which the decoder maps back to the instance.
//
// It holds only address and name: cty walks every value passed to a
// function (concat(source.cam, source.vt), length(local.all)) attribute by
// attribute, so each extra attribute costs on every call.
func refValue(addr, kind, name string) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"address": cty.StringVal(addr),
		"name":    cty.StringVal(name),
	})
}

// collect turns per-instance reference values into the block's value: an
// object without count/for_each, a tuple with count, an object with for_each.
func collect(n *node, ins []instance, vals []cty.Value) cty.Value {
	switch {
	case n.hasCnt:
		if len(vals) == 0 {
			return cty.EmptyTupleVal
		}
		return cty.TupleVal(vals)
	case n.hasEach:
		m := make(map[string]cty.Value, len(vals))
		for i, in := range ins {
			m[in.key.Str] = vals[i]
		}
		return cty.ObjectVal(m)
	}
	if len(vals) == 1 {
		return vals[0]
	}
	return cty.DynamicVal
}

func (l *loader) evalExpanded(n *node) {
	ctx := l.ctxFor(n)
	var count, forEach *hcl.Attribute
	if n.content != nil {
		count, forEach = n.content.Attributes["count"], n.content.Attributes["for_each"]
	} else if n.typ == "scene" && n.block != nil {
		// A scene's body holds dynamic blocks, so it is read per instance;
		// count and for_each come from a partial read.
		pc, _, diags := n.block.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "count"}, {Name: "for_each"}}})
		l.diags = append(l.diags, diags...)
		count, forEach = pc.Attributes["count"], pc.Attributes["for_each"]
	}
	ins, ok := l.expand(n, ctx, count, forEach)
	if ok && !l.spend(len(ins), l.bodyWeight(n.block), n.rng) {
		ok = false
	}
	if ok && len(ins) > 1 {
		variant := map[string]bool{"count": true, "each": true}
		for it := range n.iters {
			variant[it] = true
		}
		foldBody(n.block.Body, variant, ctx, l.show.Files[n.rng.Filename], l.foldMemo, func(v cty.Value) bool { return l.checkValue(v) == nil })
	}
	if !ok {
		n.failed = true
		n.value = cty.DynamicVal
		return
	}
	vals := make([]cty.Value, len(ins))
	for i, in := range ins {
		ictx := instanceCtx(ctx, in)
		switch n.typ {
		case "source":
			s := l.decodeSource(n, ictx, in.key)
			n.sources = append(n.sources, s)
			l.srcByAddr[s.Address()] = s
			vals[i] = refValue(s.Address(), s.Kind, s.Name)
		case "scene":
			s := l.decodeScene(n, ictx, in.key)
			n.scenes = append(n.scenes, s)
			l.sceneByAddr[s.Address()] = s
			vals[i] = refValue(s.Address(), "scene", s.Name)
		case "bus":
			b := l.decodeBus(n, ictx, in.key)
			n.buses = append(n.buses, b)
			l.busByAddr[b.Address()] = b
			vals[i] = refValue(b.Address(), b.Kind, b.Name)
		case "output":
			o := l.decodeOutput(n, ictx, in.key)
			n.outputs = append(n.outputs, o)
			vals[i] = cty.EmptyObjectVal // nothing refers to outputs
		case "tally":
			n.tallies = append(n.tallies, l.decodeTally(n, ictx))
			vals[i] = cty.EmptyObjectVal // nothing refers to tallies
		}
	}
	n.value = collect(n, ins, vals)
	if len(n.missing) > 0 {
		r := n.rng
		if a := n.content.Attributes["path"]; a != nil {
			r = a.Expr.Range()
		}
		first := n.missing[0]
		if len(n.missing) == 1 {
			l.warnf(r, "Media file not found", "%s: %s does not exist. The show validates, but running it will fail until the file is there.", first.Address(), first.Path)
		} else {
			l.warnf(r, "Media files not found", "%d of the %d instances of %s name files that do not exist, the first %s (%s). The show validates, but running it will fail until the files are there.", len(n.missing), len(ins), n.key, first.Address(), first.Path)
		}
	}
}

// assemble puts the instances into the Show in declaration order.
func (l *loader) assemble() {
	s := l.show
	for _, n := range l.nodes {
		s.Sources = append(s.Sources, n.sources...)
		s.Scenes = append(s.Scenes, n.scenes...)
		s.Buses = append(s.Buses, n.buses...)
		s.Outputs = append(s.Outputs, n.outputs...)
		s.Tallies = append(s.Tallies, n.tallies...)
	}
	for i, src := range s.Sources {
		src.Index = i
	}
	for _, blk := range l.moved {
		l.decodeMoved(blk)
	}
}

func showValue(v cty.Value) string {
	if !v.IsKnown() {
		return "an unknown value"
	}
	if v.IsNull() {
		return "null"
	}
	switch v.Type() {
	case cty.String:
		return quote(v.AsString())
	case cty.Number:
		return v.AsBigFloat().Text('g', -1)
	case cty.Bool:
		return fmt.Sprint(v.True())
	}
	return "a " + v.Type().FriendlyName()
}

// wholeNumber returns v as an int when it is a whole number.
func wholeNumber(v cty.Value) (int, bool) {
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return 0, false
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		return 0, false
	}
	i, acc := bf.Int64()
	if acc != 0 || i > 1<<40 || i < -(1<<40) {
		return 0, false
	}
	return int(i), true
}
