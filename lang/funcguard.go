package lang

import (
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// Functions under the limits.
//
// Every function a show may call, but length and element (which build
// nothing and must stay cheap in counted blocks), runs inside a guard:
//
//   - before the function runs, its arguments are converted as hcl would
//     (refusing a string too long to read as a number; each argument was
//     walked before, see guard.go), and the size of what it would build
//     is estimated from them: the lengths of concat and setproduct,
//     range's count, the bytes of join, format, replace, indent and
//     jsonencode, the elements of split and flatten. A function that
//     would go past a limit is refused before it runs;
//   - after it, its result is checked: a string's bytes, a collection's
//     length, a number's magnitude, and counted as evaluation_work.
//
// The estimates are upper bounds, exact or close for the shows people
// write; they refuse only what would go past a limit or near it.

// guardedFunctions returns the functions of a Load, each under its guard.
func (l *loader) guardedFunctions() map[string]function.Function {
	out := map[string]function.Function{}
	for name, f := range functions() {
		switch name {
		case "length", "element", "try", "can":
			out[name] = f
			continue
		case "tolist":
			f = l.toFunc(f, cty.List(cty.DynamicPseudoType))
		case "toset":
			f = l.toFunc(f, cty.Set(cty.DynamicPseudoType))
		case "tomap":
			f = l.toFunc(f, cty.Map(cty.DynamicPseudoType))
		}
		out[name] = l.guardFunc(name, f, l.estimate(name))
	}
	return out
}

// toFunc is tolist, toset or tomap (f) through convert: in linear time
// when the elements are all of one type, as they are in shows.
func (l *loader) toFunc(f function.Function, ty cty.Type) function.Function {
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      []function.Parameter{passParam("v")},
		Type:        func([]cty.Value) (cty.Type, error) { return cty.DynamicPseudoType, nil },
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if v, ok := fastConvert(args[0], ty); ok {
				return v, nil
			}
			if err := l.convertCost(args[0]); err != nil {
				return cty.NilVal, err
			}
			return f.Call(args)
		},
	})
}

// convert is convert.Convert in linear time for the common case (a tuple
// of strings to a list of strings); otherwise cty's conversion, whose time
// grows with the square of the elements, is counted as evaluation_work
// first.
func (l *loader) convert(v cty.Value, ty cty.Type) (cty.Value, error) {
	if ty == cty.DynamicPseudoType || v.Type().Equals(ty) {
		return v, nil
	}
	if out, ok := fastConvert(v, ty); ok {
		return out, nil
	}
	if ty.IsCollectionType() {
		if err := l.convertCost(v); err != nil {
			return cty.NilVal, err
		}
	}
	return convert.Convert(v, ty)
}

// convertCost counts what cty's conversion of v to a collection may cost:
// it compares the types of a tuple's or object's elements pairwise.
func (l *loader) convertCost(v cty.Value) error {
	if !known(v) {
		return nil
	}
	if ty := v.Type(); ty.IsTupleType() || ty.IsObjectType() {
		n := int64(v.LengthInt())
		return l.spendWork(satMul(n, n) / 16)
	}
	return nil
}

// fastConvert converts a tuple whose elements all have one type to a list
// or set of it, or such an object to a map; ok is false for anything else.
func fastConvert(v cty.Value, ty cty.Type) (cty.Value, bool) {
	if !known(v) || !(ty.IsListType() || ty.IsSetType() || ty.IsMapType()) {
		return cty.NilVal, false
	}
	vt := v.Type()
	if !(vt.IsTupleType() && !ty.IsMapType() || vt.IsObjectType() && ty.IsMapType()) || v.LengthInt() == 0 {
		return cty.NilVal, false
	}
	want := ty.ElementType()
	var et cty.Type
	elems := make([]cty.Value, 0, v.LengthInt())
	attrs := map[string]cty.Value{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if !e.IsKnown() || e.IsNull() {
			return cty.NilVal, false
		}
		t := e.Type()
		if et == cty.NilType {
			et = t
		}
		if !t.Equals(et) || t == cty.DynamicPseudoType || !(want == cty.DynamicPseudoType || t.Equals(want)) {
			return cty.NilVal, false
		}
		if ty.IsMapType() {
			attrs[k.AsString()] = e
		} else {
			elems = append(elems, e)
		}
	}
	switch {
	case ty.IsListType():
		return cty.ListVal(elems), true
	case ty.IsSetType():
		return cty.SetVal(elems), true
	}
	return cty.MapVal(attrs), true
}

