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
// not only after it, guard rewrites each parsed expression once, wrapping
// the parts that can grow in a check (a *checked, evaluated as the part it
// wraps, then checked):
//
//   - a for expression's or splat's collection: counts length × weight
//     expansion steps, weight being the number of expressions the body
//     evaluates per element, before hcl iterates;
//   - a template: counts the bytes its interpolations write and stops it
//     past string_bytes, the text of a %{for} directive counted at each
//     turn;
//   - the operands of arithmetic and comparisons, which hcl converts to
//     numbers, and what arithmetic makes: refuses a number too large to
//     write out or a string too long to read as one; an index key
//     likewise;
//   - a value that a function, ==, != or a conditional is about to walk
//     whole (cty walks every argument of every function): walks it first,
//     bounded, and counts the walk as evaluation_work, so that a list
//     holding one large value a thousand times is refused instead of walked
//     a thousand times, and a large value walked in a loop is counted. A
//     variable or a local (walked when it was evaluated) counts its size
//     as then, without a second walk.
//
// Literals are checked as they are rewritten. Function calls are checked
// by the functions themselves (funcguard.go).

// checkKind says what a *checked checks.
type checkKind int

const (
	checkEach     checkKind = iota // a collection iterated, n (weight) expressions per element
	checkTemplate                  // a template: counts its parts' bytes (n: its literal text's)
	checkRepeat                    // a %{for} directive's body: counted in its template (n: its text's bytes)
	checkPart                      // a template interpolation
	checkNumber                    // an operand read as a number
	checkKey                       // an index key
	checkDeep                      // a value about to be walked
)

// checked is an expression evaluated as the one it wraps, then checked. It
// holds it in parentheses, so that hcl's walks (Variables) see it; the
// embedded *hclsyntax.ParenthesesExpr also gives it the methods, some
// unexported, that make it an hclsyntax.Expression.
type checked struct {
	*hclsyntax.ParenthesesExpr
	l    *loader
	kind checkKind
	n    int64
}

func (l *loader) wrap(kind checkKind, e hclsyntax.Expression, n int64) *checked {
	return &checked{ParenthesesExpr: &hclsyntax.ParenthesesExpr{Expression: e, SrcRange: e.Range()}, l: l, kind: kind, n: n}
}

// inner is the expression checked.
func (c *checked) inner() hclsyntax.Expression { return c.ParenthesesExpr.Expression }

// templateCount is the bytes the template being evaluated has written.
type templateCount struct{ n int64 }

// Value evaluates the wrapped expression and checks its value. Past a
// limit it returns an unknown value and the limit's error or, once the
// show went past a budget limit (reported where it did), an unknown value
// alone: evaluation stops quietly.
func (c *checked) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	l := c.l
	switch c.kind {
	case checkTemplate:
		prev := l.template
		l.template = &templateCount{n: c.n}
		defer func() { l.template = prev }()
	case checkRepeat:
		if err := l.templateWrites(c.n); err != nil {
			return c.refuse(err, nil)
		}
	}
	v, diags := c.inner().Value(ctx)
	if diags.HasErrors() {
		return v, diags
	}
	if err := c.check(v); err != nil {
		return c.refuse(err, diags)
	}
	return v, diags
}

// refuse is the result of a check that failed: an unknown value, and the
// limit's error unless it is quiet.
func (c *checked) refuse(err error, diags hcl.Diagnostics) (cty.Value, hcl.Diagnostics) {
	if le := err.(*limitError); !le.quiet {
		diags = append(diags, limitDiagnostic(le, c.Range()))
	}
	return cty.DynamicVal, diags
}

// templateWrites counts n more bytes written by the template being
// evaluated.
func (l *loader) templateWrites(n int64) error {
	if t := l.template; t != nil {
		t.n += n
		if t.n > l.lim[limitStringBytes] {
			return l.lim.errorf(limitStringBytes, "this template would write more than %s bytes", thousands(l.lim[limitStringBytes]))
		}
	}
	return l.spendWork(n)
}

func (c *checked) check(v cty.Value) error {
	l := c.l
	if err := l.halted(); err != nil {
		return err
	}
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	switch c.kind {
	case checkEach:
		n := int64(1)
		if ty := v.Type(); ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType() {
			n = int64(v.LengthInt())
		}
		return l.spendExpansion(satMul(n, max(c.n, 1)))
	case checkPart:
		if v.Type() == cty.Number {
			if err := l.lim.checkNumber(v); err != nil {
				return err
			}
		}
		return l.templateWrites(textLen(v))
	case checkNumber:
		switch v.Type() {
		case cty.Number:
			return l.lim.checkNumber(v)
		case cty.String:
			return l.lim.checkNumberText(v.AsString())
		}
	case checkKey:
		return l.lim.checkKey(v)
	case checkDeep:
		if isLiteral(c.inner()) {
			return nil // folded (fold.go), and walked then
		}
		if n := l.namedNode(c.inner()); n != nil {
			return l.spendWork(satMul(n.size, costCtyWalk))
		}
		steps, err := l.checkSize(v)
		if err != nil {
			return err
		}
		return l.spendWork(satMul(steps, costCtyWalk))
	}
	return nil
}

