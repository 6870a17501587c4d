package compiler

import (
	"slices"
	"strings"
	"testing"

	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

// canvasParams are the canvas keys a kind's lowering copies into a
// node's param, as each param declares them (nodes.Param.Canvas): the
// show language's schema and the node registry must agree on each one's
// type, default and range (or values), or a saved plan without the param
// would run with another value than the show would have given it.
func canvasParams() []struct{ canvas, kind, param string } {
	var out []struct{ canvas, kind, param string }
	for _, k := range nodes.All() {
		for _, p := range k.Params {
			for _, c := range p.Canvas {
				out = append(out, struct{ canvas, kind, param string }{c, k.Name, p.Name})
			}
		}
	}
	return out
}

// elementParams lists element attributes the compiler copies into a
// node's param as they are (block type and kind, attribute; node kind,
// param), held to the same agreement.
var elementParams = []struct{ block, blockKind, attr, kind, param string }{
	{"output", "preview", "interval_ms", "output_preview", "interval_ms"},
	{"output", "preview", "quality", "output_preview", "quality"},
}

func TestCanvasAndRegistryAgree(t *testing.T) {
	block := func(typ, kind string) *lang.Block {
		for _, b := range lang.Schema {
			if b.Type == typ && b.Kind == kind {
				return b
			}
		}
		t.Fatalf("the schema has no %s %q block", typ, kind)
		return nil
	}
	type pair struct{ where, attr, kind, param string }
	var pairs []pair
	for _, c := range canvasParams() {
		pairs = append(pairs, pair{"canvas", c.canvas, c.kind, c.param})
	}
	for _, c := range elementParams {
		pairs = append(pairs, pair{c.block + " " + c.blockKind, c.attr, c.kind, c.param})
	}
	canvas := block("canvas", "")
	for _, c := range pairs {
		b := canvas
		if c.where != "canvas" {
			typ, kind, _ := strings.Cut(c.where, " ")
			b = block(typ, kind)
		}
		a := b.Attr(c.attr)
		k, ok := nodes.Lookup(c.kind)
		if a == nil || !ok {
			t.Fatalf("%s.%s or kind %s is gone: update canvasParams or elementParams", c.where, c.attr, c.kind)
		}
		p, ok := k.Param(c.param)
		if !ok {
			t.Fatalf("%s has no param %s", c.kind, c.param)
		}
		if a.Default != p.Default {
			t.Errorf("%s.%s defaults to %v, %s.%s to %v", c.where, c.attr, a.Default, c.kind, c.param, p.Default)
		}
		if a.Type == lang.TypeEnum && p.Type == nodes.Enum {
			if !slices.Equal(a.Enum, p.Enum) {
				t.Errorf("%s.%s may be %v, %s.%s %v", c.where, c.attr, a.Enum, c.kind, c.param, p.Enum)
			}
			continue
		}
		if a.Type == lang.TypeString && p.Type == nodes.String {
			continue // the defaults, compared above, are all a string has
		}
		if a.Type != lang.TypeInt || p.Type != nodes.Int {
			t.Errorf("%s.%s is %v, %s.%s is %s: both must be whole numbers, both enums or both strings", c.where, c.attr, a.Type, c.kind, c.param, p.Type)
			continue
		}
		if a.Range == nil || p.Min == nil || p.Max == nil || a.Range[0] != int64(*p.Min) || a.Range[1] != int64(*p.Max) {
			t.Errorf("%s.%s and %s.%s declare different ranges", c.where, c.attr, c.kind, c.param)
		}
	}
}

// A plan checks its layers' opacity against plan.OpacityRange: the show
// language's range, declared in its schema.
func TestPlanAndLanguageAgree(t *testing.T) {
	for _, b := range lang.Schema {
		if b.Type != "scene" {
			continue
		}
		for _, nb := range b.Blocks {
			if a := nb.Attr("opacity"); nb.Type == "layer" && a != nil {
				if a.Range == nil || float64(a.Range[0]) != plan.OpacityRange[0] || float64(a.Range[1]) != plan.OpacityRange[1] {
					t.Errorf("a layer's opacity ranges over %v in the language, %v in a plan", a.Range, plan.OpacityRange)
				}
				return
			}
		}
	}
	t.Fatal("the schema has no scene layer with an opacity")
}
