package lang

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Limit is one bound the language puts on a show, so that no input, however
// hostile, can crash onair, exhaust its memory or keep it busy for long: a
// show that goes past one gets an error at the place it does, naming the
// limit, the value and what to do.
type Limit struct {
	Name    string // as the reference and the diagnostics name it: nesting_depth
	Default int64
	Unit    string // what Default counts: "bytes", "levels", ...
	Summary string // the summary of the diagnostic when a show goes past it, if not the attribute's own
	Doc     string // what it bounds
	Advice  string // what to do when a show goes past it
}

// The limits, indexes into limitTable.
const (
	limitFileBytes = iota
	limitNesting
	limitStringBytes
	limitValueElements
	limitNumber
	limitInstances
	limitShowElements
	limitExpansion
	limitWork
	numLimits
)

// limitTable declares every limit once: the checks read their values from
// it (through the loader) and the language reference documents it.
var limitTable = [numLimits]Limit{
	limitFileBytes: {Name: "file_bytes", Default: 16 << 20, Unit: "bytes", Summary: "File too large",
		Doc:    "The largest show file or -var-file: larger files are refused before they are read.",
		Advice: "A show is a few kilobytes of text; is this the right file?"},
	limitNesting: {Name: "nesting_depth", Default: 256, Unit: "levels", Summary: "Nesting too deep",
		Doc: "How deep brackets, braces, parentheses, template strings, interpolations, %{if}/%{for} directives and chained operators (a ? b : c ? ..., 1 + 1 + ..., a[x][y]...) may nest in a file, a -var or ONAIR_VAR_ value, and in any value. " +
			"It is checked on the text before it is parsed, and on every value a show computes.",
		Advice: "Shows nest a few levels; split the expression into locals."},
	limitStringBytes: {Name: "string_bytes", Default: 1 << 20, Unit: "bytes", Summary: "String too long",
		Doc:    "The longest string a show may write or compute: a literal, a template's result, a function's result.",
		Advice: "Check the template or function that builds it (a string doubled in each local grows past any limit)."},
	limitValueElements: {Name: "value_elements", Default: 250_000, Unit: "elements", Summary: "Value too large",
		Doc:    "The most elements one value may hold, nested elements included and an element held twice counted twice: a local, a variable, a for_each, what a function, a comparison or a conditional is given, what a function returns (concat, setproduct, range, flatten, split, ... are refused before they build it).",
		Advice: "Check the for expression or function that builds it; a show's largest lists hold one element per source."},
	limitNumber: {Name: "number_digits", Default: 300, Unit: "digits", Summary: "Number too large",
		Doc:    "How many digits a number may have before or after the point: with the default, a number must be less than 1e300 and, unless it is zero, at least 1e-300 in magnitude, and a number written in a show, or a string read as a number, at most 2 × 300 + 16 characters long. Writing out a larger number (1e100000000 has a hundred million digits) would take minutes.",
		Advice: "Check the arithmetic, pow or the text that makes it."},
	limitInstances: {Name: "block_instances", Default: 10_000, Unit: "instances", // reported as Invalid count, Invalid for_each
		Doc:    "The most instances one block may make with count or for_each, and the most layers one dynamic block may make in one scene.",
		Advice: "Check the count or for_each expression."},
	limitShowElements: {Name: "show_elements", Default: 100_000, Unit: "elements", Summary: "Show too large",
		Doc:    "The most sources, scenes, buses, outputs and layers a show may expand to, all blocks together.",
		Advice: "Check the block's count, for_each or dynamic for_each."},
	limitExpansion: {Name: "expansion", Default: 500_000, Unit: "steps", Summary: "Show expands too far",
		Doc:    "How much count, for_each, dynamic blocks and for expressions may make the show evaluate, all together: each instance, layer or element counts as many steps as its body has expressions. Three nested for expressions over 1,000 elements each would be a billion; 10,000 instances of a block of 20 expressions are 200,000.",
		Advice: "Check for expressions nested in one another, or inside counted blocks."},
	limitWork: {Name: "evaluation_work", Default: 4_000_000, Unit: "elements and bytes", Summary: "Show too costly to evaluate",
		Doc:    "How much work functions, templates and comparisons may do in a show, all together, counted in the elements and bytes they build or walk (a byte written counts one, an element walked a few): a function given a 1,000-element list in a for expression over 1,000 elements walks a million.",
		Advice: "Check the functions called inside for expressions and counted blocks."},
}

// limitValues are the limits in force, read by each Load. Tests may lower
// them; nothing else changes them.
var limitValues = func() (v [numLimits]int64) {
	for i, l := range limitTable {
		v[i] = l.Default
	}
	return v
}()

// limits are the values one Load works with.
type limits [numLimits]int64

// numberTextMax is the longest text taken as a number: as many digits as
// number_digits allows on each side of the point, and some for a sign and
// an exponent.
func (lim *limits) numberTextMax() int { return int(2*lim[limitNumber] + 16) }

