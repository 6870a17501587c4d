package lang

import (
	"math/big"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Guarding expressions: limits checked while hcl evaluates.
//
// hcl evaluates an expression in one call, and inside that call a for
// expression can iterate a billion times or a template join a thousand
// strings of a megabyte each. So that the limits hold during evaluation,
// not only after it, guard rewrites each parsed expression once, putting
// a call to one of the checks below around the parts that can grow:
//
//   - a for expression's or splat's collection: limit:each(coll, weight)
//     counts length × weight expansion steps, weight being the number of
//     expressions its body evaluates per element, before hcl iterates;
//   - a template's interpolations: limit:part adds up the bytes the
//     template writes and stops it past string_bytes (limit:begin starts
//     the count of a template with more than one interpolation);
//     a %{for} directive's strings: limit:join;
//   - the operands of arithmetic and comparisons, which hcl converts to
//     numbers: limit:num refuses a number too large to write out or a
//     string too long to read as one; an index key: limit:key;
//   - the operands of == and != and the results of a conditional, which
//     hcl compares or converts deeply: limit:deep walks them (bounded).
//
// Literals are checked as they are rewritten. The checks return their
// argument unchanged, so a show evaluates as written; their names hold a
// colon, which no show can write, so no show can call them. Function calls
// are checked by the functions themselves (funcs.go).

const (
	fnEach  = "limit:each"
	fnBegin = "limit:begin"
	fnPart  = "limit:part"
	fnJoin  = "limit:join"
	fnNum   = "limit:num"
	fnKey   = "limit:key"
	fnDeep  = "limit:deep"
)

// guard rewrites expressions with the checks; it collects the errors it
// finds in literals.
type guard struct {
	l     *loader
	diags hcl.Diagnostics
}

// guardBody rewrites every expression of a parsed body and records the
// weight (expressions it holds) of it and of each nested block's body.
// skip names attributes left as they are (type constraints and other
// expressions that are read, not evaluated).
func (l *loader) guardBody(body *hclsyntax.Body) hcl.Diagnostics {
	g := &guard{l: l}
	g.body(body, "")
	return g.diags
}

func (g *guard) body(b *hclsyntax.Body, blockType string) int64 {
	var w int64
	for name, a := range b.Attributes {
		if blockType == "variable" && (name == "type" || name == "sensitive") {
			continue
		}
		if blockType == "dynamic" && name == "iterator" {
			continue
		}
		var n int64
		a.Expr, n = g.expr(a.Expr)
		w += n
	}
	for _, blk := range b.Blocks {
		if blk.Type == "moved" {
			continue // from and to are addresses, read as written
		}
		w += g.body(blk.Body, blk.Type)
	}
	g.l.weights[b] = w
	return w
}

// guardExpr rewrites one expression (a -var value).
func (l *loader) guardExpr(e hclsyntax.Expression) (hclsyntax.Expression, hcl.Diagnostics) {
	g := &guard{l: l}
	e, _ = g.expr(e)
	return e, g.diags
}

// call wraps e in a call of the check fn, with extra literal arguments.
func call(fn string, e hclsyntax.Expression, extra ...int64) hclsyntax.Expression {
	r := e.Range()
	args := []hclsyntax.Expression{e}
	for _, x := range extra {
		args = append(args, &hclsyntax.LiteralValueExpr{Val: cty.NumberIntVal(x), SrcRange: r})
	}
	return &hclsyntax.FunctionCallExpr{Name: fn, Args: args, NameRange: r, OpenParenRange: r, CloseParenRange: r}
}

func isLiteral(e hclsyntax.Expression) bool {
	_, ok := e.(*hclsyntax.LiteralValueExpr)
	return ok
}

// numeric reports whether e is sure to be a number or a bool that needs
// no check where it is used: a literal (checked when guarded), count.index,
// or arithmetic, a comparison or a negation (whose operands are checked;
// a number they compute is checked where it ends up).
func numeric(e hclsyntax.Expression) bool {
	switch x := e.(type) {
	case *hclsyntax.LiteralValueExpr:
		return true
	case *hclsyntax.ParenthesesExpr:
		return numeric(x.Expression)
	case *hclsyntax.BinaryOpExpr:
		return true
	case *hclsyntax.UnaryOpExpr:
		return true
	case *hclsyntax.ScopeTraversalExpr:
		t := x.Traversal
		if len(t) == 2 && t.RootName() == "count" {
			if a, ok := t[1].(hcl.TraverseAttr); ok && a.Name == "index" {
				return true
			}
		}
	}
	return false
}

// scalar reports whether e is sure to be a number, a bool or a string: a
// walk of its value is a single step.
func scalar(e hclsyntax.Expression) bool {
	switch x := e.(type) {
	case *hclsyntax.TemplateExpr:
		return true
	case *hclsyntax.ParenthesesExpr:
		return scalar(x.Expression)
	}
	return numeric(e)
}

func (g *guard) fail(err error, r hcl.Range) {
	if le, ok := err.(*limitError); ok {
		g.diags = append(g.diags, limitDiagnostic(le, r))
	}
}

// literal checks a value written in the show.
func (g *guard) literal(v cty.Value, r hcl.Range) bool {
	lim := &g.l.lim
	var err error
	switch {
	case !v.IsKnown() || v.IsNull():
	case v.Type() == cty.Number:
		err = lim.checkNumber(v)
	case v.Type() == cty.String && int64(len(v.AsString())) > lim[limitStringBytes]:
		err = lim.errorf(limitStringBytes, "this string is %s bytes", thousands(int64(len(v.AsString()))))
	}
	if err != nil {
		g.fail(err, r)
		return false
	}
	return true
}

// traversal checks the literal keys of a traversal (a[1e999], a["1111..."]).
func (g *guard) traversal(t hcl.Traversal) {
	for _, step := range t {
		ix, ok := step.(hcl.TraverseIndex)
		if !ok {
			continue
		}
		if !g.literal(ix.Key, ix.SrcRange) {
			continue
		}
		if err := g.l.lim.checkKey(ix.Key); err != nil {
			g.fail(err, ix.SrcRange)
		}
	}
}

// expr rewrites e and returns it (or its replacement) with its weight, the
// number of expressions it evaluates.
func (g *guard) expr(e hclsyntax.Expression) (hclsyntax.Expression, int64) {
	var w, n int64 = 1, 0
	switch x := e.(type) {
	case *hclsyntax.LiteralValueExpr:
		if !g.literal(x.Val, x.SrcRange) {
			x.Val = cty.DynamicVal // reported; do not report it again
		}
	case *hclsyntax.ScopeTraversalExpr:
		g.traversal(x.Traversal)
	case *hclsyntax.RelativeTraversalExpr:
		g.traversal(x.Traversal)
		x.Source, n = g.expr(x.Source)
		w += n
	case *hclsyntax.FunctionCallExpr:
		for i := range x.Args {
			x.Args[i], n = g.expr(x.Args[i])
			w += n
		}
	case *hclsyntax.ConditionalExpr:
		x.Condition, n = g.expr(x.Condition)
		w += n
		x.TrueResult, n = g.expr(x.TrueResult)
		w += n
		x.FalseResult, n = g.expr(x.FalseResult)
		w += n
		x.TrueResult = g.deep(x.TrueResult)
		x.FalseResult = g.deep(x.FalseResult)
	case *hclsyntax.IndexExpr:
		x.Collection, n = g.expr(x.Collection)
		w += n
		x.Key, n = g.expr(x.Key)
		w += n
		if !numeric(x.Key) {
			x.Key = call(fnKey, x.Key)
		}
	case *hclsyntax.TupleConsExpr:
		for i := range x.Exprs {
			x.Exprs[i], n = g.expr(x.Exprs[i])
			w += n
		}
	case *hclsyntax.ObjectConsExpr:
		for i := range x.Items {
			if _, bare := x.Items[i].KeyExpr.(*hclsyntax.ObjectConsKeyExpr); !bare {
				x.Items[i].KeyExpr, n = g.expr(x.Items[i].KeyExpr)
				w += n
			} else if k := x.Items[i].KeyExpr.(*hclsyntax.ObjectConsKeyExpr); k.Wrapped != nil {
				if _, name := k.Wrapped.(*hclsyntax.ScopeTraversalExpr); !name {
					k.Wrapped, n = g.expr(k.Wrapped)
					w += n
				}
			}
			x.Items[i].ValueExpr, n = g.expr(x.Items[i].ValueExpr)
			w += n
		}
	case *hclsyntax.ForExpr:
		var body int64 = 1
		x.CollExpr, n = g.expr(x.CollExpr)
		w += n
		if x.KeyExpr != nil {
			x.KeyExpr, n = g.expr(x.KeyExpr)
			body += n
		}
		x.ValExpr, n = g.expr(x.ValExpr)
		body += n
		if x.CondExpr != nil {
			x.CondExpr, n = g.expr(x.CondExpr)
			body += n
		}
		w += body
		x.CollExpr = call(fnEach, x.CollExpr, body)
	case *hclsyntax.SplatExpr:
		x.Source, n = g.expr(x.Source)
		w += n
		var body int64
		x.Each, body = g.expr(x.Each)
		w += body
		x.Source = call(fnEach, x.Source, body)
	case *hclsyntax.BinaryOpExpr:
		x.LHS, n = g.expr(x.LHS)
		w += n
		x.RHS, n = g.expr(x.RHS)
		w += n
		switch x.Op {
		case hclsyntax.OpEqual, hclsyntax.OpNotEqual:
			x.LHS, x.RHS = g.deep(x.LHS), g.deep(x.RHS)
		case hclsyntax.OpLogicalAnd, hclsyntax.OpLogicalOr:
		default: // arithmetic and ordering convert their operands to numbers
			if !numeric(x.LHS) {
				x.LHS = call(fnNum, x.LHS)
			}
			if !numeric(x.RHS) {
				x.RHS = call(fnNum, x.RHS)
			}
		}
	case *hclsyntax.UnaryOpExpr:
		x.Val, n = g.expr(x.Val)
		w += n
		if x.Op == hclsyntax.OpNegate && !numeric(x.Val) {
			x.Val = call(fnNum, x.Val)
		}
	case *hclsyntax.TemplateExpr:
		w += g.template(x)
	case *hclsyntax.TemplateJoinExpr:
		x.Tuple, n = g.expr(x.Tuple)
		w += n
		x.Tuple = call(fnJoin, x.Tuple)
	case *hclsyntax.TemplateWrapExpr:
		x.Wrapped, n = g.expr(x.Wrapped)
		w += n
	case *hclsyntax.ParenthesesExpr:
		x.Expression, n = g.expr(x.Expression)
		w += n
	}
	return e, w
}

// deep wraps e in limit:deep unless its value is a scalar.
func (g *guard) deep(e hclsyntax.Expression) hclsyntax.Expression {
	if scalar(e) {
		return e
	}
	return call(fnDeep, e)
}

// template rewrites a template's interpolations: each counts the bytes it
// writes, with the literal text, against string_bytes.
func (g *guard) template(x *hclsyntax.TemplateExpr) int64 {
	var w, n, literal int64
	var parts []int
	for i, p := range x.Parts {
		x.Parts[i], n = g.expr(p)
		w += n
		if lit, ok := x.Parts[i].(*hclsyntax.LiteralValueExpr); ok {
			if lit.Val.IsKnown() && lit.Val.Type() == cty.String {
				literal += int64(len(lit.Val.AsString()))
			}
			continue
		}
		parts = append(parts, i)
	}
	if literal > g.l.lim[limitStringBytes] {
		g.fail(g.l.lim.errorf(limitStringBytes, "this template's text is %s bytes", thousands(literal)), x.SrcRange)
		return w
	}
	switch len(parts) {
	case 0:
	case 1:
		// Alone, the interpolation needs no running count: -1 says so,
		// and the literal text is added to it.
		i := parts[0]
		x.Parts[i] = call(fnPart, x.Parts[i], -1, literal)
	default:
		id := int64(len(g.l.tplBytes))
		g.l.tplBytes = append(g.l.tplBytes, 0)
		for _, i := range parts {
			x.Parts[i] = call(fnPart, x.Parts[i], id, 0)
		}
		r := x.SrcRange
		r.End = r.Start
		begin := &hclsyntax.FunctionCallExpr{Name: fnBegin, NameRange: r, OpenParenRange: r, CloseParenRange: r,
			Args: []hclsyntax.Expression{&hclsyntax.LiteralValueExpr{Val: cty.NumberIntVal(id), SrcRange: r}, &hclsyntax.LiteralValueExpr{Val: cty.NumberIntVal(literal), SrcRange: r}}}
		x.Parts = append([]hclsyntax.Expression{begin}, x.Parts...)
	}
	return w
}

// checkKey refuses an index key that would be read as a number (a list
// index) and is too long to be one.
func (lim *limits) checkKey(k cty.Value) error {
	if !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
		return nil
	}
	s := k.AsString()
	if len(s) <= lim.numberTextMax() || strings.Trim(s, "0123456789.eE+- ") != "" {
		return nil
	}
	return lim.checkNumberText(s)
}