// namedNode is the variable or local e names whole (local.all), or nil.
func (l *loader) namedNode(e hclsyntax.Expression) *node {
	st, ok := e.(*hclsyntax.ScopeTraversalExpr)
	if !ok || len(st.Traversal) != 2 {
		return nil
	}
	root := st.Traversal.RootName()
	a, ok := st.Traversal[1].(hcl.TraverseAttr)
	if !ok || (root != "local" && root != "var") {
		return nil
	}
	if i, ok := l.byKey[root+"."+a.Name]; ok && l.nodes[i].done && !l.nodes[i].failed {
		return l.nodes[i]
	}
	return nil
}

// guard rewrites expressions with the checks; it collects the errors it
// finds in literals.
type guard struct {
	l     *loader
	diags hcl.Diagnostics
}

// guardBody rewrites every expression of a parsed body and records the
// weight (the expressions it holds) of it and of each nested block's body.
// Type constraints, dynamic iterators and moved addresses are read as
// written, not evaluated, and stay as they are.
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
			continue
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
		if !ok || !g.literal(ix.Key, ix.SrcRange) {
			continue
		}
		if err := g.l.lim.checkKey(ix.Key); err != nil {
			g.fail(err, ix.SrcRange)
		}
	}
}

// expr rewrites e and returns it, or its check, with its weight: the
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
			x.Args[i] = g.deep(x.Args[i])
		}
	case *hclsyntax.ConditionalExpr:
		x.Condition, n = g.expr(x.Condition)
		w += n
		x.TrueResult, n = g.expr(x.TrueResult)
		w += n
		x.FalseResult, n = g.expr(x.FalseResult)
		w += n
		// hcl converts both results to one type, walking them.
		x.TrueResult, x.FalseResult = g.deep(x.TrueResult), g.deep(x.FalseResult)
	case *hclsyntax.IndexExpr:
		x.Collection, n = g.expr(x.Collection)
		w += n
		x.Key, n = g.expr(x.Key)
		w += n
		if !numeric(x.Key) {
			x.Key = g.l.wrap(checkKey, x.Key, 0)
		}
	case *hclsyntax.TupleConsExpr:
		for i := range x.Exprs {
			x.Exprs[i], n = g.expr(x.Exprs[i])
			w += n
		}
	case *hclsyntax.ObjectConsExpr:
		for i := range x.Items {
			// A bare name as a key is read as written; other keys are
			// expressions.
			if k, ok := x.Items[i].KeyExpr.(*hclsyntax.ObjectConsKeyExpr); ok {
				if _, name := k.Wrapped.(*hclsyntax.ScopeTraversalExpr); !name {
					k.Wrapped, n = g.expr(k.Wrapped)
					w += n
				}
			} else {
				x.Items[i].KeyExpr, n = g.expr(x.Items[i].KeyExpr)
				w += n
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
		x.CollExpr = g.l.wrap(checkEach, x.CollExpr, body)
	case *hclsyntax.SplatExpr:
		x.Source, n = g.expr(x.Source)
		w += n
		var body int64
		x.Each, body = g.expr(x.Each)
		w += body
		x.Source = g.l.wrap(checkEach, x.Source, body)
	case *hclsyntax.BinaryOpExpr:
		x.LHS, n = g.expr(x.LHS)
		w += n
		x.RHS, n = g.expr(x.RHS)
		w += n
		switch x.Op {
		case hclsyntax.OpEqual, hclsyntax.OpNotEqual:
			x.LHS, x.RHS = g.deep(x.LHS), g.deep(x.RHS)
		case hclsyntax.OpLogicalAnd, hclsyntax.OpLogicalOr:
		default: // arithmetic and ordering read their operands as numbers
			if !numeric(x.LHS) {
				x.LHS = g.l.wrap(checkNumber, x.LHS, 0)
			}
			if !numeric(x.RHS) {
				x.RHS = g.l.wrap(checkNumber, x.RHS, 0)
			}
			switch x.Op {
			case hclsyntax.OpAdd, hclsyntax.OpSubtract, hclsyntax.OpMultiply, hclsyntax.OpDivide, hclsyntax.OpModulo:
				// and what arithmetic makes may be larger than they are
				// (1e300 * 1e300), nested a few levels past anything hcl
				// can write out.
				return g.l.wrap(checkNumber, x, 0), w
			}
		}
	case *hclsyntax.UnaryOpExpr:
		x.Val, n = g.expr(x.Val)
		w += n
		if x.Op == hclsyntax.OpNegate && !numeric(x.Val) {
			x.Val = g.l.wrap(checkNumber, x.Val, 0)
		}
	case *hclsyntax.TemplateExpr:
		literal, n := g.template(x)
		w += n
		if literal >= 0 {
			return g.l.wrap(checkTemplate, x, literal), w
		}
	case *hclsyntax.TemplateJoinExpr:
		// %{for}: its body writes into the template it is in, at each turn.
		x.Tuple, n = g.expr(x.Tuple)
		w += n
		if f, ok := x.Tuple.(*hclsyntax.ForExpr); ok {
			if c, ok := f.ValExpr.(*checked); ok && c.kind == checkTemplate {
				c.kind = checkRepeat
			} else if t, ok := f.ValExpr.(*hclsyntax.TemplateExpr); ok {
				f.ValExpr = g.l.wrap(checkRepeat, t, literalBytes(t))
			}
		}
	case *hclsyntax.TemplateWrapExpr:
		x.Wrapped, n = g.expr(x.Wrapped)
		w += n
	case *hclsyntax.ParenthesesExpr:
		x.Expression, n = g.expr(x.Expression)
		w += n
	}
	return e, w
}

