package lang

import (
	"bytes"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Nesting is checked on the raw bytes, before the HCL parser sees them.
//
// hcl's parser and evaluator recurse once per level of nesting, and Go
// cannot recover from a stack overflow: 70,000 nested parentheses crash
// the process. checkNesting scans the text the way hcl's scanner does
// (strings, heredocs, comments and template interpolations are told apart
// as hcl tells them apart) without building tokens, and refuses the text
// at the first place it nests deeper than the limit.
//
// What counts as a level is what makes hcl recurse: each open parenthesis,
// bracket, brace, template string, template interpolation and %{if}/%{for}
// directive, and each operator chained onto an expression (a ? b : c ? ...,
// !!!x, 1+1+1...: hcl's parser or evaluator recurses once per operator).
// A comma, or a newline between the attributes of a body or an object, ends
// a chain. The count may exceed hcl's true depth on odd text (a closing
// bracket that does not match its opener closes nothing here), never fall
// short of it: real shows nest a few levels and are far from the limit.

// nestFrame is one open level: a bracket, a template or an interpolation.
type nestFrame struct {
	kind   byte   // '(' '[' '{' bracket; 'i' interpolation; '"' string; 'h' heredoc; 0 the top level
	ops    int    // operators chained at this level since the last comma or newline
	dirs   int    // open %{if} / %{for} directives of a template
	marker []byte // a heredoc's closing marker
}

// nestScanner walks one text.
type nestScanner struct {
	src      []byte
	filename string
	max      int // nesting limit
	maxNum   int // longest number literal, in characters

	frames    []nestFrame
	depth     int   // levels open now: frames (but the top level), ops and directives
	braces    int   // hcl's brace count, which decides where an interpolation ends
	retBraces []int // brace counts at which open interpolations end
	lineStart bool  // in a heredoc: at the start of a line
	closed    bool  // the last token was a closing bracket (a[x][y] chains)
	line      int   // line of i, and the byte its line starts at, for positions
	lineByte  int
}

// CheckText refuses HCL text that hcl's parser cannot be given safely:
// text nested deeper than the nesting_depth limit (the parser would
// overflow the stack and crash the process) or holding a number literal
// longer than number_digits allows. Load checks every file and value it
// parses; a tool that parses show text itself (onair fmt, through
// hclwrite) must call it first. nil when the text is fine.
func CheckText(src []byte, filename string) *hcl.Diagnostic {
	return checkNesting(src, filename, int(limitValues[limitNesting]), 2*int(limitValues[limitNumber])+16)
}

// checkNesting returns an error diagnostic at the first place where src,
// HCL text (a file, or one expression), nests deeper than maxDepth or holds
// a number literal longer than maxNum characters; nil when it does not.
// filename names the text in the diagnostic.
func checkNesting(src []byte, filename string, maxDepth, maxNum int) *hcl.Diagnostic {
	s := &nestScanner{src: src, filename: filename, max: maxDepth, maxNum: maxNum, frames: []nestFrame{{}}, line: 1}
	return s.scan()
}

func (s *nestScanner) top() *nestFrame { return &s.frames[len(s.frames)-1] }

// at is the source position of byte i, on the current line.
func (s *nestScanner) at(i int) hcl.Pos {
	return hcl.Pos{Line: s.line, Column: utf8.RuneCount(s.src[s.lineByte:i]) + 1, Byte: i}
}

func (s *nestScanner) tooDeep(i, n int) *hcl.Diagnostic {
	p := s.at(i)
	end := p
	end.Column += n
	end.Byte += n
	lim := limitTable[limitNesting]
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: lim.Summary,
		Detail:  fmt.Sprintf("Brackets, braces, parentheses, templates, interpolations and chained operators nest more than %d deep here (the %s limit). %s", s.max, lim.Name, lim.Advice),
		Subject: &hcl.Range{Filename: s.filename, Start: p, End: end}}
}

