package diff_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onairhq/onair/compiler/diff"
)

// TestLiveAddStartsTheSourcesCreated: the added-source pair (a source and
// a layer of it on the Program bus) is live; what starts on air is the
// source's nodes whole, its group, the edges among its nodes, and its edge
// into the running compositor, and nothing of the plan on air. The
// rename-no-moved pair adds one source and removes another: the removal is
// refused, so nothing starts.
func TestLiveAddStartsTheSourcesCreated(t *testing.T) {
	old := compile(t, filepath.Join("testdata", "old.hcl"))
	lv := diff.Diff(old, compile(t, filepath.Join("testdata", "added-source", "new.hcl"))).Live
	if len(lv.Refused) > 0 {
		t.Fatalf("refused: %v", lv.Refused)
	}
	a := lv.Add
	if got := strings.Join(a.Sources(), " "); got != "source.slate" {
		t.Errorf("starts %s, want source.slate", got)
	}
	var ids, groups, edges []string
	for _, n := range a.Nodes {
		ids = append(ids, n.ID)
	}
	for _, g := range a.Groups {
		groups = append(groups, g.Name)
	}
	for _, e := range a.Edges {
		edges = append(edges, e.From+" -> "+e.To)
	}
	if len(ids) != 3 || !slices.Contains(ids, "source.slate/test_pattern_cuda") || !slices.Contains(ids, "source.slate/one_to_many_nb") {
		t.Errorf("nodes %v, want source.slate's three (test_pattern_cuda, realtime, one_to_many_nb)", ids)
	}
	if strings.Join(groups, " ") != "source.slate" {
		t.Errorf("groups %v", groups)
	}
	if !slices.Contains(edges, "source.slate/one_to_many_nb -> bus.pgm/compositor") || len(edges) != 3 {
		t.Errorf("edges %v, want its two inner edges and the one into bus.pgm", edges)
	}
	for _, e := range a.Edges {
		if !strings.HasPrefix(e.From, "source.slate/") {
			t.Errorf("edge %s -> %s starts from the plan on air", e.From, e.To)
		}
	}
	lv = diff.Diff(old, compile(t, filepath.Join("testdata", "rename-no-moved", "new.hcl"))).Live
	if len(lv.Refused) == 0 || len(lv.Add.Nodes) != 0 {
		t.Errorf("a source removed with one added: refused %v, starts %v", lv.Refused, lv.Add.Sources())
	}
}
