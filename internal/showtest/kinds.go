package showtest

import (
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"testing"

	"github.com/onairhq/onair/nodes"
)

// FileOf is the source file that defines the function fn.
func FileOf(fn any) string {
	f := goruntime.FuncForPC(reflect.ValueOf(fn).Pointer())
	if f == nil {
		return ""
	}
	file, _ := f.FileLine(f.Entry())
	return file
}

// OneFilePerKind checks a backend's lowering against its constructors
// (issue 22: a kind's backend code is one file): every chain whose first
// node the backend constructs with a function of its own is added (nodes.Lowering.Lower) by the
// file that defines that constructor, and every constructor's kind is
// declared in the registry. A chain moved away from its constructor, or a
// constructor without a registry entry, fails here.
func OneFilePerKind[C any](t testing.TB, l *nodes.Lowering, kinds nodes.Constructors[C]) {
	t.Helper()
	if len(l.Chains) == 0 || len(kinds) == 0 {
		t.Fatalf("%s: no chains (%d) or no constructors (%d): the files' init did not run", l.Backend, len(l.Chains), len(kinds))
	}
	for source, c := range l.Chains {
		if len(c.Links) == 0 {
			continue // refused
		}
		mk, own := kinds[c.Links[0].Kind]
		if !own {
			continue // its first node is another package's (nodes/show, nodes/browser)
		}
		got, want := l.File(source), FileOf(mk)
		if filepath.Dir(got) != filepath.Dir(want) {
			continue // the backend adds another package's constructor (show.HostRawFile): that file is the kind's here
		}
		if got != want {
			t.Errorf("%s: the chain of %s is added in %s, its first node %s is constructed in %s: add the chain beside the constructor", l.Backend, source, got, c.Links[0].Kind, want)
		}
	}
	for kind := range kinds {
		if _, ok := nodes.Lookup(kind); !ok {
			t.Errorf("%s: a constructor for %s, which the registry does not declare", l.Backend, kind)
		}
	}
}
