package cli

import (
	"bytes"
	"github.com/onairhq/onair/internal/backends"
	"os"
	"testing"

	"github.com/onairhq/onair/nodes"
)

// TestNodeReferenceIsCurrent keeps docs/NODES.md equal to what `onair nodes
// -markdown` prints from the registry. Regenerate with
// `go run . nodes -markdown > docs/NODES.md`.
func TestNodeReferenceIsCurrent(t *testing.T) {
	var b bytes.Buffer
	if err := nodes.WriteReference(&b, true, backends.RunsOn); err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("docs/NODES.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Fatal("docs/NODES.md is out of date: run `go run . nodes -markdown > docs/NODES.md`")
	}
}
