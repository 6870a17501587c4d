package lint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/onairhq/onair/lang"
)

// The renderers: one function each over the same findings. Ignored
// findings are counted in text, listed with their reason in JSON and SARIF
// (as in-source suppressions), and left out of GitHub annotations.

// Formats lists the output formats `onair lint -format` accepts.
var Formats = []string{"text", "json", "sarif", "github"}

// Report is what a renderer needs: the findings, the show files (for
// snippets), the rules that could have reported (for SARIF's rule table)
// and the tool's version.
type Report struct {
	Findings    []Finding
	Files       map[string][]byte
	Rules       []RuleInfo
	ToolVersion string
}

// Write renders the report in the named format.
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "text":
		return r.WriteText(w)
	case "json":
		return r.WriteJSON(w)
	case "sarif":
		return r.WriteSARIF(w)
	case "github":
		return r.WriteGitHub(w)
	}
	return fmt.Errorf("unknown format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// WriteText prints each finding as file:line:col, severity and rule id,
// the summary, the source line with the range underlined, and the detail.
func (r *Report) WriteText(w io.Writer) error {
	var b bytes.Buffer
	for _, f := range r.Findings {
		if f.Ignored != nil {
			continue
		}
		if f.HasRange() {
			fmt.Fprintf(&b, "%s:%d:%d: ", f.Subject.Filename, f.Subject.Start.Line, f.Subject.Start.Column)
		}
		fmt.Fprintf(&b, "%s[%s]: %s\n", SeverityName(f.Severity), f.Rule, f.Summary)
		if f.HasRange() {
			writeSnippet(&b, r.Files[f.Subject.Filename], f.Subject)
		}
		if f.Detail != "" {
			for _, l := range strings.Split(wrap(f.Detail, 76), "\n") {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
		b.WriteString("\n")
	}
	e, wn, ig := Counts(r.Findings)
	switch {
	case e+wn+ig == 0:
		b.WriteString("No problems found.\n")
	default:
		fmt.Fprintf(&b, "%s, %s", plural(e, "error"), plural(wn, "warning"))
		if ig > 0 {
			fmt.Fprintf(&b, ", %d ignored", ig)
		}
		b.WriteString(".\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

func plural(n int, s string) string {
	if n == 1 {
		return "1 " + s
	}
	return fmt.Sprintf("%d %ss", n, s)
}

// writeSnippet prints the range's first line with the range underlined.
func writeSnippet(b *bytes.Buffer, src []byte, rng hcl.Range) { lang.WriteSnippet(b, src, rng) }

// wrap breaks text into lines of at most width characters at spaces.
func wrap(s string, width int) string { return lang.Wrap(s, width) }

type jsonPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

type jsonRange struct {
	Filename string  `json:"filename"`
	Start    jsonPos `json:"start"`
	End      jsonPos `json:"end"`
}

type jsonFinding struct {
	Rule     string     `json:"rule"`
	Severity string     `json:"severity"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail,omitempty"`
	Range    *jsonRange `json:"range,omitempty"`
	Ignored  *struct {
		Reason string    `json:"reason"`
		Range  jsonRange `json:"range"`
	} `json:"ignored,omitempty"`
}

func toJSONRange(r hcl.Range) jsonRange {
	return jsonRange{Filename: r.Filename,
		Start: jsonPos{r.Start.Line, r.Start.Column, r.Start.Byte},
		End:   jsonPos{r.End.Line, r.End.Column, r.End.Byte}}
}

// WriteJSON prints {"findings": [...], "errors": n, "warnings": n, "ignored": n}.
func (r *Report) WriteJSON(w io.Writer) error {
	out := struct {
		Findings []jsonFinding `json:"findings"`
		Errors   int           `json:"errors"`
		Warnings int           `json:"warnings"`
		Ignored  int           `json:"ignored"`
	}{Findings: []jsonFinding{}}
	out.Errors, out.Warnings, out.Ignored = Counts(r.Findings)
	for _, f := range r.Findings {
		jf := jsonFinding{Rule: f.Rule, Severity: SeverityName(f.Severity), Summary: f.Summary, Detail: f.Detail}
		if f.HasRange() {
			jr := toJSONRange(f.Subject)
			jf.Range = &jr
		}
		if f.Ignored != nil {
			jf.Ignored = &struct {
				Reason string    `json:"reason"`
				Range  jsonRange `json:"range"`
			}{f.Ignored.Reason, toJSONRange(f.Ignored.Range)}
		}
		out.Findings = append(out.Findings, jf)
	}
	return encode(w, out)
}

func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// SARIF 2.1.0 (OASIS), the subset onair writes.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	Help                 sarifText      `json:"help"`
	DefaultConfiguration map[string]any `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties,omitempty"`
}

type sarifResult struct {
	RuleID       string             `json:"ruleId"`
	RuleIndex    int                `json:"ruleIndex"`
	Level        string             `json:"level"`
	Message      sarifText          `json:"message"`
	Locations    []sarifLocation    `json:"locations,omitempty"`
	Suppressions []sarifSuppression `json:"suppressions,omitempty"`
	// PartialFingerprints identify the result across commits, so that code
	// scanning tracks one finding rather than a new one each time a line
	// moves (see fingerprint).
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
	EndLine     int `json:"endLine"`
	EndColumn   int `json:"endColumn"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification"`
}

// SARIFSchemaURI is the $schema the SARIF output names.
const SARIFSchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// WriteSARIF prints a SARIF 2.1.0 log with one run: the rule table in
// tool.driver.rules and one result per finding. Ignored findings carry an
// in-source suppression with the comment's reason.
func (r *Report) WriteSARIF(w io.Writer) error {
	rules := append([]RuleInfo(nil), r.Rules...)
	index := map[string]int{}
	sort.Slice(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })
	for _, f := range r.Findings { // a finding from a rule the caller did not list still gets an entry
		if !hasRule(rules, f.Rule) {
			rules = append(rules, RuleInfo{ID: f.Rule, Doc: f.Summary, Severity: f.Severity})
		}
	}
	driver := sarifDriver{Name: "onair", Version: r.ToolVersion, InformationURI: "https://github.com/onairhq/onair", Rules: []sarifRule{}}
	for i, ru := range rules {
		index[ru.ID] = i
		driver.Rules = append(driver.Rules, sarifRule{
			ID:                   ru.ID,
			ShortDescription:     sarifText{ru.Title()},
			FullDescription:      sarifText{strings.TrimSpace(ru.Doc)},
			Help:                 sarifText{ru.Explanation() + "\n\nRun 'onair lint -explain " + ru.ID + "'."},
			DefaultConfiguration: map[string]any{"level": SeverityName(ru.Severity)},
			Properties:           map[string]any{"ignorable": ru.Ignorable},
		})
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Results: []sarifResult{}}
	seen := map[string]int{}
	for _, f := range r.Findings {
		msg := f.Summary
		if f.Detail != "" {
			msg += "\n" + f.Detail
		}
		res := sarifResult{RuleID: f.Rule, RuleIndex: index[f.Rule], Level: SeverityName(f.Severity), Message: sarifText{msg}}
		if f.HasRange() {
			res.Locations = []sarifLocation{{PhysicalLocation: sarifPhysical{
				ArtifactLocation: sarifArtifact{URI: fileURI(f.Subject.Filename)},
				Region:           region(f.Subject),
			}}}
		}
		if f.Ignored != nil {
			res.Suppressions = []sarifSuppression{{Kind: "inSource", Justification: f.Ignored.Reason}}
		}
		fp := r.fingerprint(f)
		seen[fp]++
		res.PartialFingerprints = map[string]string{FingerprintKey: fmt.Sprintf("%s:%d", fp, seen[fp])}
		run.Results = append(run.Results, res)
	}
	return encode(w, sarifLog{Schema: SARIFSchemaURI, Version: "2.1.0", Runs: []sarifRun{run}})
}

// FingerprintKey names onair's partial fingerprint in SARIF results.
const FingerprintKey = "onairFinding/v1"

// fingerprint identifies a finding by what it is, not by where its line
// happens to be: a SHA-256 over the rule id, the file, the text the finding
// points at and its summary, each with runs of white space made one space
// (so reindenting or moving the block keeps it). SARIF results append the
// finding's occurrence (":1", ":2") for identical findings in one file.
func (r *Report) fingerprint(f Finding) string {
	h := sha256.New()
	h.Write([]byte(f.Rule))
	h.Write([]byte{0})
	if f.HasRange() {
		h.Write([]byte(fileURI(f.Subject.Filename)))
		h.Write([]byte{0})
		if src, ok := r.Files[f.Subject.Filename]; ok && f.Subject.Start.Byte >= 0 && f.Subject.End.Byte <= len(src) && f.Subject.Start.Byte <= f.Subject.End.Byte {
			h.Write([]byte(strings.Join(strings.Fields(string(src[f.Subject.Start.Byte:f.Subject.End.Byte])), " ")))
		}
	}
	h.Write([]byte{0})
	h.Write([]byte(strings.Join(strings.Fields(f.Summary), " ")))
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func hasRule(rules []RuleInfo, id string) bool {
	for _, r := range rules {
		if r.ID == id {
			return true
		}
	}
	return false
}

// region converts an HCL range (columns from 1, end exclusive) to a SARIF
// region (the same conventions).
func region(r hcl.Range) sarifRegion {
	g := sarifRegion{StartLine: r.Start.Line, StartColumn: max(r.Start.Column, 1), EndLine: r.End.Line, EndColumn: r.End.Column}
	if g.EndLine < g.StartLine {
		g.EndLine = g.StartLine
	}
	if g.EndColumn < 1 || (g.EndLine == g.StartLine && g.EndColumn < g.StartColumn) {
		g.EndColumn = g.StartColumn
	}
	return g
}

// fileURI turns a show file name into a URI reference: relative names stay
// relative (SARIF viewers resolve them against the checkout), absolute ones
// become file:// URIs.
func fileURI(name string) string {
	p := filepath.ToSlash(name)
	if filepath.IsAbs(name) {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

// WriteGitHub prints one GitHub Actions workflow command per finding not
// ignored, so that findings appear as annotations on the pull request.
func (r *Report) WriteGitHub(w io.Writer) error {
	var b bytes.Buffer
	for _, f := range r.Findings {
		if f.Ignored != nil {
			continue
		}
		var props []string
		if f.HasRange() {
			g := region(f.Subject)
			props = append(props,
				"file="+ghProperty(filepath.ToSlash(f.Subject.Filename)),
				fmt.Sprintf("line=%d", g.StartLine), fmt.Sprintf("col=%d", g.StartColumn),
				fmt.Sprintf("endLine=%d", g.EndLine), fmt.Sprintf("endColumn=%d", g.EndColumn))
		}
		props = append(props, "title="+ghProperty(f.Rule))
		msg := f.Summary
		if f.Detail != "" {
			msg += "\n" + f.Detail
		}
		fmt.Fprintf(&b, "::%s %s::%s\n", SeverityName(f.Severity), strings.Join(props, ","), ghData(msg))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// ghData escapes a workflow command's message.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command's property value.
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
