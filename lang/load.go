package lang

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/onairhq/onair/internal/files"
)

// Options are the variable values given on the command line and in the
// environment.
type Options struct {
	// Vars are -var name=value pairs, value as typed: parsed as an HCL
	// expression when the variable's type is not a primitive (or, with no
	// type, when it parses as one), otherwise taken as a string.
	Vars map[string]string
	// VarFiles are -var-file paths: HCL files of name = value lines.
	VarFiles []string
	// Env is the environment in os.Environ form; ONAIR_VAR_name=value sets
	// var.name with the lowest precedence.
	Env []string
}

// EnvVarPrefix is the prefix of environment variables that set variables.
const EnvVarPrefix = "ONAIR_VAR_"

// sourceFile is one show file as read.
type sourceFile struct {
	name string
	data []byte
}

// Load reads a show from paths (each a .hcl file or a directory whose .hcl
// files are merged, in name order; a path that is not a regular file, a
// FIFO say, is an error, and such a .hcl entry of a directory is skipped
// with a warning), resolves and expands it, and returns the
// typed model. The Show is never nil: with errors it is partial (do not
// compile it), but its Files always hold what was read, for
// WriteDiagnostics. Warnings come back beside a complete Show.
func Load(paths []string, opts Options) (*Show, hcl.Diagnostics) {
	files, diags := readPaths(paths)
	if diags.HasErrors() {
		show := &Show{Files: map[string][]byte{}}
		for _, f := range files {
			show.Files[f.name] = f.data
		}
		return show, diags
	}
	show, more := loadFiles(files, opts)
	return show, append(diags, more...)
}

// readPaths expands directories and reads every file.
func readPaths(paths []string) ([]sourceFile, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	var files []sourceFile
	if len(paths) == 0 {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "No show files", Detail: "Give a .hcl file or a directory of .hcl files."}}
	}
	seen := map[string]bool{}
	add := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		data, d := readRegular(name)
		if d != nil {
			diags = append(diags, d)
			return
		}
		files = append(files, sourceFile{name: name, data: data})
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read show file", Detail: fmt.Sprintf("%s. Check the path.", err)})
			continue
		}
		if !fi.IsDir() {
			if !fi.Mode().IsRegular() {
				diags = append(diags, notRegular(filepath.Clean(p), fi.Mode(), hcl.DiagError))
				continue
			}
			add(filepath.Clean(p))
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read show directory", Detail: fmt.Sprintf("%s. Check the path and its permissions.", err)})
			continue
		}
		var n int
		for _, e := range entries { // ReadDir returns entries sorted by name
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".hcl") {
				continue
			}
			name := filepath.Join(p, e.Name())
			if !e.Type().IsRegular() {
				// A FIFO, socket or device named .hcl is skipped with a
				// warning (reading a FIFO would wait for a writer forever);
				// a link counts as what it points to.
				fi, err := os.Stat(name)
				if err == nil && fi.IsDir() {
					continue
				}
				if err == nil && !fi.Mode().IsRegular() {
					diags = append(diags, notRegular(name, fi.Mode(), hcl.DiagWarning))
					continue
				}
			}
			add(name)
			n++
		}
		if n == 0 {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No show files in directory", Detail: fmt.Sprintf("The directory %s holds no .hcl files. Give a directory with the show's .hcl files, or a file.", p)})
		}
	}
	return files, diags
}

// ReadFile reads a show file as Load does: a regular file only (a FIFO or
// a device is refused by name, never read) of at most the file_bytes
// limit. A tool that reads show files itself (onair fmt) should read them
// with it.
func ReadFile(name string) ([]byte, *hcl.Diagnostic) { return readRegular(name) }

// readRegular reads a show or var file, refusing anything but a regular
// file (files.ReadRegular: a FIFO cannot hang it) and files over the
// file_bytes limit.
func readRegular(name string) ([]byte, *hcl.Diagnostic) {
	data, err := files.ReadRegular(name, limitValues[limitFileBytes])
	var nr *files.NotRegularError
	var tl *files.TooLargeError
	switch {
	case err == nil:
		return data, nil
	case errors.As(err, &nr):
		return nil, notRegularDiag(name, nr.What, hcl.DiagError)
	case errors.As(err, &tl):
		lim := limitTable[limitFileBytes]
		return nil, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: lim.Summary,
			Detail: fmt.Sprintf("%s is %s bytes; the %s limit is %s bytes. %s", name, thousands(tl.Size), lim.Name, thousands(tl.Max), lim.Advice)}
	}
	return nil, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read show file", Detail: fmt.Sprintf("%s. Check the path and its permissions.", err)}
}

// notRegular is the diagnostic for a show path that is not a regular file
// (a FIFO, a socket, a device): it names the file and what it is.
func notRegular(name string, mode os.FileMode, sev hcl.DiagnosticSeverity) *hcl.Diagnostic {
	return notRegularDiag(name, files.Describe(mode), sev)
}

func notRegularDiag(name, what string, sev hcl.DiagnosticSeverity) *hcl.Diagnostic {
	if sev == hcl.DiagWarning {
		return &hcl.Diagnostic{Severity: sev, Summary: "Show file skipped: not a regular file",
			Detail: fmt.Sprintf("%s is %s, not a regular file, so it is not read as part of the show. Show files are read whole; rename it or move it out of the directory.", name, what)}
	}
	return &hcl.Diagnostic{Severity: sev, Summary: "Not a regular file",
		Detail: fmt.Sprintf("%s is %s, not a regular file. Show files are read whole: give a .hcl file or a directory of them.", name, what)}
}

