package compiler

import (
	"github.com/onairhq/onair/nodes"
	nodecpu "github.com/onairhq/onair/nodes/cpu"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
)

// The backends' lowerings the tests compile for, by name; gpu is the one
// most tests use (the seeds' chains).
var (
	targets = map[string]*nodes.Lowering{"cuda": &nodecuda.Lowering, "cpu": &nodecpu.Lowering}
	gpu     = targets["cuda"]
)