// template rewrites a template's interpolations to count the bytes they
// write, and returns the bytes of its literal text (-1 when it has no
// interpolation to count) and its weight.
func (g *guard) template(x *hclsyntax.TemplateExpr) (int64, int64) {
	var w, n, literal int64
	parts := 0
	for i, p := range x.Parts {
		x.Parts[i], n = g.expr(p)
		w += n
		switch p := x.Parts[i].(type) {
		case *hclsyntax.LiteralValueExpr:
			if p.Val.IsKnown() && p.Val.Type() == cty.String {
				literal += int64(len(p.Val.AsString()))
			}
			continue
		case *hclsyntax.TemplateJoinExpr:
			// counted as it writes
		default:
			x.Parts[i] = g.l.wrap(checkPart, x.Parts[i], 0)
		}
		parts++
	}
	if literal > g.l.lim[limitStringBytes] {
		g.fail(g.l.lim.errorf(limitStringBytes, "this template's text is %s bytes", thousands(literal)), x.SrcRange)
		return -1, w
	}
	if parts == 0 {
		return -1, w
	}
	return literal, w
}

// literalBytes is the length of a template's literal text.
func literalBytes(t *hclsyntax.TemplateExpr) int64 {
	var n int64
	for _, p := range t.Parts {
		if lit, ok := p.(*hclsyntax.LiteralValueExpr); ok && lit.Val.IsKnown() && lit.Val.Type() == cty.String {
			n += int64(len(lit.Val.AsString()))
		}
	}
	return n
}

// deep wraps e in a walk of its value (see checkDeep) unless its value is
// a scalar, or it is checked already.
func (g *guard) deep(e hclsyntax.Expression) hclsyntax.Expression {
	if c, done := e.(*checked); done && c.kind != checkEach || scalar(e) {
		return e
	}
	return g.l.wrap(checkDeep, e, 0)
}

func isLiteral(e hclsyntax.Expression) bool {
	_, ok := e.(*hclsyntax.LiteralValueExpr)
	return ok
}

// numeric reports whether e is sure to be a number or a bool that needs
// no check where it is used: a literal (checked when guarded), count.index,
// checked arithmetic, a comparison, a negation of one of these.
func numeric(e hclsyntax.Expression) bool {
	switch x := e.(type) {
	case *hclsyntax.LiteralValueExpr, *hclsyntax.BinaryOpExpr:
		return true
	case *checked:
		return x.kind == checkNumber
	case *hclsyntax.UnaryOpExpr:
		return x.Op == hclsyntax.OpLogicalNot || numeric(x.Val)
	case *hclsyntax.ParenthesesExpr:
		return numeric(x.Expression)
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

// passParam takes any value, as it comes.
func passParam(name string) function.Parameter {
	return function.Parameter{Name: name, Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true, AllowMarked: true}
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

// bigCount returns f as an int64, capped at 1<<62.
func bigCount(f *big.Float) int64 {
	if f.IsInf() || f.Cmp(big.NewFloat(1<<62)) > 0 {
		return 1 << 62
	}
	i, _ := f.Int64()
	return i
}