// markWritten records an absolute path the show wrote, which Show.Rel keeps
// absolute.
func (l *loader) markWritten(p string) {
	if l.show.written == nil {
		l.show.written = map[string]bool{}
	}
	l.show.written[p] = true
}

// loadFiles is Load over files already read; the fuzz test calls it directly.
func loadFiles(files []sourceFile, opts Options) (*Show, hcl.Diagnostics) {
	l := newLoader(opts)
	l.show.Files = make(map[string][]byte, len(files))
	if len(files) > 0 {
		l.show.Dir = filepath.Dir(files[0].name)
	}
	for _, f := range files {
		l.show.Files[f.name] = f.data
	}
	for _, f := range files {
		l.parseFile(f)
	}
	l.checkTop(files)
	l.readVarValues()
	l.buildGraph()
	l.evaluate()
	if l.canvas < 0 {
		l.decodeCanvas(l.newDec(topBlock("canvas"), nil, &hcl.EvalContext{}, "", Attrs{}))
	}
	l.assemble()
	l.checkTimecodeStart()
	l.show.Hash = l.hash(files)
	for _, d := range l.diags {
		limitFromCall(d) // so that stoppedDiagnostic sees the limits' summaries
	}
	if d := l.stoppedDiagnostic(l.diags); d != nil {
		l.diags = append(l.diags, d)
	}
	return l.show, finishDiags(l.diags)
}

// finishDiags drops duplicates (a counted block reports a mistake once, not
// once per instance) and sorts by position.
func finishDiags(in hcl.Diagnostics) hcl.Diagnostics {
	type key struct {
		sev             hcl.DiagnosticSeverity
		summary, detail string
		file            string
		start, end      int
	}
	seen := make(map[key]bool, len(in))
	out := make(hcl.Diagnostics, 0, len(in))
	for _, d := range in {
		if !limitFromCall(d) {
			continue
		}
		k := key{sev: d.Severity, summary: d.Summary, detail: d.Detail}
		if d.Subject != nil {
			k.file, k.start, k.end = d.Subject.Filename, d.Subject.Start.Byte, d.Subject.End.Byte
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		indexHint(d)
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Subject, out[j].Subject
		if a == nil || b == nil {
			return a == nil && b != nil
		}
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
	return out
}

// hash is the hex SHA-256 over the show's files (base names and bytes, in
// name order) and the variable values in effect.
func (l *loader) hash(files []sourceFile) string {
	h := sha256.New()
	sorted := append([]sourceFile(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	for _, f := range sorted {
		fmt.Fprintf(h, "file %s %d\n", filepath.Base(f.name), len(f.data))
		h.Write(f.data)
	}
	for _, v := range l.varOrder {
		val := l.nodes[v].value
		var text []byte
		if val.IsWhollyKnown() {
			text, _ = ctyjson.Marshal(val, val.Type())
		}
		fmt.Fprintf(h, "var %s %s\n", l.nodes[v].name, text)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (l *loader) parseFile(f sourceFile) {
	body := l.parse(f.data, f.name)
	if body == nil {
		return
	}
	content, diags := body.Content(rootSchema)
	l.diags = append(l.diags, diags...)
	dir := filepath.Dir(f.name)
	for _, blk := range content.Blocks {
		l.declare(blk, dir)
	}
}

// parse parses a show or var file and guards its expressions (guard.go);
// nil when it cannot be parsed. Nesting is checked first: hcl's parser
// would overflow the stack on text nested too deep.
func (l *loader) parse(data []byte, name string) *hclsyntax.Body {
	if d := checkNesting(data, name, int(l.lim[limitNesting]), l.lim.numberTextMax()); d != nil {
		l.diags = append(l.diags, d)
		return nil
	}
	file, diags := hclsyntax.ParseConfig(data, name, hcl.InitialPos)
	l.diags = append(l.diags, diags...)
	if file == nil || file.Body == nil {
		return nil
	}
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	l.diags = append(l.diags, l.guardBody(body)...)
	return body
}

// errorf appends an error diagnostic.
func (l *loader) errorf(subject hcl.Range, summary, format string, args ...any) {
	r := subject
	l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: &r})
}

// warnf appends a warning diagnostic.
func (l *loader) warnf(subject hcl.Range, summary, format string, args ...any) {
	r := subject
	l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: &r})
}

func (l *loader) checkTop(files []sourceFile) {
	if l.showNode < 0 && !l.diags.HasErrors() {
		var r hcl.Range
		if len(files) > 0 {
			r = hcl.Range{Filename: files[0].name, Start: hcl.InitialPos, End: hcl.InitialPos}
		}
		l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing show block",
			Detail: "A show needs exactly one show block with name, size and frame_rate, e.g.\n  show {\n    name       = \"studio\"\n    size       = \"1920x1080\"\n    frame_rate = \"30\"\n  }", Subject: rangePtr(r)})
	}
}

func rangePtr(r hcl.Range) *hcl.Range {
	if r.Filename == "" {
		return nil
	}
	return &r
}

// valueOf returns a node's value by address ("source.cam") or DynamicVal.
func (l *loader) valueOf(key string) cty.Value {
	if i, ok := l.byKey[key]; ok && l.nodes[i].done {
		return l.nodes[i].value
	}
	return cty.DynamicVal
}
