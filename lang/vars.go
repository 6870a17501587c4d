package lang

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// rawVar is a variable value as given, before its type is known.
type rawVar struct {
	text   string         // -var and environment: raw text
	expr   hcl.Expression // var files: an expression
	origin string         // for messages: "-var", "ONAIR_VAR_x", "file.hcl"
	rng    *hcl.Range
}

// readVarValues collects the values given in the environment, var files and
// -var flags, later ones overriding earlier ones.
func (l *loader) readVarValues() {
	raw := map[string]rawVar{}
	for _, kv := range l.opts.Env {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvVarPrefix) {
			continue
		}
		name = strings.TrimPrefix(name, EnvVarPrefix)
		if _, declared := l.byKey["var."+name]; !declared {
			continue // the environment may hold values for other shows
		}
		raw[name] = rawVar{text: val, origin: EnvVarPrefix + name}
	}
	for _, path := range l.opts.VarFiles {
		data, d := readRegular(path) // never blocks on a FIFO
		if d != nil {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read var file", Detail: fmt.Sprintf("%s: %s Check the -var-file path.", path, d.Detail)})
			continue
		}
		l.show.Files[path] = data
		// A .json file is HCL's JSON syntax: one object, a property per
		// variable, as Terraform reads *.tfvars.json. Either way the text
		// is checked against the nesting limit before a parser sees it.
		var body hcl.Body
		if strings.EqualFold(filepath.Ext(path), ".json") {
			if d := CheckText(data, path); d != nil {
				l.diags = append(l.diags, d)
				continue
			}
			file, diags := hcljson.Parse(data, path)
			l.diags = append(l.diags, diags...)
			if file == nil {
				continue
			}
			body = file.Body
		} else {
			b := l.parse(data, path)
			if b == nil {
				continue
			}
			body = b
		}
		list, diags := attrsInOrder(body)
		l.diags = append(l.diags, diags...)
		for _, a := range list {
			if _, declared := l.byKey["var."+a.Name]; !declared {
				l.warnf(a.NameRange, "Value for undeclared variable", "The show declares no variable %q; this value is ignored.%s", a.Name, didYouMean(a.Name, l.names["var"]))
				continue
			}
			r := a.Range
			raw[a.Name] = rawVar{expr: a.Expr, origin: path, rng: &r}
		}
	}
	names := make([]string, 0, len(l.opts.Vars))
	for name := range l.opts.Vars {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, declared := l.byKey["var."+name]; !declared {
			l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Value for undeclared variable",
				Detail: fmt.Sprintf("-var %s=...: the show declares no variable %q.%s", name, name, didYouMean(name, l.names["var"]))})
			continue
		}
		raw[name] = rawVar{text: l.opts.Vars[name], origin: "-var " + name}
	}
	l.varVals = map[string]cty.Value{}
	l.varBad = map[string]bool{}
	l.varOrigin = map[string]string{}
	for name, rv := range raw {
		l.varOrigin[name] = rv.origin
		n := l.nodes[l.byKey["var."+name]]
		ty := l.varType(n)
		v, ok := l.parseRaw(rv, ty)
		if ok {
			l.varVals[name] = v
		} else {
			l.varBad[name] = true // reported; not "no value"
		}
	}
}

// varType reads a variable's type constraint; any when absent or wrong.
func (l *loader) varType(n *node) cty.Type {
	a := n.content.Attributes["type"]
	if a == nil {
		return cty.DynamicPseudoType
	}
	ty, diags := typeexpr.TypeConstraint(a.Expr)
	if diags.HasErrors() {
		return cty.DynamicPseudoType
	}
	return ty
}

// parseRaw turns a given value into a cty value: raw text stays a string
// for primitive types; for other types, or no type, it is parsed as an HCL
// expression when it looks like one.
func (l *loader) parseRaw(rv rawVar, ty cty.Type) (cty.Value, bool) {
	ctx := &hcl.EvalContext{Functions: l.funcs}
	if rv.expr != nil {
		v, diags := rv.expr.Value(ctx)
		l.diags = append(l.diags, diags...)
		return v, !diags.HasErrors()
	}
	if ty.IsPrimitiveType() {
		return cty.StringVal(rv.text), true
	}
	// Nesting is checked before hcl parses the text (hcl's parser would
	// overflow the stack); the diagnostic places it in the value.
	if d := checkNesting([]byte(rv.text), rv.origin, int(l.lim[limitNesting]), l.lim.numberTextMax()); d != nil {
		d.Detail = fmt.Sprintf("The value of %s: %s", rv.origin, d.Detail)
		l.diags = append(l.diags, d)
		return cty.NilVal, false
	}
	expr, diags := hclsyntax.ParseExpression([]byte(rv.text), rv.origin, hcl.InitialPos)
	if !diags.HasErrors() {
		expr, gdiags := l.guardExpr(expr)
		if gdiags.HasErrors() {
			l.diags = append(l.diags, gdiags...)
			return cty.NilVal, false
		}
		v, diags := expr.Value(ctx)
		if !diags.HasErrors() {
			return v, true
		}
		if limitHit(diags) {
			l.diags = append(l.diags, diags...)
			return cty.NilVal, false
		}
	}
	if ty == cty.DynamicPseudoType {
		return cty.StringVal(rv.text), true
	}
	l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid variable value",
		Detail: fmt.Sprintf("%s: %q is not a valid HCL value for a %s; write it as HCL, e.g. [\"a\", \"b\"] or {k = \"v\"}.", rv.origin, rv.text, typeexpr.TypeString(ty))})
	return cty.NilVal, false
}