// The checks as functions.

// passParam takes any value: the checks see what hcl would.
func passParam(name string) function.Parameter {
	return function.Parameter{Name: name, Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true, AllowMarked: true}
}

// intArg is a literal whole-number argument of a check.
func intArg(v cty.Value) int64 {
	i, _ := v.AsBigFloat().Int64()
	return i
}

// textLen is how many bytes a template interpolation writes for v.
func textLen(v cty.Value) int64 {
	if !v.IsKnown() || v.IsNull() {
		return 0
	}
	switch v.Type() {
	case cty.String:
		return int64(len(v.AsString()))
	case cty.Number:
		e := decimalExponent(v.AsBigFloat())
		if e < 0 {
			e = -e
		}
		return e + 160 // digits of the mantissa, sign, point
	case cty.Bool:
		return 5
	}
	return 0
}

// checkFunctions are the checks guard puts in expressions.
func (l *loader) checkFunctions() map[string]function.Function {
	same := func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil }
	return map[string]function.Function{
		fnEach: function.New(&function.Spec{
			Params: []function.Parameter{passParam("collection"), passParam("weight")},
			Type:   same,
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				c := args[0]
				n := int64(1)
				if !c.IsKnown() || c.IsNull() {
					n = 0
				} else if ty := c.Type(); ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType() {
					n = int64(c.LengthInt())
				}
				w := intArg(args[1])
				if n > 0 && w > 0 && n > (1<<62)/w {
					n, w = 1<<62, 1
				}
				return c, l.spendExpansion(n * w)
			},
		}),
		fnBegin: function.New(&function.Spec{
			Params: []function.Parameter{passParam("id"), passParam("literal")},
			Type:   func([]cty.Value) (cty.Type, error) { return cty.String, nil },
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				l.tplBytes[intArg(args[0])] = intArg(args[1])
				return cty.StringVal(""), nil
			},
		}),
		fnPart: function.New(&function.Spec{
			Params: []function.Parameter{passParam("value"), passParam("id"), passParam("literal")},
			Type:   same,
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				v := args[0]
				if err := l.halted(); err != nil {
					return v, err
				}
				if v.IsKnown() && !v.IsNull() && v.Type() == cty.Number {
					if err := l.lim.checkNumber(v); err != nil {
						return v, err
					}
				}
				n := textLen(v)
				total := intArg(args[2]) + n
				if id := intArg(args[1]); id >= 0 {
					l.tplBytes[id] += n
					total = l.tplBytes[id]
				}
				if total > l.lim[limitStringBytes] {
					return v, l.lim.errorf(limitStringBytes, "this template would write more than %s bytes", thousands(l.lim[limitStringBytes]))
				}
				return v, l.spendWork(n)
			},
		}),
		fnJoin: function.New(&function.Spec{
			Params: []function.Parameter{passParam("strings")},
			Type:   same,
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				t := args[0]
				if err := l.halted(); err != nil {
					return t, err
				}
				if !t.IsKnown() || t.IsNull() || !(t.Type().IsTupleType() || t.Type().IsListType()) {
					return t, nil
				}
				var total int64
				for it := t.ElementIterator(); it.Next(); {
					_, v := it.Element()
					if v.IsKnown() && !v.IsNull() && v.Type() == cty.Number {
						if err := l.lim.checkNumber(v); err != nil {
							return t, err
						}
					}
					total += textLen(v)
					if total > l.lim[limitStringBytes] {
						return t, l.lim.errorf(limitStringBytes, "this %%{for} would write more than %s bytes", thousands(l.lim[limitStringBytes]))
					}
				}
				return t, l.spendWork(total)
			},
		}),
		fnNum: function.New(&function.Spec{
			Params: []function.Parameter{passParam("operand")},
			Type:   same,
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				v := args[0]
				if !v.IsKnown() || v.IsNull() {
					return v, nil
				}
				switch v.Type() {
				case cty.Number:
					return v, l.lim.checkNumber(v)
				case cty.String:
					return v, l.lim.checkNumberText(v.AsString())
				}
				return v, nil
			},
		}),
		fnKey: function.New(&function.Spec{
			Params: []function.Parameter{passParam("key")},
			Type:   same,
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				return args[0], l.lim.checkKey(args[0])
			},
		}),
		fnDeep: function.New(&function.Spec{
			Params: []function.Parameter{passParam("value")},
			Type:   same,
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				return args[0], l.checkValue(args[0])
			},
		}),
	}
}

// bigCount returns f as an int64, capped at 1<<62.
func bigCount(f *big.Float) int64 {
	if f.IsInf() || f.Cmp(big.NewFloat(1<<62)) > 0 {
		return 1 << 62
	}
	i, _ := f.Int64()
	return i
}
