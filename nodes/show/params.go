package show

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/frame"
)

// parseRate reads "30" or "30000/1001".
func parseRate(s string) (frame.Rational, error) {
	num, den := s, "1"
	if i := strings.IndexByte(s, '/'); i >= 0 {
		num, den = s[:i], s[i+1:]
	}
	n, err1 := strconv.ParseInt(num, 10, 64)
	d, err2 := strconv.ParseInt(den, 10, 64)
	if err1 != nil || err2 != nil || n <= 0 || d <= 0 {
		return frame.Rational{}, fmt.Errorf("want a positive whole number or fraction such as 30 or 30000/1001")
	}
	return frame.Rational{Num: n, Den: d}, nil
}

// parseSize reads "1920x1080".
func parseSize(s string) (int, int, error) {
	w, h, ok := strings.Cut(s, "x")
	W, err1 := strconv.Atoi(w)
	H, err2 := strconv.Atoi(h)
	if !ok || err1 != nil || err2 != nil || W <= 0 || H <= 0 {
		return 0, 0, fmt.Errorf("size %q: want WIDTHxHEIGHT such as 1920x1080", s)
	}
	return W, H, nil
}

// ParseColour reads "primaries/transfer/matrix/range".
func ParseColour(s string) frame.Colour {
	p := strings.Split(s, "/")
	if len(p) != 4 {
		return frame.BT709
	}
	return frame.Colour{Primaries: p[0], Transfer: p[1], Matrix: p[2], Range: p[3]}
}

func ParamString(n *plan.Node, key, def string) string {
	switch v := n.Params[key].(type) {
	case string:
		return v
	case nil:
		return def
	default:
		return fmt.Sprint(v)
	}
}

// Video reads the format, size and rate a node's frames have, with
// the show's as defaults.
func (b *State) Video(n *plan.Node) (frame.Format, int, int, frame.Rational, error) {
	f, err := frame.ParseFormat(ParamString(n, "format", b.plan.Format))
	if err != nil {
		return 0, 0, 0, frame.Rational{}, fmt.Errorf("node %s: %v", n.ID, err)
	}
	w, h, err := parseSize(ParamString(n, "size", b.plan.Size))
	if err != nil {
		return 0, 0, 0, frame.Rational{}, fmt.Errorf("node %s: %v", n.ID, err)
	}
	rate, err := parseRate(ParamString(n, "frame_rate", b.plan.FrameRate))
	if err != nil {
		return 0, 0, 0, frame.Rational{}, fmt.Errorf("node %s: frame_rate: %v", n.ID, err)
	}
	return f, w, h, rate, nil
}
