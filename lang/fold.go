package lang

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Folding instance-invariant calls.
//
// A counted block evaluates its expressions once per instance. A function
// call whose arguments do not depend on the instance (no count, each or
// dynamic iterator), such as length(local.all) in
// local.all[count.index % length(local.all)], would be evaluated again for
// every instance, and cty walks a collection argument deeply on every call.
// foldBody evaluates such calls once, in the block's context, and puts the
// value in place of the call. Only sub-expressions are folded, and only
// when they evaluate without errors, so every diagnostic still comes from
// the expression as written.

// foldBody folds the invariant calls in every attribute of body and its
// nested blocks.
//
// memo holds the calls already folded in this Load by their source text:
// an invariant call refers only to variables, locals and whole blocks, whose
// values never change once evaluated, so the same text has the same value
// in every block (length(local.all) in ten scenes is evaluated once).
//
// within reports whether a value is within the limits; a value that is
// not is left to be evaluated (and reported) where it is written. A folded
// value needs no check where it is used (guard's walks skip literals).
func foldBody(body hcl.Body, variant map[string]bool, ctx *hcl.EvalContext, src []byte, memo map[string]cty.Value, within func(cty.Value) bool) {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return
	}
	f := folder{variant: variant, ctx: ctx, src: src, memo: memo, within: within}
	for _, a := range sb.Attributes {
		f.children(a.Expr)
	}
	for _, b := range sb.Blocks {
		foldBody(b.Body, variant, ctx, src, memo, within)
	}
}

type folder struct {
	variant map[string]bool
	ctx     *hcl.EvalContext
	src     []byte // the file's bytes, for the memo key
	memo    map[string]cty.Value
	within  func(cty.Value) bool
}

// fold returns e, or a literal of its value when e is an invariant call.
func (f folder) fold(e hclsyntax.Expression) hclsyntax.Expression {
	if call, ok := e.(*hclsyntax.FunctionCallExpr); ok && invariant(call, f.variant) {
		r := call.Range()
		var key string
		if r.End.Byte <= len(f.src) && r.Start.Byte <= r.End.Byte {
			key = string(f.src[r.Start.Byte:r.End.Byte])
			if v, ok := f.memo[key]; ok {
				return &hclsyntax.LiteralValueExpr{Val: v, SrcRange: r}
			}
		}
		v, diags := call.Value(f.ctx)
		if !diags.HasErrors() && f.within(v) && v.IsWhollyKnown() {
			if key != "" {
				f.memo[key] = v
			}
			return &hclsyntax.LiteralValueExpr{Val: v, SrcRange: r}
		}
		return e
	}
	f.children(e)
	return e
}

func invariant(e hclsyntax.Expression, variant map[string]bool) bool {
	for _, t := range e.Variables() {
		if variant[t.RootName()] {
			return false
		}
	}
	return true
}

func (f folder) children(e hclsyntax.Expression) {
	switch x := e.(type) {
	case *hclsyntax.FunctionCallExpr:
		for i := range x.Args {
			x.Args[i] = f.fold(x.Args[i])
		}
	case *hclsyntax.BinaryOpExpr:
		x.LHS = f.fold(x.LHS)
		x.RHS = f.fold(x.RHS)
	case *hclsyntax.UnaryOpExpr:
		x.Val = f.fold(x.Val)
	case *hclsyntax.ConditionalExpr:
		x.Condition = f.fold(x.Condition)
		x.TrueResult = f.fold(x.TrueResult)
		x.FalseResult = f.fold(x.FalseResult)
	case *hclsyntax.IndexExpr:
		x.Collection = f.fold(x.Collection)
		x.Key = f.fold(x.Key)
	case *hclsyntax.TupleConsExpr:
		for i := range x.Exprs {
			x.Exprs[i] = f.fold(x.Exprs[i])
		}
	case *hclsyntax.ObjectConsExpr:
		for i := range x.Items {
			x.Items[i].ValueExpr = f.fold(x.Items[i].ValueExpr)
		}
	case *hclsyntax.TemplateExpr:
		for i := range x.Parts {
			x.Parts[i] = f.fold(x.Parts[i])
		}
	case *hclsyntax.TemplateWrapExpr:
		x.Wrapped = f.fold(x.Wrapped)
	case *hclsyntax.ParenthesesExpr:
		x.Expression = f.fold(x.Expression)
	case *checked:
		x.ParenthesesExpr.Expression = f.fold(x.inner())
	case *hclsyntax.RelativeTraversalExpr:
		x.Source = f.fold(x.Source)
	}
}
