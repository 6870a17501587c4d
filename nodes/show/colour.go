package show

import (
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/runtime"
)

// busColour is the colour tags of the bus feeding an output node: the
// show's colour, which its compositor stamps on every picture (BT.709,
// limited range, for a plan from before the show declared it).
func busColour[F Frame](b *State, ctx *runtime.NodeContext[F]) frame.Colour {
	if len(ctx.Inputs) != 1 {
		return frame.BT709
	}
	from, ok := b.nodeMap()[ctx.Inputs[0].Config().From]
	if !ok {
		return frame.BT709
	}
	prm, err := Params[compositorParams](from)
	if err != nil {
		return frame.BT709
	}
	return prm.Colour.Or(frame.BT709)
}
