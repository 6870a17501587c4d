package cpu

import (
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/show"
)

// Lowering is what the compiler builds for the CPU backend: every node in
// host memory, raw files read by raw_file_cpu, no uploads, browser sources
// received as shared memory and converted (nodes/browser), HEVC and H.264
// files decoded by ffmpeg_decode. Each chain is added by the file of its
// first node's constructor (decode.go, live.go, rawfile.go); this file
// adds those whose first node another package constructs.
var Lowering = nodes.Lowering{
	Backend: Name,
	Domain:  nodes.Host,
	Profile: "cpu", // the host's CPU: compiler.HostProfile fills in its cores and memory
}

// kinds are the constructors of the kinds only the CPU backend runs, added
// by the files that define them.
var kinds = nodes.Constructors[show.Constructor[Frame]]{}

func init() {
	// test_pattern is the shared runtime's (nodes/show); the browser kinds
	// are nodes/browser's.
	Lowering.Lower("test_pattern", nodes.Chain{Links: []nodes.Link{nodes.L("test_pattern"), nodes.L("realtime"), nodes.L("one_to_many")}})
	Lowering.Lower("browser", nodes.Chain{Links: []nodes.Link{nodes.L("ipc_dmabuf_source"), nodes.L("gpu_import"), nodes.L("smooth_timestamps"), nodes.L("one_to_many")}})
}
