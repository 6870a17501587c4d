package diff_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/onairhq/onair/compiler/diff"
	"github.com/onairhq/onair/internal/showtest"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
	"github.com/onairhq/onair/plan"
)

// showing is the scenes and buses of p that show the source at addr: a
// scene with a layer of it, a bus with a node fed by one of its nodes.
func showing(p *plan.Plan, addr string) []string {
	var out []string
	for _, s := range p.Scenes {
		if slices.ContainsFunc(s.Layers, func(l plan.Layer) bool { return l.Source == addr }) {
			out = append(out, s.Address)
		}
	}
	addrOf := map[string]string{}
	for _, n := range p.Nodes {
		addrOf[n.ID] = n.Address
	}
	for _, e := range p.Edges {
		if to := addrOf[e.To]; addrOf[e.From] == addr && strings.HasPrefix(to, "bus.") && !slices.Contains(out, to) {
			out = append(out, to)
		}
	}
	return out
}

// sources counts the sources p has nodes for.
func sources(p *plan.Plan) int {
	seen := map[string]bool{}
	for _, n := range p.Nodes {
		if strings.HasPrefix(n.Address, "source.") {
			seen[n.Address] = true
		}
	}
	return len(seen)
}

// TestOneSourceChangingKindIsOneChange: in the seeds' 192-source show
// (bench/seeds/seeds.hcl, whose sources scenes and buses reach by a stable
// key), turning one raw source into an HEVC source (n_hevc 105 → 106,
// n_raw 47 → 46: source s105) changes that source and what shows it, and
// nothing else: no other source moves, no scene or bus that does not show
// it changes.
func TestOneSourceChangingKindIsOneChange(t *testing.T) {
	old, _ := showtest.Compile(t, "../../bench/seeds/seeds.hcl", nil, &nodecuda.Lowering)
	new, _ := showtest.Compile(t, "../../bench/seeds/seeds.hcl", map[string]string{"n_hevc": "106", "n_raw": "46"}, &nodecuda.Lowering)
	if o, n := sources(old), sources(new); o != 192 || n != 192 {
		t.Fatalf("%d and %d sources, want 192", o, n)
	}
	const was, is = `source.vt["s105"]`, `source.cam["s105"]`
	want := map[string]diff.Action{was: diff.Delete, is: diff.Create}
	shows := append(showing(old, was), showing(new, is)...)
	if len(shows) < 3 {
		t.Fatalf("s105 is shown by %v: want its full scene, a quad and the program buses", shows)
	}
	r := diff.Diff(old, new)
	for _, c := range r.Changes {
		if a, ok := want[c.Address]; ok {
			if c.Action != a {
				t.Errorf("%s: %s, want %s", c.Address, c.Action, a)
			}
			delete(want, c.Address)
			continue
		}
		if !slices.Contains(shows, c.Address) {
			t.Errorf("%s changes (%s, %s) but does not show s105", c.Address, c.Action, c.Reason)
		}
	}
	for addr, a := range want {
		t.Errorf("%s: no change, want %s", addr, a)
	}
	if s := r.Summary; s.Create != 1 || s.Delete != 1 || s.Replace != 0 || s.Update > len(shows) {
		t.Errorf("summary %+v: want 1 create, 1 delete, no replace and at most %d updates (what shows s105)", s, len(shows))
	}
}
