package lang

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/tsl5"
)

// decodeTally reads one tally block; an address that is not a host alone
// is refused at its line (transport and port the schema checks).
func (l *loader) decodeTally(n *node, ctx *hcl.EvalContext) *Tally {
	t := &Tally{Kind: n.spec.Kind, Name: n.name, DeclRange: n.rng, Attrs: l.attrsFor(n.content, n.spec)}
	d := l.newDec(n.spec, n.content, ctx, n.dir, t.Attrs)
	t.Address = d.str("address")
	t.Port = d.integer("port")
	t.Transport = d.str("transport")
	t.Screen = d.integer("screen")
	if a := n.content.Attributes["address"]; a != nil {
		if err := tsl5.CheckHost(t.Address); err != nil {
			l.errorf(a.Expr.Range(), "Invalid tally address", "%s: %v.", t.Ref(), err)
		}
	}
	return t
}
