// Package cuda is onair's GPU backend: device frames, uploads, the GPU
// compositor and downloads for the outputs, behind the interfaces of the
// shared show runtime in nodes/show, over the driver library in cuda/.
//
// It must never import lang/ or compiler/ (it runs saved plans).
package cuda

import (
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/runtime"
)

// Name is the CUDA backend's name in plans and on the command line.
const Name = "cuda"

// Lowering is the seeds' naive graph, what the compiler builds for the GPU
// before its fusion passes: file sources read by input_rec through a demux
// into NVDEC, raw files through the hwupload chain, browser windows
// imported, test patterns cut on the GPU from their art by
// test_pattern_cuda, live sources received and decoded on NVDEC by
// live_nvdec. Each chain is added by the file of its first node's
// constructor (nvdec.go, browser.go, live.go, testpattern.go).
var Lowering = nodes.Lowering{
	Backend: Name,
	Domain:  nodes.Device,
	Profile: "nvidia_l4", // the seeds' GPU
}

// constructor makes a node of one of the backend's own kinds, with the
// run's GPU state.
type constructor func(b *backend, st *show.State, n plan.Node, ctx *runtime.NodeContext[Frame]) (runtime.Node[Frame], error)

// kinds are the constructors of the kinds only the CUDA backend runs, added
// by the files that define them.
var kinds = nodes.Constructors[constructor]{}
