package cpu

import (
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/show"
)

// raw_file_cpu reads a raw file into host frames with the shared runtime's
// reader (show.HostRawFile): on the CPU the frames it reads are the frames
// the compositor draws.
func init() {
	kinds.Add("raw_file_cpu", show.HostRawFile[Frame])
	Lowering.Lower("raw_file", nodes.Chain{Links: []nodes.Link{nodes.L("raw_file_cpu"), nodes.L("realtime"), nodes.L("one_to_many")}})
}
