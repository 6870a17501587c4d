package lang

import (
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Canvas keys an earlier onair read, still read today, and those it no
// longer reads, with what to write instead.

// removedCanvasKeys says, for a canvas key an earlier onair read and this
// one refuses, what replaced it: canvas tally_tsl5 and tally_tsl5_screen
// became tally blocks.
func removedCanvasKeys(diags hcl.Diagnostics) hcl.Diagnostics {
	for _, d := range diags {
		if d.Summary == "Unsupported argument" && (strings.Contains(d.Detail, `"tally_tsl5"`) || strings.Contains(d.Detail, `"tally_tsl5_screen"`)) {
			d.Detail = "canvas tally_tsl5 and tally_tsl5_screen became tally blocks, one for each destination: tally \"tsl5\" \"NAME\" { ... } with address, port, transport (udp or tcp) and screen (docs/REFERENCE.md). Move each destination into one and remove these keys."
		}
	}
	return diags
}

// earlierRingSize is browser_frame_queue's earlier spelling. The seeds'
// mixer called it browser_ring_size and let it go past 9; a window never
// has more than nine frames out, so a larger value means 9.
const earlierRingSize = "browser_ring_size"

// earlierCanvasKeys turns keys of the earlier spelling into today's: the
// plan carries only today's (a show written either way compiles to the
// same plan), and lint says which to write.
func (l *loader) earlierCanvasKeys(d *dec) {
	c := &l.show.Canvas
	ring, written := c.Settings[earlierRingSize].(int)
	delete(c.Settings, earlierRingSize)
	if !c.Attrs.Has(earlierRingSize) || !written {
		return
	}
	if c.Attrs.Has("browser_frame_queue") {
		l.errorf(c.Attrs[earlierRingSize], "Conflicting canvas keys",
			"canvas sets both browser_frame_queue and browser_ring_size, its earlier spelling; remove browser_ring_size.")
		return
	}
	if ring > 9 {
		ring = 9
	}
	c.Settings["browser_frame_queue"] = ring
}
