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
// imported, test patterns uploaded through a page-locked block. Each chain
// is added by the file of its first node's constructor (nvdec.go,
// browser.go); this file adds the test pattern's, whose first node is the
// shared runtime's, and the kinds the backend refuses.
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

func init() {
	Lowering.Lower("test_pattern", nodes.Chain{Links: []nodes.Link{nodes.L("test_pattern"), nodes.L("upload", "mode", "pinned"), nodes.L("realtime"), nodes.L("one_to_many")}})
	for _, source := range []string{"srt", "udp", "stream", "rtmp"} {
		Lowering.Lower(source, nodes.Chain{Refuse: liveRefusal})
	}
}

// liveRefusal: the live kinds are received and decoded on the CPU backend
// so far (live_decode); their NVDEC chain is not written yet.
const liveRefusal = "live sources (srt, udp, stream, rtmp) run on the cpu backend only so far: run the show with -backend cpu, or feed the GPU files"