// guardFunc wraps f: pre (when not nil) sees the converted arguments before
// f runs and may refuse them.
func (l *loader) guardFunc(name string, f function.Function, pre func([]cty.Value) error) function.Function {
	params := f.Params()
	vp := f.VarParam()
	spec := &function.Spec{Description: f.Description()}
	for _, p := range params {
		spec.Params = append(spec.Params, passParam(p.Name))
	}
	if vp != nil {
		p := passParam(vp.Name)
		spec.VarParam = &p
	}
	paramType := func(i int) cty.Type {
		if i < len(params) {
			return params[i].Type
		}
		if vp != nil {
			return vp.Type
		}
		return cty.DynamicPseudoType
	}
	convertArgs := func(args []cty.Value) ([]cty.Value, error) {
		out := make([]cty.Value, len(args))
		for i, a := range args {
			ty := paramType(i)
			if err := l.numberArg(a, ty); err != nil {
				return nil, err
			}
			v, err := l.convert(a, ty)
			if err != nil {
				if _, ok := err.(*limitError); ok {
					return nil, err
				}
				return nil, function.NewArgError(i, err)
			}
			out[i] = v
		}
		return out, nil
	}
	spec.Type = func(args []cty.Value) (cty.Type, error) {
		if err := l.halted(); err != nil {
			return cty.NilType, err
		}
		conv, err := convertArgs(args)
		if err != nil {
			return cty.NilType, err
		}
		if pre != nil {
			if err := pre(conv); err != nil {
				return cty.NilType, err
			}
		}
		// f's own type comes with its result: computing it here as well
		// would cost as much again (concat's of two long tuples).
		return cty.DynamicPseudoType, nil
	}
	spec.Impl = func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		conv, err := convertArgs(args)
		if err != nil {
			return cty.NilVal, err
		}
		v, err := f.Call(conv)
		if err != nil {
			return v, err
		}
		if err := l.checkResult(v); err != nil {
			return v, err
		}
		if name == "range" {
			// range makes each number in some microseconds: count it so.
			return v, l.spendWork(satMul(lengthOf(v), costRange))
		}
		return v, nil
	}
	return function.New(spec)
}

