package show

import (
	"fmt"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/plan"
)

// Params decodes node n's params into T, a struct whose fields are tagged
// `param:"name"`, with the defaults and ranges its kind declares in the
// registry (nodes.Decode). Every constructor reads its params this way, once.
func Params[T any](n *plan.Node) (T, error) {
	var t T
	if err := nodes.Decode(n.Kind, n.Params, &t); err != nil {
		return t, fmt.Errorf("node %s: %v", n.ID, err)
	}
	return t, nil
}

// Video reads the format, size and rate of a node's frames: the params
// format, size and frame_rate of the kinds that declare them, else what the
// plan says the node emits, else the show's.
func (b *State) Video(n *plan.Node) (frame.Format, int, int, frame.Rational, error) {
	f, sz, rate := b.plan.Format, b.plan.Size, b.plan.FrameRate
	if pf, ok := n.Format.Pixel(); ok { // not packets nor foreign buffers
		f = pf
	}
	if n.Size != (value.Size{}) {
		sz = n.Size
	}
	var err error
	if v := n.Params.String("format"); v != "" {
		if f, err = frame.ParseFormat(v); err != nil {
			return 0, 0, 0, frame.Rational{}, fmt.Errorf("node %s: %v", n.ID, err)
		}
	}
	if v := n.Params.String("size"); v != "" {
		if sz, err = value.ParseSize(v); err != nil {
			return 0, 0, 0, frame.Rational{}, fmt.Errorf("node %s: %v", n.ID, err)
		}
	}
	if v := n.Params.String("frame_rate"); v != "" {
		if rate, err = value.ParseRational(v); err != nil {
			return 0, 0, 0, frame.Rational{}, fmt.Errorf("node %s: frame_rate: %v", n.ID, err)
		}
	}
	return f, sz.W, sz.H, rate, nil
}