// push opens a level at byte i (n bytes long).
func (s *nestScanner) push(f nestFrame, i, n int) *hcl.Diagnostic {
	s.frames = append(s.frames, f)
	s.depth++
	if s.depth > s.max {
		return s.tooDeep(i, n)
	}
	return nil
}

// pop closes the innermost level, with what it held.
func (s *nestScanner) pop() {
	f := s.top()
	s.depth -= 1 + f.ops + f.dirs
	s.frames = s.frames[:len(s.frames)-1]
}

// op counts one more operator chained at the current level.
func (s *nestScanner) op(i, n int) *hcl.Diagnostic {
	s.top().ops++
	s.depth++
	if s.depth > s.max {
		return s.tooDeep(i, n)
	}
	return nil
}

// endChain ends the current level's operator chain (a comma; a newline in
// a body or an object).
func (s *nestScanner) endChain() {
	f := s.top()
	s.depth -= f.ops
	f.ops = 0
}

func (s *nestScanner) newline(i int) {
	s.line++
	s.lineByte = i + 1
}

func (s *nestScanner) scan() *hcl.Diagnostic {
	src := s.src
	for i := 0; i < len(src); {
		var d *hcl.Diagnostic
		switch s.top().kind {
		case '"':
			i, d = s.stringByte(i)
		case 'h':
			i, d = s.heredocByte(i)
		default:
			i, d = s.codeByte(i)
		}
		if d != nil {
			return d
		}
	}
	return nil
}

// interp opens a template interpolation or directive at i ("${" or "%{",
// with an optional "~") and returns the byte after it.
func (s *nestScanner) interp(i int) (int, *hcl.Diagnostic) {
	n := 2
	if i+2 < len(s.src) && s.src[i+2] == '~' {
		n = 3
	}
	if s.src[i] == '%' {
		// A directive: %{if} and %{for} open a level that %{endif} and
		// %{endfor} close; %{else} neither.
		tmpl := s.top()
		switch directive(s.src[i+n:]) {
		case "end":
			if tmpl.dirs > 0 {
				tmpl.dirs--
				s.depth--
			}
		case "else":
		default:
			tmpl.dirs++
			s.depth++
			if s.depth > s.max {
				return 0, s.tooDeep(i, n)
			}
		}
	}
	s.braces++
	s.retBraces = append(s.retBraces, s.braces)
	s.lineStart = false
	return i + n, s.push(nestFrame{kind: 'i'}, i, n)
}

// directive classifies the text after "%{": "end" for a well-formed
// endif or endfor, "else" for a well-formed else, "" for anything else.
func directive(b []byte) string {
	b = bytes.TrimLeft(b, " \t")
	word := b
	for j, c := range b {
		if !(c >= 'a' && c <= 'z') {
			word = b[:j]
			break
		}
	}
	rest := bytes.TrimLeft(b[len(word):], " \t")
	rest = bytes.TrimPrefix(rest, []byte("~"))
	if len(rest) == 0 || rest[0] != '}' {
		return ""
	}
	switch string(word) {
	case "endif", "endfor":
		return "end"
	case "else":
		return "else"
	}
	return ""
}

// templateByte handles what strings and heredocs share: "$${" and "%%{"
// are literal, "${" and "%{" open an interpolation. ok is false for any
// other byte.
func (s *nestScanner) templateByte(i int) (int, bool, *hcl.Diagnostic) {
	src := s.src
	c := src[i]
	if c != '$' && c != '%' {
		return i, false, nil
	}
	if i+1 < len(src) && src[i+1] == '{' {
		j, d := s.interp(i)
		return j, true, d
	}
	if i+2 < len(src) && src[i+1] == c && src[i+2] == '{' {
		return i + 3, true, nil
	}
	return i + 1, true, nil
}

