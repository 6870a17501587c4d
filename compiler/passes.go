package compiler

import "fmt"

// pass is one named step of the pipeline.
type pass struct {
	name string
	fn   func(*state)
	// stopOnError ends the compilation after this pass when it (or one
	// before) reported an error: later passes need its output to be sound.
	stopOnError bool
}

// passes is the whole compiler, in order. Parsing, resolving references and
// expanding count/for_each happen in lang.Load before Compile sees the show.
var passes = [...]pass{
	{name: "profile", fn: pickProfile, stopOnError: true}, // choose the capacity profile
	{name: "build", fn: build, stopOnError: true},         // the naive graph per source kind, buses and outputs
	{name: "check", fn: runChecks, stopOnError: true},     // rules over traits: order, routing, readiness, formats, queues
	{name: "fuse raw upload", fn: fuseRawUpload},          // the raw chain raw_upload picks
	{name: "fuse input routing", fn: fuseInputRouting},    // no demux for one-stream files (input_routing = "input")
	{name: "fuse decode loops", fn: fuseDecodeLoops},      // NVDEC decoders on a few decode loops (decoder_placement)
	{name: "fuse fan-out", fn: fuseFanOut},                // one_to_many → one_to_many_nb (source_fan_out = "event_loop")
	{name: "fuse frame metadata", fn: fuseFrameMetadata},  // prune timestamp keys nobody reads
	{name: "recheck", fn: runChecks, stopOnError: true},   // the fused graph must still pass every check
	{name: "place", fn: place},                            // loops and threads
	{name: "emit", fn: emit},                              // the plan: nodes, edges, loops, groups, fusions
	{name: "estimate", fn: estimate},                      // threads, VRAM, pinned memory, PCIe, NVDEC
	{name: "capacity", fn: runCapacity},                   // estimates against the profile
}

// passOrder lists ordering constraints between passes, each with its reason.
// init checks that the table keeps them.
var passOrder = [...]struct {
	a, b   string
	reason string
}{
	{"profile", "check", "the checks compare against the profile"},
	{"build", "check", "checks run over the built graph"},
	{"check", "fuse raw upload", "the naive graph must be sound before fusion rewrites it"},
	{"fuse raw upload", "fuse input routing", "direct and resident raw chains drop their demuxer with the rest of the stock chain; input routing then fuses only the chains that keep one"},
	{"fuse raw upload", "fuse fan-out", "fan-out fusion places the fan-out on its source's loop, whatever chain raw_upload left"},
	{"fuse input routing", "recheck", "the fused graph is rechecked"},
	{"fuse input routing", "fuse decode loops", "a reader left feeding its decoder directly fuses with it (the decoder kind's Fuses.WithReader)"},
	{"fuse decode loops", "fuse frame metadata", "a reader and decoder fused take the timestamp keys of both, then they are pruned"},
	{"fuse decode loops", "recheck", "the fused graph is rechecked"},
	{"fuse decode loops", "place", "placement keeps the decode loops the fusion chose"},
	{"fuse raw upload", "recheck", "the fused graph is rechecked"},
	{"fuse fan-out", "recheck", "the fused graph is rechecked"},
	{"fuse frame metadata", "recheck", "the fused graph is rechecked"},
	{"fuse fan-out", "place", "placement reads whether a fan-out is blocking"},
	{"place", "emit", "the plan records each node's placement"},
	{"emit", "estimate", "estimates are written into the plan"},
	{"estimate", "capacity", "the capacity check compares estimates with the profile"},
}

func init() {
	idx := map[string]int{}
	for i, p := range passes {
		if _, dup := idx[p.name]; dup {
			panic("compiler: pass listed twice: " + p.name)
		}
		idx[p.name] = i
	}
	for _, c := range passOrder {
		i, ok1 := idx[c.a]
		j, ok2 := idx[c.b]
		if !ok1 || !ok2 {
			panic(fmt.Sprintf("compiler: pass order names a missing pass: %s, %s", c.a, c.b))
		}
		if i >= j {
			panic(fmt.Sprintf("compiler: pass %q must run before %q: %s", c.a, c.b, c.reason))
		}
	}
}
