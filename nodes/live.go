package nodes

import (
	"fmt"
	"slices"

	"github.com/onairhq/onair/internal/value"
)

// Update is one change on air: the param of a running node that takes a
// new value. A diff of two plans yields them (compiler/diff's Live), the
// registry checks each (CheckLive), and the kind's live hook on the
// running show applies it (nodes/show).
type Update struct {
	Node    string `json:"node"`    // the node's id
	Address string `json:"address"` // the show element it was made for
	Kind    string `json:"kind"`
	Param   string `json:"param"`
	Value   any    `json:"value"`
}

// CheckLive says why param of a running node of kind k cannot change from
// old to new on air, or nil when it can: the kind must declare the param
// Live, the new value must pass the param's declaration (type, range), and
// a live list may only grow at its end (what a running node holds by index
// keeps its place). A value left out (nil) is the param's default.
func (k *Kind) CheckLive(param string, old, new any) error {
	p, ok := k.Param(param)
	switch {
	case !ok:
		return fmt.Errorf("%s has no param %s", k.Name, param)
	case !p.Live:
		return fmt.Errorf("%s.%s is not live: the node is re-created", k.Name, param)
	}
	old, new = normalize(old), normalize(new)
	if new == nil { // left out: the node takes the default
		if new = p.Default; new == nil {
			return nil // an optional param unset
		}
	}
	if err := p.Check(new); err != nil {
		return err
	}
	if p.Type == Strings && old != nil {
		was, _ := old.([]string)
		now, _ := new.([]string)
		if len(now) < len(was) || !slices.Equal(now[:len(was)], was) {
			return fmt.Errorf("%s.%s changes on air only by growing at its end", k.Name, param)
		}
	}
	return nil
}

// Value is param name of a node of kind k with params: its value, or the
// declared default when the params leave it out.
func (k *Kind) Value(params map[string]any, name string) any {
	if v, ok := params[name]; ok {
		return v
	}
	if p, ok := k.Param(name); ok {
		return p.Default
	}
	return nil
}

// normalize reads a value from a saved plan's JSON (float64, []any) as the
// compiler wrote it (int, []string).
func normalize(v any) any {
	if n, err := value.Normalize(v); err == nil {
		return n
	}
	return v
}

// LiveCanvas returns the live param a canvas setting reaches the show
// through (Param.Canvas), and its kind: a change of the setting is made on
// air as updates of that param. ok is false for a setting that feeds no
// live param.
func LiveCanvas(setting string) (k *Kind, p *Param, ok bool) {
	for _, k := range All() {
		for i := range k.Params {
			if p := &k.Params[i]; p.Live && slices.Contains(p.Canvas, setting) {
				return k, p, true
			}
		}
	}
	return nil, nil, false
}
