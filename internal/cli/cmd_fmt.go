package cli

import (
	"bytes"
	"fmt"
	"github.com/onairhq/onair/internal/files"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/onairhq/onair/lang"
)

func init() {
	register(&command{
		name:    "fmt",
		summary: "Rewrite show files in the canonical format.",
		usage:   "[-check] [-diff] [-write=false] [-recursive] PATH... | -",
		run:     runFmt,
	})
}

// stdin is what `onair fmt -` reads (tests replace it).
var stdin io.Reader = os.Stdin

// maxStdinBytes bounds what `onair fmt -` reads: far more than any show.
const maxStdinBytes = 64 << 20

// fmtStdin formats the show on standard input to standard output, as
// gofmt does: with -check it prints nothing but "<standard input>" and
// exits 1 when the input is not formatted; with -diff it prints the diff.
func fmtStdin(stdout, stderr io.Writer, check, diff bool) int {
	const name = "<standard input>"
	src, err := io.ReadAll(io.LimitReader(stdin, maxStdinBytes+1))
	if err != nil {
		fmt.Fprintf(stderr, "onair fmt: reading standard input: %v\n", err)
		return 1
	}
	if len(src) > maxStdinBytes {
		fmt.Fprintf(stderr, "onair fmt: standard input is larger than %d MiB, more than any show; format the files instead\n", maxStdinBytes>>20)
		return 1
	}
	out, diags := formatShow(name, src)
	if diags.HasErrors() {
		lang.WriteDiagnostics(stderr, map[string][]byte{name: src}, diags, isTerminal(stderr))
		return 1
	}
	switch {
	case check || diff:
		if bytes.Equal(src, out) {
			return 0
		}
		if diff {
			io.WriteString(stdout, unifiedDiff(name, string(src), string(out)))
		} else {
			fmt.Fprintln(stdout, name)
		}
		if check {
			return 1
		}
		return 0
	}
	stdout.Write(out)
	return 0
}

func runFmt(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(commands["fmt"], stderr)
	check := fs.Bool("check", false, "write nothing; list the files that are not formatted and exit 1 if there are any")
	diff := fs.Bool("diff", false, "print the changes as a unified diff")
	write := fs.Bool("write", true, "rewrite files in place (ignored with -check)")
	recursive := fs.Bool("recursive", false, "also format .hcl files in subdirectories")
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	paths := fs.Args()
	if len(paths) == 1 && paths[0] == "-" {
		return fmtStdin(stdout, stderr, *check, *diff)
	}
	for _, p := range paths {
		if p == "-" {
			fmt.Fprintln(stderr, "onair fmt: - (standard input) cannot be mixed with paths: format one or the other")
			return 2
		}
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	names, err := fmtFiles(paths, *recursive)
	if err != nil {
		fmt.Fprintf(stderr, "onair fmt: %v\n", err)
		return 1
	}
	if len(names) == 0 {
		fmt.Fprintf(stderr, "onair fmt: no .hcl files in %s\n", strings.Join(paths, ", "))
		return 1
	}
	rc := 0
	for _, name := range names {
		src, d := lang.ReadFile(name)
		if d != nil {
			lang.WriteDiagnostics(stderr, nil, hcl.Diagnostics{d}, isTerminal(stderr))
			rc = 1
			continue
		}
		out, diags := formatShow(name, src)
		if diags.HasErrors() {
			lang.WriteDiagnostics(stderr, map[string][]byte{name: src}, diags, isTerminal(stderr))
			rc = 1
			continue
		}
		if bytes.Equal(src, out) {
			continue
		}
		fmt.Fprintln(stdout, name)
		if *diff {
			io.WriteString(stdout, unifiedDiff(name, string(src), string(out)))
		}
		if *check {
			rc = 1
			continue
		}
		if *write {
			// A temporary file renamed over the show, keeping its mode:
			// a full disk leaves the show as it was.
			if err := files.WriteAtomic(name, out, 0o644); err != nil {
				fmt.Fprintf(stderr, "onair fmt: %v\n", err)
				rc = 1
			}
		}
	}
	return rc
}

// formatShow returns the canonical form of one show file, or the syntax
// errors that keep it from being formatted.
func formatShow(name string, src []byte) ([]byte, hcl.Diagnostics) {
	if d := lang.CheckText(src, name); d != nil { // nesting the parser cannot take
		return nil, hcl.Diagnostics{d}
	}
	f, diags := hclwrite.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	out := hclwrite.Format(f.Bytes())
	// One trailing newline, no trailing blank lines.
	out = append(bytes.TrimRight(out, "\n"), '\n')
	return out, nil
}

// fmtFiles expands the command line into .hcl files, sorted, each once.
func fmtFiles(paths []string, recursive bool) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", p, err)
		}
		if !st.IsDir() {
			add(p)
			continue
		}
		if recursive {
			err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() && strings.HasSuffix(path, ".hcl") {
					add(path)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("cannot read directory %s: %w", p, err)
		}
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".hcl") {
				add(filepath.Join(p, e.Name()))
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// unifiedDiff renders the line differences between a and b with three lines
// of context, in the format of diff -u.
func unifiedDiff(name, a, b string) string {
	al, bl := splitLines(a), splitLines(b)
	ops := diffLines(al, bl)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s (formatted)\n", name, name)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: back up ctx lines, run until ctx*2 equal lines in a row.
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := 0
			for end+run < len(ops) && ops[end+run].kind == ' ' {
				run++
			}
			if end+run == len(ops) || run > 2*ctx {
				end += min(run, ctx)
				break
			}
			end += run
		}
		aStart, bStart, aN, bN := ops[start].ai+1, ops[start].bi+1, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aN++
			}
			if op.kind != '-' {
				bN++
			}
		}
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", aStart, aN, bStart, bN)
		for _, op := range ops[start:end] {
			sb.WriteByte(op.kind)
			sb.WriteString(op.text)
			sb.WriteByte('\n')
		}
		i = end
	}
	return sb.String()
}

type diffOp struct {
	kind   byte // ' ', '-', '+'
	text   string
	ai, bi int // line index in a and b where this op stands
}

// diffLines is a longest-common-subsequence line diff. Show files are small;
// past a size where the table would be large it reports a whole replacement.
func diffLines(a, b []string) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > 25_000_000 {
		for i, l := range a {
			ops = append(ops, diffOp{'-', l, i, 0})
		}
		for j, l := range b {
			ops = append(ops, diffOp{'+', l, len(a), j})
		}
		return ops
	}
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		default:
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		}
	}
	return ops
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
