package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/golden"
	"github.com/onairhq/onair/lang"
)

// A floor of onair's packages. A package may import the ground floor's
// packages, those on the floors its floor stands on, and those on its own
// floor when own is set; nothing else of onair's. A floor stands only on
// floors below it, so the data itself has no cycle, and two floors that
// neither stands on (the compiler and the runtime) never meet.
type floor struct {
	name string
	pkgs []string // import paths below the module's
	on   []string // the floors below it that it stands on, besides ground
	own  bool     // its packages may import each other
	doc  string
}

// floors are the layers of onair, lowest first: ARCHITECTURE.md's table is
// written from them (go test ./internal/cli -run TestFloors -update). Every
// package of the module stands on exactly one floor: a new one fails
// TestImportFloors until it is placed.
var floors = []floor{
	{name: "ground", pkgs: []string{"internal/value", "internal/files", "internal/bitstream", "internal/panics", "timecode", "tsl5", "metrics", "events", "showerr", "delivery", "audio"},
		doc: "import nothing of onair's; every floor may use them"},
	{name: "tests", pkgs: []string{"internal/golden", "internal/peer", "internal/testwait"},
		doc: "test support: no floor stands on it, so only tests import it"},
	{name: "language", pkgs: []string{"lang"}},
	{name: "contract", pkgs: []string{"plan"}, doc: "the plan every layer reads"},
	{name: "registry", pkgs: []string{"nodes"}, doc: "node kinds as data"},
	{name: "compiler", pkgs: []string{"compiler", "compiler/diff", "compiler/lint"}, on: []string{"language", "contract", "registry"}, own: true},
	{name: "syntax", pkgs: []string{"cuda/hevc", "nodes/media/es"}, doc: "bitstream syntax, pure Go"},
	{name: "frames", pkgs: []string{"frame"}},
	{name: "clock", pkgs: []string{"playout"}, doc: "a bus's tick grid, pure arithmetic"},
	{name: "runtime", pkgs: []string{"runtime"}, on: []string{"contract"}},
	{name: "producers", pkgs: []string{"nodes/media/ipc", "nodes/browser/chromium"}, own: true, doc: "the producer protocol and the browser that speaks it"},
	{name: "media", pkgs: []string{"nodes/media", "nodes/media/live"}, on: []string{"syntax", "frames"}},
	{name: "device", pkgs: []string{"cuda"}, on: []string{"syntax", "frames", "clock"}},
	{name: "control", pkgs: []string{"control"}, doc: "serves a show through interfaces, a plan as bytes"},
	{name: "show", pkgs: []string{"nodes/show"}, on: []string{"contract", "registry", "frames", "clock", "runtime", "producers", "media"}},
	{name: "browser", pkgs: []string{"nodes/browser"}, on: []string{"contract", "frames", "runtime", "producers", "show"}},
	{name: "cpu backend", pkgs: []string{"nodes/cpu"}, on: []string{"contract", "registry", "syntax", "frames", "clock", "runtime", "media", "show", "browser"}},
	{name: "cuda backend", pkgs: []string{"nodes/cuda"}, on: []string{"contract", "registry", "syntax", "frames", "clock", "runtime", "producers", "media", "device", "show", "browser"}},
	{name: "backend table", pkgs: []string{"internal/backends"}, on: []string{"contract", "registry", "show", "cpu backend", "cuda backend"}},
	{name: "measurement", pkgs: []string{"bench"}, on: []string{"contract", "registry", "runtime", "show", "browser"}, doc: "what onair bench measures of a running show"},
	{name: "cli", pkgs: []string{"internal/cli"}, on: []string{"language", "contract", "registry", "compiler", "frames", "runtime", "producers", "media", "device", "control", "show", "browser", "cuda backend", "backend table", "measurement"}},
	{name: "main", pkgs: []string{"."}, on: []string{"cli"}},
	{name: "test harness", pkgs: []string{"internal/showtest", "nodes/media/mediatest"}, on: []string{"language", "contract", "registry", "compiler", "frames", "runtime", "media", "show"},
		doc: "a show run on a fake backend, media's test doubles: no floor stands on it, so only tests import it"},
}

