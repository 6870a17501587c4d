package compiler

import (
	"github.com/onairhq/onair/nodes"
	nodecpu "github.com/onairhq/onair/nodes/cpu"
	nodecuda "github.com/onairhq/onair/nodes/cuda"
)

// The backends' lowerings the tests compile for, by name; gpu is the one
// most tests use (the seeds' chains). "refusing" is a backend that cannot
// run browser sources or ffmpeg outputs, for the compiler's refusals.
var (
	targets = map[string]*nodes.Lowering{"cuda": &nodecuda.Lowering, "cpu": &nodecpu.Lowering, "refusing": refusing()}
	gpu     = targets["cuda"]
)

func refusing() *nodes.Lowering {
	l := nodecpu.Lowering
	l.Backend = "refusing"
	l.Chains = map[string]nodes.Chain{}
	for k, c := range nodecpu.Lowering.Chains {
		l.Chains[k] = c
	}
	l.Chains["browser"] = nodes.Chain{Refuse: "this backend cannot import a browser's buffers. Compile for another backend."}
	l.Chains["output.ffmpeg"] = nodes.Chain{Refuse: "this backend has no host pictures to pipe. Compile for another backend."}
	return &l
}
