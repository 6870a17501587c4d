package lang

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// WriteDiagnostics prints diagnostics as text, one block each:
//
//	shows/x.hcl:3:10: error: Invalid size
//	  3 |   size = "1921x1080"
//	    |          ^^^^^^^^^^^
//	  "1921x1080": width and height must be even (4:2:0 chroma is ...
//
// files maps file names to their bytes (Show.Files); a diagnostic about a
// file not in it is printed without a snippet. With color, the severity is
// drawn in red (errors) or yellow (warnings).
func WriteDiagnostics(w io.Writer, files map[string][]byte, diags hcl.Diagnostics, color bool) error {
	var b bytes.Buffer
	for i, d := range diags {
		if i == maxPrinted {
			fmt.Fprintf(&b, "... and %d more: fix these first (onair validate -json lists every one).\n", len(diags)-i)
			break
		}
		sev, paint := "error", "\x1b[1;31m"
		if d.Severity == hcl.DiagWarning {
			sev, paint = "warning", "\x1b[1;33m"
		}
		if color {
			sev = paint + sev + "\x1b[0m"
		}
		if d.Subject != nil {
			fmt.Fprintf(&b, "%s:%d:%d: ", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		fmt.Fprintf(&b, "%s: %s\n", sev, d.Summary)
		if d.Subject != nil {
			WriteSnippet(&b, files[d.Subject.Filename], *d.Subject)
		}
		if d.Detail != "" {
			for _, l := range strings.Split(Wrap(d.Detail, 76), "\n") {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
		b.WriteString("\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteSnippet prints the range's first line with a line-number gutter and
// underlines the range on it with carets (to the end of the line when the
// range runs on). Nothing is printed when src lacks the line. A line longer
// than snippetWidth is cut to the part around the range, its cuts marked
// with "...": a generated show may hold a line of a hundred kilobytes.
func WriteSnippet(w io.Writer, src []byte, rng hcl.Range) {
	if src == nil {
		return
	}
	lines := bytes.Split(src, []byte("\n"))
	if rng.Start.Line < 1 || rng.Start.Line > len(lines) {
		return
	}
	line := []rune(printable(strings.TrimRight(string(lines[rng.Start.Line-1]), "\r")))
	num := fmt.Sprint(rng.Start.Line)
	startCol, endCol := rng.Start.Column, rng.End.Column
	if rng.End.Line != rng.Start.Line {
		endCol = len(line) + 1
	}
	startCol = max(startCol, 1)
	if endCol <= startCol {
		endCol = startCol + 1
	}
	prefix, suffix := "", ""
	if len(line) > snippetWidth {
		// Keep the start of the range a third of the way in.
		from := min(max(startCol-1-snippetWidth/3, 0), len(line)-snippetWidth)
		to := from + snippetWidth
		if from > 0 {
			prefix = "..."
		}
		if to < len(line) {
			suffix = "..."
		}
		line = line[from:to]
		startCol -= from
		endCol = min(endCol-from, snippetWidth+1)
		startCol += len(prefix)
		endCol += len(prefix)
	}
	fmt.Fprintf(w, "  %s | %s%s%s\n", num, prefix, strings.ReplaceAll(string(line), "\t", " "), suffix)
	fmt.Fprintf(w, "  %s | %s%s\n", strings.Repeat(" ", len(num)), strings.Repeat(" ", startCol-1), strings.Repeat("^", max(endCol-startCol, 1)))
}

// snippetWidth is the most characters of a line WriteSnippet prints.
const snippetWidth = 120

// maxPrinted bounds the diagnostics WriteDiagnostics prints: a binary file
// given as a show would otherwise fill the terminal.
const maxPrinted = 40

// printable replaces control characters and invalid UTF-8 with U+FFFD, so a
// snippet of a binary file cannot drive the terminal; tabs become spaces.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case r == utf8.RuneError, r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			return '\uFFFD'
		}
		return r
	}, s)
}

// Wrap breaks text into lines of at most width characters at spaces,
// keeping its own line breaks.
func Wrap(s string, width int) string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			if line != "" && len(line)+1+len(word) > width {
				out = append(out, line)
				line = word
				continue
			}
			if line != "" {
				line += " "
			}
			line += word
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// JSONPos is a position in a show file.
type JSONPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// JSONRange is a span of a show file.
type JSONRange struct {
	Filename string  `json:"filename"`
	Start    JSONPos `json:"start"`
	End      JSONPos `json:"end"`
}

// JSONDiagnostic is one diagnostic as `onair validate -json` prints it.
type JSONDiagnostic struct {
	Severity string     `json:"severity"` // error | warning
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail"`
	Range    *JSONRange `json:"range,omitempty"`
}

// JSONReport is the whole -json document.
type JSONReport struct {
	Valid        bool             `json:"valid"`
	ErrorCount   int              `json:"error_count"`
	WarningCount int              `json:"warning_count"`
	Diagnostics  []JSONDiagnostic `json:"diagnostics"`
}

// DiagnosticsJSON renders diagnostics in the shape of `onair validate -json`.
func DiagnosticsJSON(diags hcl.Diagnostics) ([]byte, error) {
	rep := JSONReport{Diagnostics: []JSONDiagnostic{}}
	for _, d := range diags {
		jd := JSONDiagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			jd.Severity = "warning"
			rep.WarningCount++
		} else {
			rep.ErrorCount++
		}
		if d.Subject != nil {
			r := d.Subject
			jd.Range = &JSONRange{Filename: r.Filename,
				Start: JSONPos{Line: r.Start.Line, Column: r.Start.Column, Byte: r.Start.Byte},
				End:   JSONPos{Line: r.End.Line, Column: r.End.Column, Byte: r.End.Byte}}
		}
		rep.Diagnostics = append(rep.Diagnostics, jd)
	}
	rep.Valid = rep.ErrorCount == 0
	return json.MarshalIndent(rep, "", "  ")
}

// didYouMean returns ` Did you mean "x"?` for the closest option, or "".
func didYouMean(got string, options []string) string {
	best, bestD := "", 1<<30
	lg := strings.ToLower(got)
	for _, o := range options {
		d := EditDistance(lg, strings.ToLower(o))
		if d < bestD || (d == bestD && o < best) {
			best, bestD = o, d
		}
	}
	limit := 2
	if len(got) > 6 {
		limit = 3
	}
	if best == "" || bestD > limit || bestD >= len(got) {
		return ""
	}
	return " Did you mean \"" + best + "\"?"
}

// EditDistance is the Levenshtein distance between a and b in bytes: the
// measure behind every did-you-mean.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func sortInts(s []int) { sort.Ints(s) }

// attrsInOrder is body's attributes in file order (JustAttributes returns
// a map).
func attrsInOrder(body hcl.Body) ([]*hcl.Attribute, hcl.Diagnostics) {
	attrs, diags := body.JustAttributes()
	list := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		list = append(list, a)
	}
	sortAttrs(list)
	return list, diags
}

// sortAttrs orders attributes as they appear in their file.
func sortAttrs(list []*hcl.Attribute) {
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i].Range, list[j].Range
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
}
