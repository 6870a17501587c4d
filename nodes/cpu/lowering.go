package cpu

import "github.com/onairhq/onair/nodes"

// Lowering is what the compiler builds for the CPU backend: every node in
// host memory, raw files read by raw_file_cpu, no uploads, browser sources
// received as shared memory and converted (nodes/browser), HEVC and H.264
// files decoded by ffmpeg_decode.
var Lowering = nodes.Lowering{
	Backend: Name,
	Domain:  nodes.Host,
	Profile: "cpu", // the host's CPU: compiler.HostProfile fills in its cores and memory
	Chains: map[string]nodes.Chain{
		"raw_file":     {Links: []nodes.Link{nodes.L("raw_file_cpu"), nodes.L("realtime"), nodes.L("one_to_many")}},
		"test_pattern": {Links: []nodes.Link{nodes.L("test_pattern"), nodes.L("realtime"), nodes.L("one_to_many")}},
		"browser":      {Links: []nodes.Link{nodes.L("ipc_dmabuf_source"), nodes.L("gpu_import"), nodes.L("smooth_timestamps"), nodes.L("one_to_many")}},
		"hevc_file":    {Links: []nodes.Link{nodes.L("ffmpeg_decode"), nodes.L("realtime"), nodes.L("one_to_many")}},
		"h264_file":    {Links: []nodes.Link{nodes.L("ffmpeg_decode"), nodes.L("realtime"), nodes.L("one_to_many")}},
		"srt":          {Links: liveChain("srt")},
		"udp":          {Links: liveChain("udp")},
		"stream":       {Links: liveChain("stream")},
		"rtmp":         {Links: liveChain("rtmp")},
	},
}

// liveChain is a live source's: received and decoded by live_decode, whose
// newest frame the pacer releases on the show's clock (the frame
// synchroniser: drops at the decoder's edge, repeats as the pacer's
// underruns).
func liveChain(transport string) []nodes.Link {
	return []nodes.Link{nodes.L("live_decode", "transport", transport), nodes.L("realtime"), nodes.L("one_to_many")}
}