// limitError is what a check returns when a value goes past a limit.
type limitError struct {
	limit int
	what  string // what went past it: "this string would be 2,097,152 bytes"
	value int64  // the limit's value in force
	// quiet marks the errors of every check after the show went past
	// expansion or evaluation_work: evaluation stops at once, and only the
	// first error, where the show went past, is reported.
	quiet bool
}

func (e *limitError) Error() string {
	l := limitTable[e.limit]
	return fmt.Sprintf("%s; the %s limit is %s %s. %s", e.what, l.Name, thousands(e.value), l.Unit, l.Advice)
}

func (lim *limits) errorf(limit int, format string, args ...any) *limitError {
	return &limitError{limit: limit, what: fmt.Sprintf(format, args...), value: lim[limit]}
}

// limitDiagnostic turns a check's error into the diagnostic at r.
func limitDiagnostic(err *limitError, r hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: limitTable[err.limit].Summary, Detail: err.Error(), Subject: rangePtr(r)}
}

// limitFromCall rewrites hcl's "Error in function call" diagnostic into the
// limit's own when the call failed on a limit (a function of the show, or
// one of the checks guard puts in its expressions). It reports false for
// a quiet one, to be dropped.
func limitFromCall(d *hcl.Diagnostic) bool {
	extra, ok := hcl.DiagnosticExtra[hclsyntax.FunctionCallDiagExtra](d)
	if !ok {
		return true
	}
	var le *limitError
	if !errors.As(extra.FunctionCallError(), &le) {
		return true
	}
	d.Summary = limitTable[le.limit].Summary
	d.Detail = le.Error()
	return !le.quiet
}

// limitHit reports whether diags hold an error from a limit.
func limitHit(diags hcl.Diagnostics) bool {
	for _, d := range diags {
		if extra, ok := hcl.DiagnosticExtra[hclsyntax.FunctionCallDiagExtra](d); ok {
			var le *limitError
			if errors.As(extra.FunctionCallError(), &le) {
				return true
			}
		}
	}
	return false
}

// thousands writes n with thousands separators: 1,048,576.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// budget is what a Load has spent of the expansion and evaluation_work
// limits.
type budget struct {
	expansion, work int64
	// stopped is the error of the limit the show went past, once it has:
	// from then on every check fails at once (quietly), so that nothing
	// more is built. stopAt is where evaluation was.
	stopped *limitError
	stopAt  hcl.Range
}

// stop records that the show went past a budget limit, and returns the
// error to report.
func (l *loader) stop(limit int, what string) error {
	err := l.lim.errorf(limit, "%s", what)
	l.spent.stopped = err
	return err
}

// halted returns the quiet error of every check once the show went past a
// budget limit; nil before.
func (l *loader) halted() error {
	if l.spent.stopped == nil {
		return nil
	}
	quiet := *l.spent.stopped
	quiet.quiet = true
	return &quiet
}

// spendExpansion counts n more expansion steps; once past the limit every
// check fails, so a show that goes past it stops expanding at once.
func (l *loader) spendExpansion(n int64) error {
	if err := l.halted(); err != nil {
		return err
	}
	l.spent.expansion += n
	if l.spent.expansion > l.lim[limitExpansion] || l.spent.expansion < 0 {
		return l.stop(limitExpansion, "evaluating this goes past the expansion limit (the show's count, for_each, dynamic blocks and for expressions together)")
	}
	return nil
}

// spendWork counts n more elements or bytes built or walked.
func (l *loader) spendWork(n int64) error {
	if err := l.halted(); err != nil {
		return err
	}
	l.spent.work += n
	if l.spent.work > l.lim[limitWork] || l.spent.work < 0 {
		return l.stop(limitWork, "evaluating this goes past the evaluation_work limit (elements and bytes the show's functions, templates and comparisons build or walk)")
	}
	return nil
}

// stoppedDiagnostic is the error of the budget limit the show went past
// when no diagnostic says so (a can() or try() took it): evaluation
// stopped there, and the show must not pass for valid.
func (l *loader) stoppedDiagnostic(diags hcl.Diagnostics) *hcl.Diagnostic {
	if l.spent.stopped == nil {
		return nil
	}
	want := limitTable[l.spent.stopped.limit].Summary
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Summary == want {
			return nil
		}
	}
	return limitDiagnostic(l.spent.stopped, l.spent.stopAt)
}

// forElements calls f with each element of a collection, tuple or object,
// without making the keys cty's iterator makes (a number or a normalized
// string for each element).
func forElements(v cty.Value, f func(cty.Value)) {
	ty := v.Type()
	switch {
	case ty.IsTupleType() || ty.IsListType():
		for _, e := range v.AsValueSlice() {
			f(e)
		}
	case ty.IsObjectType():
		for name := range ty.AttributeTypes() {
			f(v.GetAttr(name))
		}
	default:
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			f(e)
		}
	}
}

// decimalExponent is about log10 of |f|: the number of digits before the
// point (positive) or zeros after it (negative) when it is written out.
func decimalExponent(f *big.Float) int64 {
	exp := f.MantExp(nil) // f = mant × 2^exp, 0.5 <= |mant| < 1
	return int64(float64(exp) * 0.30102999566398120)
}

