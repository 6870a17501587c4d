package compiler

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onairhq/onair/nodes"
)

// TestNoKindNames: the compiler names no node kind. What a show element
// lowers to, and what a fusion makes of a node, the kinds declare in nodes/
// (Lower, From, Fuses) and the backend's lowering says (Chains); the passes
// and rules read those and the traits. A string literal in compiler/'s
// production code that is a kind's name, or a node id's "/kind" ending, or
// the "output_" prefix outputs were once named by, fails.
func TestNoKindNames(t *testing.T) {
	names := map[string]bool{}
	for _, k := range nodes.All() {
		names[k.Name] = true
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			_, tail, slash := strings.Cut(s, "/")
			if names[s] || slash && names[tail] || s == "output_" {
				t.Errorf("%s: %q names a node kind: ask nodes/ (the kind's Lower, From, Fuses, traits) or the backend's lowering", fset.Position(lit.Pos()), s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
