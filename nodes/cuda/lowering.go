// Package cuda is onair's GPU backend: device frames, uploads, the GPU
// compositor and downloads for the outputs, behind the interfaces of the
// shared show runtime in nodes/show, over the driver library in cuda/.
//
// It must never import lang/ or compiler/ (it runs saved plans).
package cuda

import "github.com/onairhq/onair/nodes"

// Name is the CUDA backend's name in plans and on the command line.
const Name = "cuda"

// Lowering is the seeds' naive graph, what the compiler builds for the GPU
// before its fusion passes: file sources read by input_rec through a demux
// into NVDEC, raw files through the hwupload chain, browser windows
// imported, test patterns uploaded through a page-locked block, live
// sources received and decoded on NVDEC by live_nvdec.
var Lowering = nodes.Lowering{
	Backend: Name,
	Domain:  nodes.Device,
	Profile: "nvidia_l4", // the seeds' GPU
	Chains: map[string]nodes.Chain{
		"hevc_file": {Links: fileChain},
		"h264_file": {Links: fileChain},
		"raw_file": {Links: []nodes.Link{
			nodes.L("input_rec", "streams", 1), nodes.L("demux", "streams", 1), {Kind: "dec_video", Params: map[string]any{"mode": "rawvideo"}, Host: true},
			nodes.L("upload", "mode", "hwupload"), nodes.L("realtime"), nodes.L("one_to_many"),
		}},
		"browser":      {Links: []nodes.Link{nodes.L("ipc_dmabuf_source"), nodes.L("gpu_import", "convert_on", "loop"), nodes.L("smooth_timestamps"), nodes.L("one_to_many")}},
		"srt":          {Links: liveChain("srt")},
		"udp":          {Links: liveChain("udp")},
		"stream":       {Links: liveChain("stream")},
		"rtmp":         {Links: liveChain("rtmp")},
		"test_pattern": {Links: []nodes.Link{nodes.L("test_pattern"), nodes.L("upload", "mode", "pinned"), nodes.L("realtime"), nodes.L("one_to_many")}},
	},
}

var fileChain = []nodes.Link{
	nodes.L("input_rec"), nodes.L("demux"), nodes.L("dec_video", "mode", "nvdec"), nodes.L("realtime"), nodes.L("one_to_many"),
}

// liveChain is a live source's: received, split into access units and
// decoded on NVDEC by live_nvdec (on a decode loop), whose newest picture
// the pacer releases on the show's clock.
func liveChain(transport string) []nodes.Link {
	return []nodes.Link{nodes.L("live_nvdec", "transport", transport), nodes.L("realtime"), nodes.L("one_to_many")}
}