// stringByte scans inside a quoted template string. A newline does not end
// it (hcl reports it and stays in the string); a quote does.
func (s *nestScanner) stringByte(i int) (int, *hcl.Diagnostic) {
	src := s.src
	if j, ok, d := s.templateByte(i); ok {
		return j, d
	}
	switch src[i] {
	case '"':
		s.pop()
		return i + 1, nil
	case '\\':
		if i+1 < len(src) && src[i+1] != '\n' && src[i+1] != '\r' {
			_, n := utf8.DecodeRune(src[i+1:])
			return i + 1 + n, nil
		}
	case '\n':
		s.newline(i)
	}
	return i + 1, nil
}

// heredocByte scans inside a heredoc: a line that is only its marker
// (and spaces) ends it.
func (s *nestScanner) heredocByte(i int) (int, *hcl.Diagnostic) {
	src := s.src
	if s.lineStart {
		s.lineStart = false
		if eol := bytes.IndexByte(src[i:], '\n'); eol >= 0 {
			if bytes.Equal(bytes.TrimSpace(src[i:i+eol]), s.top().marker) {
				s.pop()
				return i + eol, nil // the newline ends the attribute
			}
		}
	}
	if j, ok, d := s.templateByte(i); ok {
		return j, d
	}
	if src[i] == '\n' {
		s.newline(i)
		s.lineStart = true
	}
	return i + 1, nil
}

// codeByte scans expressions and bodies.
func (s *nestScanner) codeByte(i int) (int, *hcl.Diagnostic) {
	c := s.src[i]
	if c == ' ' || c == '\t' || c == '\r' {
		return i + 1, nil
	}
	closed := s.closed
	s.closed = false
	if c == '\n' || c == '#' || c == '/' && i+1 < len(s.src) && (s.src[i+1] == '/' || s.src[i+1] == '*') {
		s.closed = closed // a chain of brackets goes on across lines and comments
	}
	return s.code(i, closed)
}

