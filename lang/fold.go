package lang

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
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
func foldBody(body hcl.Body, variant map[string]bool, ctx *hcl.EvalContext) {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return
	}
	for _, a := range sb.Attributes {
		foldChildren(a.Expr, variant, ctx)
	}
	for _, b := range sb.Blocks {
		foldBody(b.Body, variant, ctx)
	}
}

// fold returns e, or a literal of its value when e is an invariant call.
func fold(e hclsyntax.Expression, variant map[string]bool, ctx *hcl.EvalContext) hclsyntax.Expression {
	if call, ok := e.(*hclsyntax.FunctionCallExpr); ok && invariant(call, variant) {
		v, diags := call.Value(ctx)
		if !diags.HasErrors() && v.IsWhollyKnown() {
			return &hclsyntax.LiteralValueExpr{Val: v, SrcRange: call.Range()}
		}
		return e
	}
	foldChildren(e, variant, ctx)
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

func foldChildren(e hclsyntax.Expression, variant map[string]bool, ctx *hcl.EvalContext) {
	switch x := e.(type) {
	case *hclsyntax.FunctionCallExpr:
		for i := range x.Args {
			x.Args[i] = fold(x.Args[i], variant, ctx)
		}
	case *hclsyntax.BinaryOpExpr:
		x.LHS = fold(x.LHS, variant, ctx)
		x.RHS = fold(x.RHS, variant, ctx)
	case *hclsyntax.UnaryOpExpr:
		x.Val = fold(x.Val, variant, ctx)
	case *hclsyntax.ConditionalExpr:
		x.Condition = fold(x.Condition, variant, ctx)
		x.TrueResult = fold(x.TrueResult, variant, ctx)
		x.FalseResult = fold(x.FalseResult, variant, ctx)
	case *hclsyntax.IndexExpr:
		x.Collection = fold(x.Collection, variant, ctx)
		x.Key = fold(x.Key, variant, ctx)
	case *hclsyntax.TupleConsExpr:
		for i := range x.Exprs {
			x.Exprs[i] = fold(x.Exprs[i], variant, ctx)
		}
	case *hclsyntax.ObjectConsExpr:
		for i := range x.Items {
			x.Items[i].ValueExpr = fold(x.Items[i].ValueExpr, variant, ctx)
		}
	case *hclsyntax.TemplateExpr:
		for i := range x.Parts {
			x.Parts[i] = fold(x.Parts[i], variant, ctx)
		}
	case *hclsyntax.TemplateWrapExpr:
		x.Wrapped = fold(x.Wrapped, variant, ctx)
	case *hclsyntax.ParenthesesExpr:
		x.Expression = fold(x.Expression, variant, ctx)
	case *hclsyntax.RelativeTraversalExpr:
		x.Source = fold(x.Source, variant, ctx)
	}
}