const module = "github.com/onairhq/onair"

// floorOf maps each package to its floor's index.
func floorOf(t *testing.T) map[string]int {
	t.Helper()
	at := map[string]int{}
	index := map[string]int{}
	for i, f := range floors {
		if _, dup := index[f.name]; dup {
			t.Errorf("floor %q is named twice", f.name)
		}
		index[f.name] = i
		for _, on := range f.on {
			if j, ok := index[on]; !ok || j >= i {
				t.Errorf("floor %q stands on %q, which is not a floor below it", f.name, on)
			}
		}
		for _, p := range f.pkgs {
			if j, dup := at[p]; dup {
				t.Errorf("%s is on floors %q and %q", p, floors[j].name, f.name)
			}
			at[p] = i
		}
	}
	return at
}

// may says whether a package on floor i may import one on floor j.
func may(i, j int) bool {
	return j == 0 || (i == j && floors[i].own) || slices.Contains(floors[i].on, floors[j].name)
}

func TestImportFloors(t *testing.T) {
	at := floorOf(t)
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return ".", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := rel(fields[0])
		if !ok {
			continue
		}
		seen[pkg] = true
		i, placed := at[pkg]
		if !placed {
			t.Errorf("%s stands on no floor: place it in arch_test.go's floors (and ARCHITECTURE.md, go test -run TestFloors -update)", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ours := rel(imp)
			if !ours {
				continue
			}
			if j, ok := at[dep]; ok && !may(i, j) {
				t.Errorf("%s (floor %q) imports %s (floor %q), a floor it does not stand on", pkg, floors[i].name, dep, floors[j].name)
			}
		}
	}
	for p := range at {
		if !seen[p] {
			t.Errorf("floors place %s, which is no package of the module", p)
		}
	}
}

// floorTable is ARCHITECTURE.md's table of the floors, top floor first.
func floorTable() string {
	var b strings.Builder
	b.WriteString("| floor | packages | may import, besides ground |\n| --- | --- | --- |\n")
	for i := len(floors) - 1; i >= 0; i-- {
		f := floors[i]
		on := strings.Join(f.on, ", ")
		if f.own {
			on = strings.TrimPrefix(on+", each other", ", ")
		}
		if i == 0 {
			on = "nothing of onair's"
		} else if on == "" {
			on = "nothing else"
		}
		name := f.name
		if f.doc != "" {
			name += " (" + f.doc + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, strings.Join(f.pkgs, ", "), on)
	}
	return b.String()
}

// TestFloors: ARCHITECTURE.md's table of floors is the one written from
// floors; -update rewrites it.
func TestFloors(t *testing.T) {
	const path = "ARCHITECTURE.md" // TestMain runs the tests at the repository root
	const begin, end = "<!-- floors: written by internal/cli/arch_test.go -->\n", "<!-- end of floors -->\n"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, b := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if a < 0 || b < a {
		t.Fatalf("%s has no table of floors between %q and %q", path, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	got := floorTable()
	if want := string(doc[a+len(begin) : b]); want != got {
		if golden.Updating() {
			doc = slices.Concat(doc[:a+len(begin)], []byte(got), doc[b:])
			if err := os.WriteFile(path, doc, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("ARCHITECTURE.md's floors differ from arch_test.go's (go test ./internal/cli -run TestFloors -update rewrites them):\n%s", golden.FirstDiff(want, got))
	}
}

// The show language's frame_metadata keys are the stamps frames carry:
// lang must not import frame, so the two lists are held together here.
func TestFrameMetadataKeysAgree(t *testing.T) {
	if fmt.Sprint(lang.FrameMetadataKeys) != fmt.Sprint(frame.StampKeys[:]) {
		t.Errorf("lang.FrameMetadataKeys %v, frame.StampKeys %v", lang.FrameMetadataKeys, frame.StampKeys)
	}
}
