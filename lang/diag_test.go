package lang

import (
	"bytes"
	"encoding/json"
	"github.com/hashicorp/hcl/v2"
	"strings"
	"testing"
)

func TestDiagnosticsJSONShape(t *testing.T) {
	_, diags := Load([]string{"testdata/bad/bad_fit.hcl"}, Options{})
	out, err := DiagnosticsJSON(diags)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Valid        *bool `json:"valid"`
		ErrorCount   *int  `json:"error_count"`
		WarningCount *int  `json:"warning_count"`
		Diagnostics  []struct {
			Severity, Summary, Detail string
			Range                     struct {
				Filename   string
				Start, End struct{ Line, Column, Byte int }
			}
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Valid == nil || *doc.Valid || *doc.ErrorCount != 2 || *doc.WarningCount != 0 || len(doc.Diagnostics) != 2 {
		t.Fatalf("report = %s", out)
	}
	d := doc.Diagnostics[0]
	if d.Severity != "error" || d.Summary != "Invalid value" || !strings.Contains(d.Detail, `Did you mean "contain"?`) ||
		d.Range.Filename != "testdata/bad/bad_fit.hcl" || d.Range.Start.Line != 11 || d.Range.Start.Column != 14 || d.Range.End.Column != 23 || d.Range.Start.Byte == 0 {
		t.Errorf("first diagnostic = %+v", d)
	}

	s, diags := Load([]string{"../examples/cpu-demo.hcl"}, Options{})
	out, _ = DiagnosticsJSON(diags)
	if diags.HasErrors() || !bytes.Contains(out, []byte(`"valid": true`)) || s == nil {
		t.Errorf("valid show: %s", out)
	}
	out, _ = DiagnosticsJSON(nil)
	if !bytes.Contains(out, []byte(`"diagnostics": []`)) {
		t.Errorf("empty report = %s", out)
	}
}

func TestWriteDiagnosticsSnippet(t *testing.T) {
	s, diags := Load([]string{"testdata/bad/bad_enum.hcl"}, Options{})
	var buf bytes.Buffer
	if err := WriteDiagnostics(&buf, s.Files, diags, false); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []string{"testdata/bad/bad_enum.hcl:8:", "error: Invalid value", `pattern = "bar"`, "^^^^^", `Did you mean`, `"bars"?`} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
		}
	}
}

func TestParseRate(t *testing.T) {
	cases := []struct {
		in   string
		want Rational
		err  string
	}{
		{"30", Rational{Num: 30, Den: 1}, ""},
		{"30000/1001", Rational{Num: 30000, Den: 1001}, ""},
		{"60/2", Rational{Num: 30, Den: 1}, ""},
		{" 25 ", Rational{Num: 25, Den: 1}, ""},
		{"29.97", Rational{}, `"30000/1001"`},
		{"59.94", Rational{}, `"60000/1001"`},
		{"30.0", Rational{}, `Write "30"`},
		{"0", Rational{}, "positive"},
		{"30/0", Rational{}, "positive"},
		{"1/1000000", Rational{}, "between 1 and 1000"},
		{"1001/1000", Rational{Num: 1001, Den: 1000}, ""},
		{"fast", Rational{}, "not a frame rate"},
		{"5000", Rational{}, "between 1 and 1000"},
	}
	for _, c := range cases {
		got, msg := ParseRate(c.in)
		if got != c.want || (c.err == "") != (msg == "") || !strings.Contains(msg, c.err) {
			t.Errorf("ParseRate(%q) = %v, %q; want %v, %q", c.in, got, msg, c.want, c.err)
		}
	}
}

func TestParseSize(t *testing.T) {
	cases := []struct {
		in   string
		want Size
		err  string
	}{
		{"1920x1080", Size{W: 1920, H: 1080}, ""},
		{"3840x2160", Size{W: 3840, H: 2160}, ""},
		{"1921x1080", Size{}, "even"},
		{"0x1080", Size{}, "between"},
		{"1920*1080", Size{}, "WIDTHxHEIGHT"},
		{"axb", Size{}, "whole pixels"},
	}
	for _, c := range cases {
		got, msg := ParseSize(c.in)
		if got != c.want || (c.err == "") != (msg == "") || !strings.Contains(msg, c.err) {
			t.Errorf("ParseSize(%q) = %v, %q; want %v, %q", c.in, got, msg, c.want, c.err)
		}
	}
}

// TestBinaryGarbageIsPrintedSafely: a binary file given as a show gets a
// bounded number of diagnostics, and its bytes never reach the terminal raw.
func TestBinaryGarbageIsPrintedSafely(t *testing.T) {
	data := make([]byte, 4000)
	for i := range data {
		data[i] = byte(i*131 + i/7) // every byte value, control characters included
	}
	s, diags := loadFiles([]sourceFile{{name: "garbage.hcl", data: data}}, Options{})
	if !diags.HasErrors() {
		t.Fatal("garbage loaded")
	}
	var buf bytes.Buffer
	WriteDiagnostics(&buf, s.Files, diags, false)
	out := buf.String()
	if n := strings.Count(out, ": error: "); n > maxPrinted {
		t.Errorf("%d errors printed, at most %d", n, maxPrinted)
	}
	for _, r := range out {
		if r < 0x20 && r != '\n' || r == 0x7f {
			t.Fatalf("a control character (%#x) reached the output", r)
		}
	}
}

// A line of 70,000 parentheses is printed cut around the error, the caret
// under the character the error points at.
func TestSnippetOfALongLine(t *testing.T) {
	src := "x = " + strings.Repeat("(", 256) + "X" + strings.Repeat("(", 70000) + "\n" // X at column 261
	var buf bytes.Buffer
	WriteSnippet(&buf, []byte(src), hcl.Range{Start: hcl.Pos{Line: 1, Column: 261}, End: hcl.Pos{Line: 1, Column: 262}})
	lines := strings.Split(buf.String(), "\n")
	if len(lines) != 3 || len(lines[0]) > 140 || !strings.HasPrefix(lines[0], "  1 | ...") || !strings.HasSuffix(lines[0], "(...") {
		t.Fatalf("snippet:\n%s", buf.String())
	}
	caret := strings.Index(lines[1], "^")
	if caret < 0 || lines[0][caret] != 'X' || strings.Count(lines[1], "^") != 1 {
		t.Errorf("caret at %d:\n%s", caret, buf.String())
	}
}