// checkNumber refuses an infinite number, or one whose magnitude needs
// more digits than number_digits to write out: at least 10^N, or below
// 10^-N but not zero.
func (lim *limits) checkNumber(v cty.Value) error {
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	// Comparisons against the bounds cost no allocation, which
	// AsBigFloat's copy does: numbers are checked at every operation.
	b := boundsFor(lim[limitNumber])
	if v.LessThan(b.hi).True() && v.GreaterThan(b.negHi).True() {
		if !(v.LessThan(b.lo).True() && v.GreaterThan(b.negLo).True()) {
			return nil
		}
		if !v.LessThan(cty.Zero).True() && !v.GreaterThan(cty.Zero).True() {
			return nil // zero
		}
	}
	f := v.AsBigFloat()
	if f.IsInf() {
		return lim.errorf(limitNumber, "this number is infinite")
	}
	return lim.errorf(limitNumber, "this number is about 1e%d", decimalExponent(f))
}

// numberBounds are ±10^N and ±10^-N as cty numbers, for N digits.
type numberBounds struct {
	digits               int64
	hi, negHi, lo, negLo cty.Value
}

var lastBounds atomic.Pointer[numberBounds]

// boundsFor returns the bounds for n digits, made once (tests change n).
func boundsFor(n int64) *numberBounds {
	if b := lastBounds.Load(); b != nil && b.digits == n {
		return b
	}
	num := func(s string) cty.Value {
		v, err := cty.ParseNumberVal(s)
		if err != nil {
			panic(err)
		}
		return v
	}
	b := &numberBounds{digits: n,
		hi: num(fmt.Sprintf("1e%d", n)), negHi: num(fmt.Sprintf("-1e%d", n)),
		lo: num(fmt.Sprintf("1e-%d", n)), negLo: num(fmt.Sprintf("-1e-%d", n))}
	lastBounds.Store(b)
	return b
}

// checkNumberText refuses a string too long to be taken as a number (cty
// reads a number's digits in time that grows with their square).
func (lim *limits) checkNumberText(s string) error {
	if n := lim.numberTextMax(); len(s) > n {
		return lim.errorf(limitNumber, "a string of %s characters cannot be taken as a number (at most %d)", thousands(int64(len(s))), n)
	}
	return nil
}

// checkValue walks v and refuses it when it goes past value_elements,
// string_bytes, number_digits or nesting_depth. The walk stops at the first
// limit, so it costs at most value_elements steps, each counted as
// evaluation_work.
func (l *loader) checkValue(v cty.Value) error {
	_, err := l.checkSize(v)
	return err
}

// checkSize is checkValue, returning the number of elements walked (1 for
// a primitive).
func (l *loader) checkSize(v cty.Value) (int64, error) {
	if !v.IsKnown() || v.IsNull() {
		return 1, nil
	}
	if err := l.halted(); err != nil {
		return 0, err
	}
	switch v.Type() {
	case cty.String:
		if n := len(v.AsString()); int64(n) > l.lim[limitStringBytes] {
			return 1, l.lim.errorf(limitStringBytes, "a string here is %s bytes", thousands(int64(n)))
		}
		return 1, nil
	case cty.Number:
		return 1, l.lim.checkNumber(v)
	case cty.Bool:
		return 1, nil
	}
	steps, err := l.walkValue(v)
	if werr := l.spendWork(satMul(steps, costWalk)); err == nil {
		err = werr
	}
	return steps, err
}

// What work costs, in evaluation_work units (about 100 ns of CPU each): a
// byte written is one; an element this package walks, two; an element cty
// walks (it walks every argument of every function call), five; a number
// range makes, sixteen.
const (
	costWalk    = 2
	costCtyWalk = 5
	costRange   = 16
)

func (l *loader) walkValue(v cty.Value) (int64, error) {
	type item struct {
		v     cty.Value
		depth int64
	}
	stack := []item{{v, 1}}
	var elements, steps int64
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		steps++
		v := it.v
		if !v.IsKnown() || v.IsNull() {
			continue
		}
		ty := v.Type()
		switch {
		case ty == cty.String:
			if n := len(v.AsString()); int64(n) > l.lim[limitStringBytes] {
				return steps, l.lim.errorf(limitStringBytes, "a string here is %s bytes", thousands(int64(n)))
			}
		case ty == cty.Number:
			if err := l.lim.checkNumber(v); err != nil {
				return steps, err
			}
		case ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType():
			n := int64(v.LengthInt())
			if n == 0 {
				continue
			}
			elements += n
			if elements > l.lim[limitValueElements] {
				return steps, l.lim.errorf(limitValueElements, "this value holds more than %s elements", thousands(l.lim[limitValueElements]))
			}
			if it.depth >= l.lim[limitNesting] {
				return steps, l.lim.errorf(limitNesting, "this value nests more than %d levels deep", l.lim[limitNesting])
			}
			forElements(v, func(ev cty.Value) { stack = append(stack, item{ev, it.depth + 1}) })
		}
	}
	return steps, nil
}
