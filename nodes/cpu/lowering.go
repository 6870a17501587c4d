package cpu

import "github.com/onairhq/onair/nodes"

// Lowering is what the compiler builds for the CPU backend: every node in
// host memory, raw files read by raw_file_cpu, no uploads, browser sources
// received as shared memory and converted (nodes/browser); HEVC and H.264
// sources are refused with what to do instead.
var Lowering = nodes.Lowering{
	Backend: Name,
	Domain:  nodes.Host,
	Profile: "nvidia_l4", // the seeds' GPU: the same source limits as the show would have there
	Chains: map[string]nodes.Chain{
		"raw_file":     {Links: []nodes.Link{nodes.L("raw_file_cpu"), nodes.L("realtime"), nodes.L("one_to_many")}},
		"test_pattern": {Links: []nodes.Link{nodes.L("test_pattern"), nodes.L("realtime"), nodes.L("one_to_many")}},
		"browser":      {Links: []nodes.Link{nodes.L("ipc_dmabuf_source"), nodes.L("gpu_import"), nodes.L("smooth_timestamps"), nodes.L("one_to_many")}},
		"hevc_file":    {Refuse: "it is decoded on NVDEC; the cpu backend runs test_pattern, raw_file and browser sources only. Compile with -backend cuda, or use a raw_file source."},
		"h264_file":    {Refuse: "it is decoded on NVDEC; the cpu backend runs test_pattern, raw_file and browser sources only. Compile with -backend cuda, or use a raw_file source."},
	},
}
