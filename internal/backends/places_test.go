package backends

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onairhq/onair/internal/showtest"
	"github.com/onairhq/onair/lang"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/cpu"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
)

// TestEveryPlaceOfAnSRTSource: the places ARCHITECTURE.md lists for an
// srt source are where the code has it: the CPU backend's chain and its
// first node's constructor in one file, the CUDA backend's refusal in its
// lowering, the node kind in the registry. Moving any of them without the
// table (or the table without the code) fails here.
func TestEveryPlaceOfAnSRTSource(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	rel := func(file string) string {
		r, err := filepath.Rel(root, file)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	c, ok := cpu.Lowering.Chains["srt"]
	if !ok || len(c.Links) == 0 {
		t.Fatalf("the cpu backend has no chain for srt: %+v", c)
	}
	first := c.Links[0].Kind
	if _, ok := nodes.Lookup(first); !ok {
		t.Fatalf("srt's chain starts with %s, which the registry does not declare", first)
	}
	places := map[string]string{
		"the cpu chain":                   rel(cpu.Lowering.File("srt")),
		"the cpu constructor of " + first: rel(showtest.FileOf(cpu.Backend().Kinds[first])),
		"the cuda lowering":               rel(nodecuda.Lowering.File("srt")),
	}
	if places["the cpu chain"] != places["the cpu constructor of "+first] {
		t.Errorf("the cpu backend's srt is two files: %v", places)
	}
	if r := nodecuda.Lowering.Chains["srt"].Refuse; r == "" {
		t.Errorf("the cuda backend neither runs nor refuses srt")
	}
	if !slices.ContainsFunc(lang.Schema, func(b *lang.Block) bool { return b.Type == "source" && b.Kind == "srt" }) {
		t.Errorf("the show language has no source \"srt\" block")
	}
	doc, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(doc), "### Every place of one kind: an SRT source")
	table, _, _ = strings.Cut(table, "\n#")
	for what, file := range places {
		if !strings.Contains(table, "| `"+file+"` |") {
			t.Errorf("ARCHITECTURE.md's places of an srt source do not list %s (%s)", file, what)
		}
	}
	for _, file := range []string{"lang/schema.go", "nodes/kinds.go"} {
		if !strings.Contains(table, "| `"+file+"` |") {
			t.Errorf("ARCHITECTURE.md's places of an srt source do not list %s", file)
		}
	}
}