func (s *nestScanner) code(i int, closed bool) (int, *hcl.Diagnostic) {
	src := s.src
	c := src[i]
	next := byte(0)
	if i+1 < len(src) {
		next = src[i+1]
	}
	switch {
	case c == '\n':
		if k := s.top().kind; k == 0 || k == '{' {
			s.endChain()
		}
		s.newline(i)
		return i + 1, nil
	case c == '#' || (c == '/' && next == '/'):
		for i < len(src) && src[i] != '\n' {
			i++
		}
		return i, nil // the newline is seen as one
	case c == '/' && next == '*':
		if end := bytes.Index(src[i+2:], []byte("*/")); end >= 0 {
			stop := i + 2 + end + 2
			for j := i; j < stop; j++ {
				if src[j] == '\n' {
					s.newline(j)
				}
			}
			return stop, nil
		}
		// hcl reads an unterminated /* as the operators / and *.
		s.closed = false
		return i + 1, s.op(i, 1)
	case c == '"':
		return i + 1, s.push(nestFrame{kind: '"'}, i, 1)
	case c == '<' && next == '<':
		if marker, n := heredocIntro(src[i:]); n > 0 {
			s.lineStart = true
			d := s.push(nestFrame{kind: 'h', marker: marker}, i, 2)
			s.newline(i + n - 1)
			return i + n, d
		}
		if d := s.op(i, 1); d != nil {
			return 0, d
		}
		return i + 2, s.op(i, 2)
	case c == '(' || c == '[' || c == '{':
		if c == '{' {
			s.braces++
		}
		// An opener right after a closer chains onto the expression
		// before it: a[x][y][z] nests as deep as its brackets together.
		if closed {
			if d := s.op(i, 1); d != nil {
				return 0, d
			}
		}
		return i + 1, s.push(nestFrame{kind: c}, i, 1)
	case c == '}' || (c == '~' && next == '}'):
		n := 1
		if c == '~' {
			n = 2
		}
		if len(s.retBraces) > 0 && s.retBraces[len(s.retBraces)-1] == s.braces {
			// The end of an interpolation: back to its template, closing
			// whatever was left open inside it.
			s.braces--
			s.retBraces = s.retBraces[:len(s.retBraces)-1]
			for len(s.frames) > 1 && s.top().kind != 'i' {
				s.pop()
			}
			if len(s.frames) > 1 {
				s.pop()
			}
			return i + n, nil
		}
		s.braces--
		if s.top().kind == '{' {
			s.pop()
			s.closed = true
		}
		return i + n, nil
	case c == ')' || c == ']':
		open := byte('(')
		if c == ']' {
			open = '['
		}
		if s.top().kind == open {
			s.pop()
			s.closed = true
		}
		return i + 1, nil
	case c == ',':
		s.endChain()
		return i + 1, nil
	case c >= '0' && c <= '9':
		n := numberLen(src[i:])
		if n > s.maxNum {
			p := s.at(i)
			end := p
			end.Column += n
			end.Byte += n
			lim := limitTable[limitNumber]
			return 0, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Number too long",
				Detail:  fmt.Sprintf("This number is written with %d characters; at most %d are allowed (the %s limit). %s", n, s.maxNum, lim.Name, lim.Advice),
				Subject: &hcl.Range{Filename: s.filename, Start: p, End: end}}
		}
		return i + n, nil
	case isIdentByte(c):
		j := i + 1
		for j < len(src) && (isIdentByte(src[j]) || (src[j] >= '0' && src[j] <= '9') || src[j] == '-') {
			j++
		}
		return j, nil
	case c >= 0x80:
		r, n := utf8.DecodeRune(src[i:])
		if !identRune(r) {
			return i + n, nil
		}
		j := i + n
		for j < len(src) {
			if b := src[j]; b < 0x80 {
				if !(isIdentByte(b) || (b >= '0' && b <= '9') || b == '-') {
					break
				}
				j++
				continue
			}
			r, n := utf8.DecodeRune(src[j:])
			if !identRune(r) {
				break
			}
			j += n
		}
		return j, nil
	}
	// Operators: each chains one more step onto the expression.
	two := string([]byte{c, next})
	switch two {
	case "==", "!=", "<=", ">=", "&&", "||":
		return i + 2, s.op(i, 2)
	case "=>":
		return i + 2, nil
	}
	switch c {
	case '!', '-', '+', '*', '/', '%', '<', '>', '?':
		return i + 1, s.op(i, 1)
	}
	return i + 1, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func identRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Pc, unicode.Nl))
}

// numberLen is the length of the number literal at the start of b, as
// hcl's scanner reads it: digits, points, and exponents (e+5).
func numberLen(b []byte) int {
	n := 0
	for n < len(b) {
		c := b[n]
		switch {
		case c >= '0' && c <= '9', c == '.':
			n++
		case (c == 'e' || c == 'E') && n+1 < len(b):
			k := n + 1
			if b[k] == '+' || b[k] == '-' {
				k++
			}
			if k < len(b) && b[k] >= '0' && b[k] <= '9' {
				n = k + 1
				continue
			}
			return n
		default:
			return n
		}
	}
	return n
}

// heredocIntro reports whether b starts a heredoc (<<MARKER or <<-MARKER
// then a newline) and returns its marker and the intro's length, newline
// included. hcl's own scanner decides, on the intro's line alone.
func heredocIntro(b []byte) ([]byte, int) {
	j := 2
	if j < len(b) && b[j] == '-' {
		j++
	}
	k := j
	for k < len(b) && b[k] != '\n' && b[k] != '\r' && b[k] != ' ' && b[k] != '\t' {
		k++
	}
	end := k
	if end < len(b) && b[end] == '\r' {
		end++
	}
	if k == j || end >= len(b) || b[end] != '\n' {
		return nil, 0
	}
	line := b[:end+1]
	toks, _ := hclsyntax.LexConfig(line, "", hcl.InitialPos)
	if len(toks) == 0 || toks[0].Type != hclsyntax.TokenOHeredoc {
		return nil, 0
	}
	return b[j:k], end + 1
}