// evalVariable settles a variable's value: given, else default, converted
// to its type, then checked by its validation rules.
func (l *loader) evalVariable(n *node) {
	n.value = cty.DynamicVal
	ty := cty.DynamicPseudoType
	if a := n.content.Attributes["type"]; a != nil {
		t, diags := typeexpr.TypeConstraint(a.Expr)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			n.failed = true
			return
		}
		ty = t
	}
	secret := l.sensitive(n)
	if l.varBad[n.name] {
		n.failed = true // the value given was refused, and said why
		return
	}
	val, given := l.varVals[n.name]
	var subject hcl.Range = n.rng
	if !given {
		def := n.content.Attributes["default"]
		if def == nil {
			l.errorf(n.rng, "No value for required variable", "var.%s has no default and no value was given. Set it with -var %s=VALUE, in a -var-file, or with %s%s=VALUE.", n.name, n.name, EnvVarPrefix, n.name)
			n.failed = true
			return
		}
		v, diags := def.Expr.Value(&hcl.EvalContext{Functions: l.funcs})
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			n.failed = true
			return
		}
		val = v
		subject = def.Expr.Range()
	}
	if err := l.numberArg(val, ty); err != nil {
		l.limitDiag(err, subject)
		n.failed = true
		return
	}
	cv, err := l.convert(val, ty)
	if _, ok := err.(*limitError); ok {
		l.limitDiag(err, subject)
		n.failed = true
		return
	}
	if err != nil {
		from := "its default"
		if given {
			from = "the value from " + l.varOrigin[n.name]
		}
		shown := showValue(val)
		if secret {
			shown = "(sensitive)"
		}
		l.errorf(subject, "Invalid value for variable", "var.%s must be %s, but %s, %s, is not: %s.", n.name, typeexpr.TypeString(ty), from, shown, err)
		n.failed = true
		return
	}
	if !l.checkedNode(n, cv, subject) {
		n.failed, n.overLimit = true, true
		return
	}
	n.value = cv
	ctx := &hcl.EvalContext{Functions: l.funcs, Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{n.name: cv})}}
	for _, vb := range n.content.Blocks {
		if vb.Type != "validation" {
			continue
		}
		vc, diags := vb.Body.Content(topBlock("variable").Block("validation").bodySchemaRequired())
		l.diags = append(l.diags, diags...)
		cond, msg := vc.Attributes["condition"], vc.Attributes["error_message"]
		if cond == nil || msg == nil {
			continue
		}
		ok, diags := cond.Expr.Value(ctx)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() || !ok.IsKnown() {
			continue
		}
		okb, err := convert.Convert(ok, cty.Bool)
		if err != nil || okb.IsNull() {
			l.errorf(cond.Expr.Range(), "Invalid validation condition", "condition must be true or false; got %s.", showValue(ok))
			continue
		}
		if okb.True() {
			continue
		}
		m, diags := msg.Expr.Value(ctx)
		l.diags = append(l.diags, diags...)
		text := "the value is not valid"
		if !diags.HasErrors() && m.Type() == cty.String && m.IsKnown() && !m.IsNull() {
			text = m.AsString()
		}
		from := ""
		if given {
			from = " (value from " + l.varOrigin[n.name] + ")"
		}
		l.errorf(subject, "Invalid value for variable", "var.%s%s: %s (validation rule at %s).", n.name, from, text, cond.Expr.Range().String())
		n.failed = true
		n.value = cty.DynamicVal
	}
}

// sensitive reports whether a variable is declared sensitive = true; its
// value is then never printed in a diagnostic.
func (l *loader) sensitive(n *node) bool {
	a := n.content.Attributes["sensitive"]
	if a == nil {
		return false
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || v.Type() != cty.Bool || !v.IsKnown() || v.IsNull() {
		if !diags.HasErrors() && !(v.Type() == cty.Bool) {
			l.errorf(a.Expr.Range(), "Incorrect attribute value type", "sensitive must be true or false; got %s.", showValue(v))
		}
		return false
	}
	return v.True()
}
