package cpu

import (
	"testing"

	"github.com/onairhq/onair/internal/showtest"
)

// TestAKindIsOneFileHere: each chain the CPU backend lowers a source to is
// added by the file of its first node's constructor.
func TestAKindIsOneFileHere(t *testing.T) { showtest.OneFilePerKind(t, &Lowering, kinds) }
