package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// nestAt returns "LINE:COL" where checkNesting refuses src at depth limit
// max, or "" when it does not.
func nestAt(src string, max int) string {
	d := checkNesting([]byte(src), "t.hcl", max, 616)
	if d == nil {
		return ""
	}
	return fmt.Sprintf("%d:%d", d.Subject.Start.Line, d.Subject.Start.Column)
}

// Shows nest a few levels: every show the project ships, and the language
// tests' good shows, stay under 16, far from the limit of 256.
func TestShippedShowsNestShallowly(t *testing.T) {
	var files []string
	for _, pat := range []string{"../shows/*.hcl", "../examples/*.hcl", "testdata/good/*.hcl", "testdata/good/dir/*.hcl"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if at := nestAt(string(data), 16); at != "" {
			t.Errorf("%s nests 16 deep at %s", f, at)
		}
	}
}

// Brackets in strings, heredocs and comments are text, not nesting: 1,000
// unbalanced ones of each kind are no error, and the show loads.
func TestNestingIgnoresText(t *testing.T) {
	open := strings.Repeat("([{", 1000)
	show := hostileHeader +
		"# " + open + "\n" +
		"// " + open + "\n" +
		"/* " + open + "\n" + open + " */\n" +
		"locals {\n" +
		"  a = \"" + open + "\"\n" +
		"  b = \"\\\"" + open + "\\\\\"\n" + // escaped quotes do not end the string
		"  c = \"$${" + open + "\"\n" + // $${ is text
		"  d = \"%%{" + open + "\"\n" +
		"  e = <<EOT\n" + open + "\n  EOT is not the end\n$${" + open + "\nEOT\n" +
		"  f = <<-EOT\n    " + open + "\n    EOT\n" +
		"}\n"
	if at := nestAt(show, 256); at != "" {
		t.Fatalf("refused at %s", at)
	}
	path := filepath.Join(t.TempDir(), "text.hcl")
	if err := os.WriteFile(path, []byte(show), 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustLoad(t, []string{path}, Options{})
	if s.Name != "hostile" {
		t.Errorf("show %q", s.Name)
	}
}

// What hcl reads as code is counted wherever it is: in an interpolation of
// a string or a heredoc, after a heredoc's end, after an unterminated
// block comment (which hcl reads as / and *), and across lines.
func TestNestingCountsCode(t *testing.T) {
	deep := strings.Repeat("(", 300)
	cases := []struct{ name, src, want string }{
		// the string and the interpolation are two levels: the 255th
		// parenthesis is the 257th
		{"string interpolation", `x = "a${` + deep + `"`, "1:263"},
		{"heredoc interpolation", "x = <<EOT\ntext\n${" + deep + "\nEOT\n", "3:257"},
		{"after a heredoc", "x = <<EOT\n(((\nEOT\ny = " + deep + "\n", "4:261"},
		{"not a heredoc: a space after the marker", "x = <<EOT \n" + deep + "\n", "2:257"},
		{"unterminated block comment", "x = /* " + deep + "\n", "1:262"},
		{"across lines in parentheses", "x = " + strings.Repeat("(\n", 300), "257:1"},
		{"a quote in a comment does not open a string", "# \"\nx = " + deep + "\n", "2:261"},
		// hcl ends an interpolation at its brace, an open bracket or not:
		// the parentheses after it are text, and the bracket is closed.
		{"an interpolation ends at its brace", `x = "${ [ }` + deep + `"`, ""},
		{"what an interpolation left open is closed", `x = "${ [ }${` + deep + `"`, "1:268"},
	}
	for _, c := range cases {
		if got := nestAt(c.src, 256); got != c.want {
			t.Errorf("%s: refused at %q, want %q", c.name, got, c.want)
		}
	}
}

// Chains count where they chain and end at a comma or a new attribute.
func TestNestingChains(t *testing.T) {
	long := strings.Repeat("1 + ", 200) + "1"
	// 200 operators in each of two attributes, or two arguments: fine.
	for _, src := range []string{
		"a = " + long + "\nb = " + long + "\n",
		"a = max(" + long + ", " + long + ")\n",
		"a = { x = " + long + "\n y = " + long + " }\n",
	} {
		if at := nestAt(src, 256); at != "" {
			t.Errorf("refused at %s: %.40q...", at, src)
		}
	}
	// In parentheses a newline does not end the chain.
	if at := nestAt("a = ("+strings.Repeat("1 +\n", 300)+"1)\n", 256); at != "256:3" {
		t.Errorf("a chain over lines in parentheses refused at %q, want 256:3", at)
	}
	// a[x][y]... nests as its brackets do together.
	if at := nestAt("a = b"+strings.Repeat("[0]", 300)+"\n", 256); at != "1:774" {
		t.Errorf("an index chain refused at %q, want 1:774", at)
	}
}

// %{if} and %{for} open a level each until their %{endif} and %{endfor};
// %{else} opens none. Sequential directives do not add up.
func TestNestingDirectives(t *testing.T) {
	seq := strings.Repeat("%{if true}a%{else}b%{endif}", 1000)
	if at := nestAt(`x = "`+seq+`"`, 256); at != "" {
		t.Errorf("1,000 directives one after the other refused at %s", at)
	}
	nestedIfs := strings.Repeat("%{ if true }", 300) + strings.Repeat("%{ endif }", 300)
	if at := nestAt(`x = "`+nestedIfs+`"`, 256); at == "" {
		t.Error("300 nested %{if} accepted")
	}
}

// A number literal longer than the limit allows is refused where it is.
func TestNestingRefusesLongNumbers(t *testing.T) {
	d := checkNesting([]byte("x = 1.5e3\ny = "+strings.Repeat("9", 700)+"\n"), "t.hcl", 256, 616)
	if d == nil || d.Summary != "Number too long" || d.Subject.Start.Line != 2 || d.Subject.Start.Column != 5 {
		t.Fatalf("got %v", d)
	}
	if !strings.Contains(d.Detail, "700 characters; at most 616") {
		t.Errorf("detail %q", d.Detail)
	}
}

// A -var value nested too deep is refused, naming where it came from.
func TestNestingInVarValues(t *testing.T) {
	path := varShow(t.TempDir())
	deep := strings.Repeat("[", 300)
	_, diags := Load([]string{path}, Options{Vars: map[string]string{"x": deep}})
	if got := diagLines(diags, hcl.DiagError); len(got) != 1 || got[0] != "1:257 Nesting too deep" {
		t.Fatalf("errors %v", got)
	}
	if d := diags[0]; d.Subject.Filename != "-var x" || !strings.HasPrefix(d.Detail, "The value of -var x: ") {
		t.Errorf("diagnostic %s: %s", d.Subject.Filename, d.Detail)
	}
	// A string variable's value is not parsed, and is no error.
	_, diags = Load([]string{path}, Options{Vars: map[string]string{"x": "\"" + deep + "\""}})
	if diags.HasErrors() {
		t.Errorf("a quoted value: %v", diags)
	}
}

// CheckText, for tools that parse show text themselves, refuses what Load
// refuses and passes what it passes.
func TestCheckText(t *testing.T) {
	if d := CheckText([]byte(hostileHeader), "ok.hcl"); d != nil {
		t.Errorf("a show refused: %v", d)
	}
	d := CheckText([]byte("x = "+strings.Repeat("(", hostileDepth)), "deep.hcl")
	if d == nil || d.Summary != "Nesting too deep" || d.Subject.Filename != "deep.hcl" || d.Subject.Start.Column != 4+257 {
		t.Errorf("70,000 parentheses: %v", d)
	}
}