// numberArg refuses a string too long to be read as a number where the
// parameter wants a number (or a collection of numbers).
func (l *loader) numberArg(a cty.Value, ty cty.Type) error {
	if !a.IsKnown() || a.IsNull() {
		return nil
	}
	switch {
	case ty == cty.Number:
		if a.Type() == cty.String {
			return l.lim.checkNumberText(a.AsString())
		}
	case (ty.IsListType() || ty.IsSetType() || ty.IsMapType()) && ty.ElementType() == cty.Number:
		if !(a.Type().IsCollectionType() || a.Type().IsTupleType() || a.Type().IsObjectType()) {
			return nil
		}
		for it := a.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if err := l.numberArg(e, cty.Number); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkResult checks and counts what a function built: its top level (the
// elements below were checked where they were built).
func (l *loader) checkResult(v cty.Value) error {
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		n := int64(len(v.AsString()))
		if n > l.lim[limitStringBytes] {
			return l.lim.errorf(limitStringBytes, "this function's result is %s bytes", thousands(n))
		}
		return l.spendWork(n)
	case ty == cty.Number:
		return l.lim.checkNumber(v)
	case ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType():
		n := int64(v.LengthInt())
		if n > l.lim[limitValueElements] {
			return l.lim.errorf(limitValueElements, "this function's result has %s elements", thousands(n))
		}
		return l.spendWork(n)
	}
	return nil
}

// known reports whether every value is known and not null.
func known(vs ...cty.Value) bool {
	for _, v := range vs {
		if !v.IsKnown() || v.IsNull() {
			return false
		}
	}
	return true
}

// lengthOf is the number of elements of a collection, 0 otherwise.
func lengthOf(v cty.Value) int64 {
	if !known(v) {
		return 0
	}
	if ty := v.Type(); ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType() {
		return int64(v.LengthInt())
	}
	return 0
}

// sat is a+b, or a×b, saturating at 1<<62 so that estimates cannot wrap.
func satAdd(a, b int64) int64 {
	if a > 1<<62-b {
		return 1 << 62
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a != 0 && b > (1<<62)/a {
		return 1 << 62
	}
	return a * b
}

// tooMany refuses a result of n elements.
func (l *loader) tooMany(name string, n int64) error {
	if n > l.lim[limitValueElements] {
		return l.lim.errorf(limitValueElements, "%s would build %s elements", name, thousands(n))
	}
	return nil
}

// tooLong refuses a string result of n bytes.
func (l *loader) tooLong(name string, n int64) error {
	if n > l.lim[limitStringBytes] {
		return l.lim.errorf(limitStringBytes, "%s would build a string of %s bytes", name, thousands(n))
	}
	return nil
}

// estimate returns the check a function's arguments get before it runs, or
// nil.
func (l *loader) estimate(name string) func([]cty.Value) error {
	switch name {
	case "concat", "merge", "setunion":
		return func(args []cty.Value) error {
			var n int64
			for _, a := range args {
				n = satAdd(n, lengthOf(a))
			}
			return l.tooMany(name, n)
		}
	case "setproduct":
		// as many tuples as the product of the lengths, each of one
		// element per argument
		return func(args []cty.Value) error {
			n := int64(1)
			for _, a := range args {
				if !known(a) {
					return nil
				}
				n = satMul(n, lengthOf(a))
			}
			if len(args) == 0 {
				return nil
			}
			return l.tooMany(name, satMul(n, int64(len(args))+1))
		}
	case "range":
		return func(args []cty.Value) error {
			if !known(args...) || len(args) == 0 || len(args) > 3 {
				return nil
			}
			start, end, step := big.NewFloat(0), args[0].AsBigFloat(), big.NewFloat(1)
			if len(args) >= 2 {
				start, end = args[0].AsBigFloat(), args[1].AsBigFloat()
			}
			if len(args) == 3 {
				step = args[2].AsBigFloat()
			} else if end.Cmp(start) < 0 {
				step = big.NewFloat(-1)
			}
			if step.Sign() == 0 {
				return nil // range says so
			}
			q := new(big.Float).Sub(end, start)
			q.Quo(q, step)
			if q.Sign() <= 0 {
				return nil
			}
			return l.tooMany(name, bigCount(q)+1)
		}
	case "split":
		return func(args []cty.Value) error {
			if !known(args...) {
				return nil
			}
			sep, s := args[0].AsString(), args[1].AsString()
			n := int64(utf8.RuneCountInString(s)) + 1
			if sep != "" {
				n = int64(strings.Count(s, sep)) + 1
			}
			return l.tooMany(name, n)
		}
	case "join":
		return func(args []cty.Value) error {
			if !known(args...) {
				return nil
			}
			sep := int64(len(args[0].AsString()))
			var n, count int64
			for _, list := range args[1:] {
				for it := list.ElementIterator(); it.Next(); {
					_, e := it.Element()
					n = satAdd(n, textLen(e))
					count++
				}
			}
			if count > 1 {
				n = satAdd(n, satMul(count-1, sep))
			}
			return l.tooLong(name, n)
		}
	case "replace":
		return func(args []cty.Value) error {
			if !known(args...) {
				return nil
			}
			s, old, repl := args[0].AsString(), args[1].AsString(), args[2].AsString()
			k := int64(utf8.RuneCountInString(s)) + 1
			if old != "" {
				k = int64(strings.Count(s, old))
			}
			return l.tooLong(name, satAdd(int64(len(s)), satMul(k, int64(len(repl)))))
		}
	case "regex_replace":
		return func(args []cty.Value) error {
			if !known(args...) {
				return nil
			}
			s, repl := int64(len(args[0].AsString())), args[2].AsString()
			// Each of at most len+1 matches writes the replacement, its
			// $references each as long as the whole string at most.
			per := satAdd(int64(len(repl)), satMul(int64(strings.Count(repl, "$")), s))
			return l.tooLong(name, satAdd(s, satMul(s+1, per)))
		}
	case "indent":
		return func(args []cty.Value) error {
			if !known(args...) {
				return nil
			}
			spaces := bigCount(new(big.Float).Abs(args[0].AsBigFloat()))
			s := args[1].AsString()
			return l.tooLong(name, satAdd(int64(len(s)), satMul(int64(strings.Count(s, "\n")), spaces)))
		}
	case "format", "formatlist":
		return func(args []cty.Value) error {
			if len(args) == 0 || !known(args[0]) {
				return nil
			}
			return l.formatEstimate(name, args[0].AsString(), args[1:])
		}
	case "jsonencode":
		return func(args []cty.Value) error {
			n, err := l.textSize(args[0])
			if err != nil {
				return err
			}
			return l.tooLong(name, n)
		}
	case "jsondecode":
		return func(args []cty.Value) error {
			if !known(args...) {
				return nil
			}
			return l.jsonShape(args[0].AsString())
		}
	case "flatten":
		return func(args []cty.Value) error {
			return l.tooMany(name, flatCount(args[0]))
		}
	case "tonumber":
		return func(args []cty.Value) error {
			if known(args...) && args[0].Type() == cty.String {
				return l.lim.checkNumberText(args[0].AsString())
			}
			return nil
		}
	case "parseint":
		return func(args []cty.Value) error {
			// A base-2 number has some 3.3 times the digits of a decimal.
			if known(args...) && args[0].Type() == cty.String && len(args[0].AsString()) > 4*l.lim.numberTextMax() {
				return l.lim.checkNumberText(args[0].AsString())
			}
			return nil
		}
	}
	return nil
}

// flatCount is how many elements flatten makes of v (its nested lists,
// sets and tuples opened). v was walked and bounded before.
func flatCount(v cty.Value) int64 {
	if !known(v) {
		return 0
	}
	ty := v.Type()
	if !(ty.IsListType() || ty.IsSetType() || ty.IsTupleType()) {
		return 1
	}
	var n int64
	forElements(v, func(e cty.Value) { n = satAdd(n, flatCount(e)) })
	return n
}

// formatEstimate bounds the bytes format writes (formatlist: for every
// element) from its verbs' widths and precisions and its arguments' text.
func (l *loader) formatEstimate(name, spec string, args []cty.Value) error {
	fixed := int64(len(spec))
	numeric := false
	for i := 0; i < len(spec); i++ {
		if spec[i] != '%' {
			continue
		}
		i++
		for i < len(spec) && strings.IndexByte("+-# 0[]123456789.*", spec[i]) >= 0 {
			// widths, precisions and argument indexes: count them as
			// written, as numbers (%1000000000d writes a gigabyte)
			j := i
			for j < len(spec) && spec[j] >= '0' && spec[j] <= '9' {
				j++
			}
			if j > i {
				if j-i > 9 {
					return l.tooLong(name, 1<<62)
				}
				var w int64
				for _, c := range spec[i:j] {
					w = w*10 + int64(c-'0')
				}
				fixed = satAdd(fixed, w)
				i = j
				continue
			}
			i++
		}
		if i < len(spec) && strings.IndexByte("dfeEgGbox", spec[i]) >= 0 {
			numeric = true
		}
	}
	n := int64(1)
	if name == "formatlist" {
		for _, a := range args {
			if ty := a.Type(); known(a) && (ty.IsListType() || ty.IsTupleType() || ty.IsSetType()) {
				n = max(n, lengthOf(a))
			}
		}
		if err := l.tooMany(name, n); err != nil {
			return err
		}
	}
	total := satMul(n, fixed)
	for _, a := range args {
		if numeric && known(a) && a.Type() == cty.String {
			if err := l.lim.checkNumberText(a.AsString()); err != nil {
				return err
			}
		}
		t, err := l.textSize(a)
		if err != nil {
			return err
		}
		if name == "formatlist" && !(a.Type().IsListType() || a.Type().IsTupleType() || a.Type().IsSetType()) {
			t = satMul(t, n) // a single value is written for every element
		}
		total = satAdd(total, t)
	}
	return l.tooLong(name, total)
}

// textSize bounds the bytes v takes written out (as JSON, or by format's
// %v): strings with their escapes, numbers with their digits, punctuation.
// The walk is bounded and counted as checkValue's.
func (l *loader) textSize(v cty.Value) (int64, error) {
	if err := l.checkValue(v); err != nil {
		return 0, err
	}
	return textSizeOf(v), nil
}

func textSizeOf(v cty.Value) int64 {
	if !v.IsKnown() {
		return 0
	}
	if v.IsNull() {
		return 4
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		s := v.AsString()
		n := int64(len(s)) + 2
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				n += 5 // \u003c
			}
		}
		return n
	case ty == cty.Number, ty == cty.Bool:
		return textLen(v)
	case ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType():
		n := int64(2)
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			n = satAdd(n, textSizeOf(e)+1)
			if ty.IsObjectType() || ty.IsMapType() {
				n = satAdd(n, textSizeOf(k)+1)
			}
		}
		return n
	}
	return 0
}

// jsonShape refuses JSON text that nests deeper than nesting_depth or
// holds a number too long to read, before jsondecode parses it.
func (l *loader) jsonShape(s string) error {
	depth, run := int64(0), 0
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > l.lim[limitNesting] {
				return l.lim.errorf(limitNesting, "this JSON nests more than %d levels deep", l.lim[limitNesting])
			}
		case c == ']' || c == '}':
			depth--
		}
		if c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
			run++
			if run > l.lim.numberTextMax() {
				return l.lim.errorf(limitNumber, "this JSON holds a number longer than %d characters", l.lim.numberTextMax())
			}
		} else {
			run = 0
		}
	}
	return nil
}
