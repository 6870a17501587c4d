package lang

import (
	"encoding/json"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// WriteDiagnostics prints diagnostics as text: severity, summary, the file
// position, a snippet with the span marked, and the detail. files maps file
// names to their bytes (Show.Files); a diagnostic about a file not in it is
// printed without a snippet.
func WriteDiagnostics(w io.Writer, files map[string][]byte, diags hcl.Diagnostics, color bool) error {
	hf := make(map[string]*hcl.File, len(files))
	for name, data := range files {
		hf[name] = &hcl.File{Bytes: data}
	}
	return hcl.NewDiagnosticTextWriter(w, hf, 100, color).WriteDiagnostics(diags)
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
		d := editDistance(lg, strings.ToLower(o))
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

func editDistance(a, b string) int {
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
