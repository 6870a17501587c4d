package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Every limit is declared whole: a name as the reference prints it, a
// default, a unit, what it bounds and what to do.
func TestLimitTable(t *testing.T) {
	seen := map[string]bool{}
	for i, l := range limitTable {
		if !regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`).MatchString(l.Name) || seen[l.Name] {
			t.Errorf("limit %d: name %q", i, l.Name)
		}
		seen[l.Name] = true
		if l.Default <= 0 || l.Unit == "" || l.Doc == "" || l.Advice == "" {
			t.Errorf("%s: incomplete: %+v", l.Name, l)
		}
		if l.Summary == "" && i != limitInstances {
			t.Errorf("%s: no summary", l.Name)
		}
		if limitValues[i] != l.Default {
			t.Errorf("%s: in force %d, default %d", l.Name, limitValues[i], l.Default)
		}
	}
}

// withLimits sets limits for one test.
func withLimits(t *testing.T, set map[int]int64) {
	saved := limitValues
	for i, v := range set {
		limitValues[i] = v
	}
	t.Cleanup(func() { limitValues = saved })
}

// loadBody loads a show of hostileHeader and body; it returns the errors
// as "LINE:COL Summary" and their details.
func loadBody(t *testing.T, body string, opts Options) ([]string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "show.hcl")
	if err := os.WriteFile(path, []byte(hostileHeader+body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags := Load([]string{path}, opts)
	var details []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			details = append(details, d.Detail)
		}
	}
	return diagLines(diags, hcl.DiagError), strings.Join(details, "\n")
}

// Each limit lets a show reach it and refuses the show that goes one past
// it, at the place it does, naming the limit (lowered here so the shows are
// small; the hostile-input suite runs the real values).
func TestLimitsAreExact(t *testing.T) {
	cases := []struct {
		name   string
		limit  int
		value  int64
		at     string // a body at the limit
		past   string // the body one past it
		want   string // its error
		detail string
	}{
		{"nesting", limitNesting, 4,
			"locals {\n  x = [[[1]]]\n}\n", "locals {\n  x = [[[[1]]]]\n}\n", "7:10 Nesting too deep", "nest more than 4 deep here (the nesting_depth limit)"},
		{"string from a template", limitStringBytes, 10,
			"locals {\n  a = \"xxxxx\"\n  b = \"${local.a}${local.a}\"\n}\n", "locals {\n  a = \"xxxxx\"\n  b = \"${local.a}${local.a}!\"\n}\n",
			"8:20 String too long", "the string_bytes limit is 10 bytes"},
		{"string literal", limitStringBytes, 10,
			"locals {\n  a = \"xxxxxxxxxx\"\n}\n", "locals {\n  a = \"xxxxxxxxxxx\"\n}\n", "7:8 String too long", "this string is 11 bytes"},
		{"string from a function", limitStringBytes, 10,
			"locals {\n  a = join(\"-\", [\"xxxx\", \"xxxxx\"])\n}\n", "locals {\n  a = join(\"-\", [\"xxxxx\", \"xxxxx\"])\n}\n",
			"7:7 String too long", "join would build a string of 11 bytes"},
		{"concat", limitValueElements, 10,
			"locals {\n  a = concat([1, 2, 3, 4, 5], [1, 2, 3, 4, 5])\n}\n", "locals {\n  a = concat([1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6])\n}\n",
			"7:7 Value too large", "concat would build 11 elements"},
		// 12 pairs of two: 36 elements
		{"setproduct", limitValueElements, 36,
			"locals {\n  a = setproduct([1, 2, 3], [1, 2, 3, 4])\n}\n", "locals {\n  a = setproduct([1, 2, 3], [1, 2, 3, 4, 5])\n}\n",
			"7:7 Value too large", "setproduct would build 45 elements"},
		{"a local", limitValueElements, 6,
			"locals {\n  a = [[1, 2], [3, 4]]\n}\n", "locals {\n  a = [[1, 2], [3, 4, 5]]\n}\n",
			"7:7 Value too large", "more than 6 elements"},
		{"number", limitNumber, 300,
			"locals {\n  a = 9e299\n}\n", "locals {\n  a = 1e301\n}\n", "7:7 Number too large", "about 1e301"},
		{"arithmetic", limitNumber, 300,
			"locals {\n  a = 1e150 * 1e149\n}\n", "locals {\n  a = 1e150 * 1e151\n}\n", "7:7 Number too large", "the number_digits limit is 300 digits"},
		{"for expression", limitExpansion, 100,
			"locals {\n  a = [for i in range(50) : i]\n}\n", "locals {\n  a = [for i in range(51) : i]\n}\n",
			"7:17 Show expands too far", "the expansion limit is 100 steps"},
		// three expressions in the body: 50, the template "bars" and its text
		{"count", limitExpansion, 99,
			"source \"test_pattern\" \"s\" {\n  count   = 33\n  pattern = \"bars\"\n}\n", "source \"test_pattern\" \"s\" {\n  count   = 34\n  pattern = \"bars\"\n}\n",
			"6:1 Show expands too far", "the expansion limit is 99 steps"},
		{"work", limitWork, 20,
			"locals {\n  a = upper(\"xxxxxxxxxxxxxxxxxxxx\")\n}\n", "locals {\n  a = upper(\"xxxxxxxxxxxxxxxxxxxxx\")\n}\n",
			"7:7 Show too costly to evaluate", "the evaluation_work limit is 20 elements and bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withLimits(t, map[int]int64{c.limit: c.value})
			if got, detail := loadBody(t, c.at, Options{}); len(got) != 0 {
				t.Errorf("at the limit: %v %s", got, detail)
			}
			got, detail := loadBody(t, c.past, Options{})
			if strings.Join(got, "\n") != c.want {
				t.Errorf("past the limit: %q, want %q (%s)", got, c.want, detail)
			}
			if !strings.Contains(detail, c.detail) {
				t.Errorf("detail %q lacks %q", detail, c.detail)
			}
		})
	}
}

// The file size is checked before the file is read.
func TestLimitFileBytes(t *testing.T) {
	withLimits(t, map[int]int64{limitFileBytes: int64(len(hostileHeader))})
	path := filepath.Join(t.TempDir(), "show.hcl")
	os.WriteFile(path, []byte(hostileHeader), 0o644)
	if _, diags := Load([]string{path}, Options{}); diags.HasErrors() {
		t.Fatalf("at the limit: %v", diags)
	}
	os.WriteFile(path, []byte(hostileHeader+"\n"), 0o644)
	_, diags := Load([]string{path}, Options{})
	past := fmt.Sprintf(" is %d bytes; the file_bytes limit is %d bytes", len(hostileHeader)+1, len(hostileHeader))
	if !diags.HasErrors() || diags[0].Summary != "File too large" || !strings.Contains(diags[0].Detail, path+past) {
		t.Fatalf("past the limit: %v", diags)
	}
	// A -var-file likewise.
	os.WriteFile(path, []byte(hostileHeader), 0o644)
	vf := filepath.Join(t.TempDir(), "vars.hcl")
	os.WriteFile(vf, []byte(strings.Repeat("#", len(hostileHeader)+1)), 0o644)
	_, diags = Load([]string{path}, Options{VarFiles: []string{vf}})
	if !diags.HasErrors() || diags[0].Summary != "Cannot read var file" || !strings.Contains(diags[0].Detail, vf+past) {
		t.Fatalf("var file past the limit: %v", diags)
	}
}

// A limit hit inside can() or try() still fails the show: evaluation stops
// there, and a show evaluated only in part must not pass for valid.
func TestLimitInsideCanStillFails(t *testing.T) {
	got, detail := loadBody(t, "locals {\n  ok = can([for a in range(1000) : [for b in range(1000) : b]])\n}\n", Options{})
	if len(got) != 1 || (got[0] != "7:3 Show expands too far" && got[0] != "7:3 Show too costly to evaluate") {
		t.Fatalf("errors %q: %s", got, detail)
	}
}

// Once a show goes past a budget, the error is reported where it did, once:
// what fails after it, because evaluation stopped, says nothing more.
func TestBudgetErrorIsReportedOnce(t *testing.T) {
	body := "locals {\n  a = [for a in range(1000) : [for b in range(1000) : b]]\n  b = [for a in range(1000) : [for b in range(1000) : b]]\n  c = upper(\"x\")\n}\n"
	got, _ := loadBody(t, body, Options{})
	if len(got) != 1 || !strings.HasPrefix(got[0], "7:") {
		t.Fatalf("errors %q, want one, in local.a on line 7", got)
	}
}

// The functions under their guards return what cty's do.
func TestGuardedFunctionsAgree(t *testing.T) {
	exprs := []string{
		`concat([1, 2], ["a"], [])`, `setproduct(["a", "b"], [1, 2])`, `range(3)`, `range(10, 0, -3)`, `range(1, 2, 0.25)`,
		`format("%05d|%-4s|%.2f|%v", 42, "ab", 3.14159, [1, "x"])`, `formatlist("%s=%d", ["a", "b"], [1, 2])`, `formatlist("%s!", "x")`,
		`join(", ", ["a", "b"], ["c"])`, `replace("a-b-c", "-", "+")`, `replace("abc", "", "-")`, `regex_replace("a1b22", "[0-9]+", "<$0>")`,
		`indent(2, "a\nb")`, `split(",", "a,b,,c")`, `split("", "abc")`, `flatten([[1, [2]], [], [[3, 4]]])`, `merge({a = 1}, {b = 2})`,
		`jsonencode({a = [1, "x", true, null]})`, `jsondecode("{\"a\": [1, 2.5e3, \"x\"]}")`, `tolist(["a", "b"])`, `tolist([1, "b"])`,
		`toset(["b", "a", "b"])`, `toset([])`, `tomap({a = "x", b = "y"})`, `tomap({a = 1, b = "y"})`, `tonumber("12.5")`, `parseint("ff", 16)`,
		`upper("abc")`, `abs(-3)`, `max(1, 5, 3)`, `pow(2, 10)`, `sort(["b", "a"])`, `distinct([1, 1, 2])`, `contains(["a"], "a")`,
		`lookup({a = 1}, "b", 2)`, `keys({b = 1, a = 2})`, `zipmap(["a"], [1])`, `chunklist([1, 2, 3], 2)`, `coalesce("", "x")`,
		`substr("hello", 1, 3)`, `title("a b")`, `regexall("[a-z]", "a1b")`, `tostring(12)`, `abs("-3")`,
	}
	l := newLoader(Options{})
	for _, src := range exprs {
		e, diags := hclsyntax.ParseExpression([]byte(src), "t", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", src, diags)
		}
		want, wdiags := e.Value(&hcl.EvalContext{Functions: functions()})
		ge, _ := l.guardExpr(e)
		got, gdiags := ge.Value(&hcl.EvalContext{Functions: l.funcs})
		if wdiags.HasErrors() || gdiags.HasErrors() {
			t.Errorf("%s: errors %v / %v", src, wdiags, gdiags)
			continue
		}
		if !got.RawEquals(want) {
			t.Errorf("%s = %#v under its guard, %#v in cty", src, got, want)
		}
	}
}

// fastConvert gives what cty's conversion gives, or declines.
func TestFastConvertAgrees(t *testing.T) {
	vals := []cty.Value{
		cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")}),
		cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.StringVal("b")}),
		cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.StringVal("a")}),
		cty.ObjectVal(map[string]cty.Value{"a": cty.NumberIntVal(1), "b": cty.NumberIntVal(2)}),
	}
	types := []cty.Type{cty.List(cty.DynamicPseudoType), cty.Set(cty.DynamicPseudoType), cty.Map(cty.DynamicPseudoType), cty.List(cty.String), cty.Set(cty.Number)}
	for _, v := range vals {
		for _, ty := range types {
			got, ok := fastConvert(v, ty)
			if !ok {
				continue
			}
			want, err := convert.Convert(v, ty)
			if err != nil || !got.RawEquals(want) {
				t.Errorf("%#v to %#v: %#v, cty %#v (%v)", v, ty, got, want, err)
			}
		}
	}
}

// The show of 10,000 sources the benchmarks generate validates within the
// limits.
func TestGeneratedShowWithinLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 10,000 sources take seconds to load")
	}
	s := mustLoad(t, []string{generatedShow(t, 10000)}, Options{})
	if len(s.Sources) != 10000 || len(s.Scenes) != 2500 {
		t.Fatalf("%d sources, %d scenes", len(s.Sources), len(s.Scenes))
	}
}
