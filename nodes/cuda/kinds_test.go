package cuda

import (
	"testing"

	"github.com/onairhq/onair/internal/showtest"
)

// TestAKindIsOneFileHere: each chain the CUDA backend lowers a source to
// is added by the file of its first node's constructor. It runs without a
// GPU: it reads the tables, it makes no node.
func TestAKindIsOneFileHere(t *testing.T) { showtest.OneFilePerKind(t, &Lowering, kinds) }
