package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hostile inputs of issue 9: each must end in its diagnostic, fast and
// in little memory. hostile_linux_test.go runs each in a subprocess under
// a memory cap; the fuzz test starts from their shapes.

// hostileDepth is how deep the generated inputs nest: what crashed every
// command (a 140 KB show).
const hostileDepth = 70000

const hostileHeader = "show {\n  name       = \"hostile\"\n  size       = \"1920x1080\"\n  frame_rate = \"30\"\n}\n"

// nested returns open×n + inner + close×n.
func nested(open, inner, close string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// deepShapes are the ways of nesting, each made n deep by make (the cases
// make them hostileDepth deep). at(outer) is the column in the expression where the nesting
// passes nesting_depth (256) when the expression is itself nested outer
// levels deep (0 in a -var value, 1 in a locals block).
var deepShapes = []struct {
	name string
	make func(n int) string // the shape n deep
	at   func(outer int) int
}{
	{"parens", func(n int) string { return nested("(", "1", ")", n) }, func(o int) int { return 257 - o }},
	{"brackets", func(n int) string { return nested("[", "1", "]", n) }, func(o int) int { return 257 - o }},
	// {a= opens a level every three characters.
	{"braces", func(n int) string { return nested("{a=", "1", "}", n) }, func(o int) int { return 3*(256-o) + 1 }},
	// "${ opens two: the string, then the interpolation.
	{"templates", func(n int) string { return nested(`"${`, "1", `}"`, n) }, func(o int) int {
		if n := 257 - o; n%2 == 1 {
			return 3*((n+1)/2-1) + 1
		} else {
			return 3*(n/2-1) + 2
		}
	}},
	{"calls", func(n int) string { return nested("abs(", "1", ")", n) }, func(o int) int { return 4 * (257 - o) }},
	// Each ? chains one more level onto the expression.
	{"conditionals", func(n int) string { return strings.Repeat("true ? 1 : ", n) + "2" }, func(o int) int { return 11*(256-o) + 6 }},
	{"negations", func(n int) string { return strings.Repeat("!", n) + "true" }, func(o int) int { return 257 - o }},
	{"sums", func(n int) string { return "1" + strings.Repeat("+1", n) }, func(o int) int { return 2 * (257 - o) }},
	// Each [*] chains a level; inside it, [ and * are two more.
	{"splats", func(n int) string { return "[]" + strings.Repeat("[*]", n) }, func(o int) int { return 3*(255-o) + 1 }},
}

// hostileCase is one input: setup writes its files under dir and returns
// what to Load; want lists the errors it must end with, each
// "FILE:LINE:COL Summary" (FILE relative to dir, "-" without a place), and
// detail a phrase of the first one's detail.
type hostileCase struct {
	name   string
	setup  func(dir string) ([]string, Options)
	want   []string
	detail string
}

// showWith writes the show header and body to dir/show.hcl.
func showWith(body string) func(dir string) ([]string, Options) {
	return func(dir string) ([]string, Options) {
		path := filepath.Join(dir, "show.hcl")
		if err := os.WriteFile(path, []byte(hostileHeader+body), 0o644); err != nil {
			panic(err)
		}
		return []string{path}, Options{}
	}
}

// testdataShow loads lang/testdata/hostile/NAME.hcl as it is.
func testdataShow(name string) func(dir string) ([]string, Options) {
	return func(string) ([]string, Options) {
		return []string{filepath.Join("testdata", "hostile", name+".hcl")}, Options{}
	}
}

// varShow is a show declaring variable x (of any type, so a value given
// is parsed as HCL), written to dir/show.hcl.
func varShow(dir string) string {
	path := filepath.Join(dir, "show.hcl")
	if err := os.WriteFile(path, []byte(hostileHeader+"variable \"x\" {\n  type    = any\n  default = null\n}\n"), 0o644); err != nil {
		panic(err)
	}
	return path
}

func hostileCases() []hostileCase {
	var cases []hostileCase
	for _, s := range deepShapes {
		s := s
		cases = append(cases, hostileCase{
			name:   "file/" + s.name,
			setup:  showWith("locals {\n  x = " + s.make(hostileDepth) + "\n}\n"),
			want:   []string{fmt.Sprintf("show.hcl:7:%d Nesting too deep", 6+s.at(1))},
			detail: "nest more than 256 deep here (the nesting_depth limit)",
		})
	}
	// The same through -var, ONAIR_VAR_ and -var-file.
	for _, s := range deepShapes {
		s := s
		cases = append(cases,
			hostileCase{
				name: "var/" + s.name,
				setup: func(dir string) ([]string, Options) {
					return []string{varShow(dir)}, Options{Vars: map[string]string{"x": s.make(hostileDepth)}}
				},
				want:   []string{fmt.Sprintf("-var x:1:%d Nesting too deep", s.at(0))},
				detail: "The value of -var x: ",
			},
			hostileCase{
				name: "env/" + s.name,
				setup: func(dir string) ([]string, Options) {
					return []string{varShow(dir)}, Options{Env: []string{"ONAIR_VAR_x=" + s.make(hostileDepth)}}
				},
				want:   []string{fmt.Sprintf("ONAIR_VAR_x:1:%d Nesting too deep", s.at(0))},
				detail: "The value of ONAIR_VAR_x: ",
			},
			hostileCase{
				name: "var-file/" + s.name,
				setup: func(dir string) ([]string, Options) {
					vf := filepath.Join(dir, "vars.hcl")
					if err := os.WriteFile(vf, []byte("x = "+s.make(hostileDepth)+"\n"), 0o644); err != nil {
						panic(err)
					}
					return []string{varShow(dir)}, Options{VarFiles: []string{vf}}
				},
				want:   []string{fmt.Sprintf("vars.hcl:1:%d Nesting too deep", 4+s.at(0))},
				detail: "nesting_depth",
			})
	}
	cases = append(cases,
		hostileCase{name: "file/blocks", setup: showWith(nested("a {\n", "", "}\n", hostileDepth)),
			want: []string{"show.hcl:262:3 Nesting too deep"}, detail: "nesting_depth"},
		hostileCase{name: "file/directives", setup: showWith("locals {\n  x = \"" + nested("%{if true}", "", "%{endif}", hostileDepth) + "\"\n}\n"),
			// The string and each open %{if} are a level, and each %{ an
			// interpolation: the 254th %{ (column 10×254-8 of the string)
			// is one too many.
			want: []string{fmt.Sprintf("show.hcl:7:%d Nesting too deep", 6+10*254-8)}, detail: "nesting_depth"},
		hostileCase{name: "file/long-number", setup: showWith("locals {\n  x = 1" + strings.Repeat("0", 100000) + "\n}\n"),
			want: []string{"show.hcl:7:7 Number too long"}, detail: "written with 100001 characters; at most 616"},
		hostileCase{name: "file/too-large", setup: func(dir string) ([]string, Options) {
			path := filepath.Join(dir, "show.hcl")
			if err := os.WriteFile(path, []byte(hostileHeader+"# "+strings.Repeat("x", 17<<20)+"\n"), 0o644); err != nil {
				panic(err)
			}
			return []string{path}, Options{}
		}, want: []string{"- File too large"}, detail: "the file_bytes limit is 16,777,216 bytes"},

		// Small shows that expand without bound.
		hostileCase{name: "doubling-locals", setup: testdataShow("doubling_locals"),
			want: []string{"testdata/hostile/doubling_locals.hcl:28:24 String too long"}, detail: "string_bytes limit is 1,048,576"},
		hostileCase{name: "nested-for", setup: testdataShow("nested_for"),
			want: []string{"testdata/hostile/nested_for.hcl:8:68 Show expands too far"}, detail: "the expansion limit is 500,000 steps"},
		hostileCase{name: "concat-doubling", setup: testdataShow("concat_doubling"),
			want: []string{"testdata/hostile/concat_doubling.hcl:26:9 Value too large"}, detail: "value_elements limit is 250,000"},
		hostileCase{name: "setproduct", setup: testdataShow("setproduct"),
			want: []string{"testdata/hostile/setproduct.hcl:8:9 Value too large"}, detail: "setproduct would build 500,000,000 elements"},
		hostileCase{name: "big-number", setup: testdataShow("big_number"),
			want: []string{"testdata/hostile/big_number.hcl:8:15 Number too large"}, detail: "about 1e100000000"},
		hostileCase{name: "for-each-1m", setup: testdataShow("for_each_1m"),
			want: []string{"testdata/hostile/for_each_1m.hcl:8:84 Show too costly to evaluate"}, detail: "evaluation_work"},
		hostileCase{name: "format-width", setup: testdataShow("format_width"),
			want: []string{"testdata/hostile/format_width.hcl:8:10 String too long"}, detail: "format would build a string"},
		hostileCase{name: "template-for", setup: testdataShow("template_for"),
			want: []string{"testdata/hostile/template_for.hcl:9:36 String too long"}, detail: "string_bytes"},
		hostileCase{name: "number-squaring", setup: testdataShow("number_squaring"),
			want: []string{"testdata/hostile/number_squaring.hcl:9:8 Number too large"}, detail: "about 1e400"},
		hostileCase{name: "tonumber-long", setup: testdataShow("tonumber_long"),
			want: []string{"testdata/hostile/tonumber_long.hcl:9:12 Number too large"}, detail: "a string of 10,000 characters cannot be taken as a number"},
		hostileCase{name: "shared-doubling", setup: testdataShow("shared_doubling"),
			want: []string{"testdata/hostile/shared_doubling.hcl:25:9 Value too large"}, detail: "more than 250,000 elements"},
		hostileCase{name: "walk-in-loop", setup: testdataShow("walk_in_loop"),
			want: []string{"testdata/hostile/walk_in_loop.hcl:9:42 Show too costly to evaluate"}, detail: "evaluation_work"},
		hostileCase{name: "deep-value", setup: testdataShow("deep_value"),
			want: []string{"testdata/hostile/deep_value.hcl:263:10 Nesting too deep"}, detail: "nests more than 256 levels"},

		// Geometry past the limits (issue 27): each once passed validate,
		// and the compositor sized its tables by the whole rect.
		hostileCase{name: "huge-rect", setup: testdataShow("huge_rect"),
			want: []string{"testdata/hostile/huge_rect.hcl:12:14 Rect out of bounds"}, detail: "rect_reach limit on the 640x360 canvas"},
		hostileCase{name: "square-rect", setup: testdataShow("square_rect"),
			want: []string{"testdata/hostile/square_rect.hcl:17:16 Rect out of bounds"}, detail: "rect [-536870912, -536870912, 1073741824, 1073741824]"},
		hostileCase{name: "crop-outside", setup: testdataShow("crop_outside"),
			want: []string{"testdata/hostile/crop_outside.hcl:13:14 Crop out of bounds"}, detail: "crop_reach limit of the source's 320x180 picture"},

		// The same through variables.
		hostileCase{name: "var/big-number", setup: func(dir string) ([]string, Options) {
			path := filepath.Join(dir, "show.hcl")
			if err := os.WriteFile(path, []byte(hostileHeader+"variable \"n\" {\n  type = number\n}\nlocals {\n  text = \"${var.n}\"\n}\n"), 0o644); err != nil {
				panic(err)
			}
			return []string{path}, Options{Vars: map[string]string{"n": "1e100000000"}}
		}, want: []string{"show.hcl:6:1 Number too large"}, detail: "about 1e100000000"},
		hostileCase{name: "env/long-number", setup: func(dir string) ([]string, Options) {
			path := filepath.Join(dir, "show.hcl")
			if err := os.WriteFile(path, []byte(hostileHeader+"variable \"n\" {\n  type = number\n}\n"), 0o644); err != nil {
				panic(err)
			}
			return []string{path}, Options{Env: []string{"ONAIR_VAR_n=" + strings.Repeat("7", 1<<20)}}
		}, want: []string{"show.hcl:6:1 Number too large"}, detail: "cannot be taken as a number"},
		hostileCase{name: "var-file/nested-for", setup: func(dir string) ([]string, Options) {
			path := filepath.Join(dir, "show.hcl")
			if err := os.WriteFile(path, []byte(hostileHeader+"variable \"cube\" {\n  type = any\n}\n"), 0o644); err != nil {
				panic(err)
			}
			return []string{path}, Options{VarFiles: []string{filepath.Join(wd(), "testdata", "hostile", "var_file_bomb.hcl")}}
		}, want: []string{"testdata/hostile/var_file_bomb.hcl:2:66 Show too costly to evaluate"}, detail: "evaluation_work"},
	)
	return cases
}

// wd is the package directory the tests run in.
func wd() string {
	d, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return d
}

// hostileTest is the case of that name.
func hostileTest(name string) (hostileCase, bool) {
	for _, c := range hostileCases() {
		if c.name == name {
			return c, true
		}
	}
	return hostileCase{}, false
}

// errorLines renders the errors as hostileCase.want does, file names
// relative to dir (or to the package directory).
func errorLines(diags []*diagOut, dir string) []string {
	var out []string
	for _, d := range diags {
		if !d.Error {
			continue
		}
		if d.File == "" {
			out = append(out, "- "+d.Summary)
			continue
		}
		f := d.File
		if rel, err := filepath.Rel(dir, f); err == nil && !strings.HasPrefix(rel, "..") {
			f = rel
		} else if rel, err := filepath.Rel(wd(), f); err == nil && !strings.HasPrefix(rel, "..") {
			f = rel
		}
		out = append(out, fmt.Sprintf("%s:%d:%d %s", f, d.Line, d.Column, d.Summary))
	}
	return out
}

// diagOut is a diagnostic as the subprocess reports it.
type diagOut struct {
	Error   bool   `json:"error"`
	Summary string `json:"summary"`
	Detail  string `json:"detail"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
}

// Every case's name is unique and every testdata/hostile file is used.
func TestHostileCasesAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	used := map[string]bool{}
	for _, c := range hostileCases() {
		if seen[c.name] {
			t.Errorf("two cases named %s", c.name)
		}
		seen[c.name] = true
		if len(c.want) == 0 || c.detail == "" {
			t.Errorf("%s: no expected diagnostic", c.name)
		}
		for _, w := range c.want {
			if f, _, ok := strings.Cut(w, ":"); ok && strings.HasPrefix(f, "testdata/hostile/") {
				used[filepath.Base(f)] = true
			}
		}
	}
	files, _ := filepath.Glob("testdata/hostile/*.hcl")
	for _, f := range files {
		if !used[filepath.Base(f)] {
			t.Errorf("%s is in no case", f)
		}
	}
}
