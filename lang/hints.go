package lang

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// indexHint adds to hcl's "Invalid index" diagnostic what the collection
// holds: how many elements (source.cam has 2, indexes 0 to 1) or which keys,
// with a did-you-mean for a near miss (source.g["lefft"]).
func indexHint(d *hcl.Diagnostic) {
	if d.Summary != "Invalid index" || d.Expression == nil || d.EvalContext == nil || d.Subject == nil {
		return
	}
	var coll, key cty.Value
	var name string
	switch e := d.Expression.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		t := e.Traversal
		for i := len(t) - 1; i > 0; i-- {
			step, ok := t[i].(hcl.TraverseIndex)
			if !ok || step.SourceRange() != *d.Subject {
				continue
			}
			v, diags := t[:i].TraverseAbs(d.EvalContext)
			if diags.HasErrors() {
				return
			}
			coll, key, name = v, step.Key, traversalString(t[:i])
			break
		}
	case *hclsyntax.IndexExpr:
		c, diags := e.Collection.Value(d.EvalContext)
		k, kdiags := e.Key.Value(d.EvalContext)
		if diags.HasErrors() || kdiags.HasErrors() {
			return
		}
		coll, key = c, k
		if st, ok := e.Collection.(*hclsyntax.ScopeTraversalExpr); ok {
			name = traversalString(st.Traversal)
		}
	}
	if coll == cty.NilVal || !coll.IsKnown() || coll.IsNull() {
		return
	}
	if name == "" {
		name = "the collection"
	}
	ty := coll.Type()
	var hint string
	switch {
	case ty.IsTupleType() || ty.IsListType():
		n := coll.LengthInt()
		if n == 0 {
			hint = fmt.Sprintf("%s is empty.", name)
		} else {
			hint = fmt.Sprintf("%s has %d elements, indexes 0 to %d", name, n, n-1)
			if key.IsKnown() && !key.IsNull() && key.Type() == cty.Number {
				hint += "; the index is " + showValue(key)
			}
			hint += "."
		}
	case ty.IsObjectType() || ty.IsMapType():
		var keys []string
		for it := coll.ElementIterator(); it.Next(); {
			k, _ := it.Element()
			keys = append(keys, k.AsString())
		}
		sort.Strings(keys)
		shown := keys
		if len(shown) > 10 {
			shown = append(append([]string(nil), keys[:10]...), "...")
		}
		hint = fmt.Sprintf("%s has the keys %s.", name, strings.Join(shown, ", "))
		if len(keys) == 0 {
			hint = fmt.Sprintf("%s is empty.", name)
		}
		if key.IsKnown() && !key.IsNull() && key.Type() == cty.String {
			hint += didYouMean(key.AsString(), keys)
		}
	default:
		return
	}
	d.Detail = strings.TrimSpace(d.Detail + " " + hint)
}
