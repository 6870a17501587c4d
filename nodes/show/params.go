package show

import (
	"fmt"
	"strings"

	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/nodes"
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

// ParseColour reads "primaries/transfer/matrix/range"; BT.709 when the tags
// are missing or malformed.
func ParseColour(s string) frame.Colour {
	p := strings.Split(s, "/")
	if len(p) != 4 {
		return frame.BT709
	}
	return frame.Colour{Primaries: p[0], Transfer: p[1], Matrix: p[2], Range: p[3]}
}

// Video reads the format, size and rate of a node's frames: the params
// format, size and frame_rate of the kinds that declare them, else what the
// plan says the node emits, else the show's.
func (b *State) Video(n *plan.Node) (frame.Format, int, int, frame.Rational, error) {
	or := func(key, def string) string {
		if v := n.Params.String(key); v != "" {
			return v
		}
		return def
	}
	format, size := b.plan.Format, b.plan.Size
	if n.Format == "nv12" || n.Format == "p010" {
		format = n.Format
	}
	if n.Size != "" {
		size = n.Size
	}
	f, err := frame.ParseFormat(or("format", format))
	if err != nil {
		return 0, 0, 0, frame.Rational{}, fmt.Errorf("node %s: %v", n.ID, err)
	}
	sz, err := value.ParseSize(or("size", size))
	if err != nil {
		return 0, 0, 0, frame.Rational{}, fmt.Errorf("node %s: %v", n.ID, err)
	}
	rate, err := value.ParseRational(or("frame_rate", b.plan.FrameRate))
	if err != nil {
		return 0, 0, 0, frame.Rational{}, fmt.Errorf("node %s: frame_rate: %v", n.ID, err)
	}
	return f, sz.W, sz.H, rate, nil
}
