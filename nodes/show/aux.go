package show

// Live AUX routing. An AUX bus whose show block lists routes may be
// switched on air to any of them, as a Program bus is switched between its
// scenes: the compiler gives its compositor the list (the "scenes" param:
// what it starts with, then its routes) and an edge from every source any
// of them draws. A routed source is held here as a view: a scene under the
// source's own address that draws the source over the whole canvas
// (contain), so the switcher, the transitions, the tally and the page
// treat a source and a scene alike.
//
// Every Program bus may also fade to black: BlackView, a scene of no
// layers at the end of its list (the page's FTB).

import (
	"fmt"
	"strings"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/plan"
)

// isSourceView reports whether an entry of a bus's list is a source
// drawn over the whole canvas rather than a scene.
func isSourceView(addr string) bool { return strings.HasPrefix(addr, "source.") }

// BlackView is what every Program bus may show besides its scenes: no
// layer, a black picture. It is in no bus's list (a list the plan holds,
// which onair apply grows): the switcher holds it as blackIndex, an index
// past every list, which the compositor draws as no layers.
const BlackView = "black"

const blackIndex = 1 << 30

// sceneAt is what index i of bs's switcher shows.
func (bs *BusState) sceneAt(i int) (string, bool) {
	if list := bs.Scenes(); i >= 0 && i < len(list) {
		return list[i], true
	}
	if i == blackIndex && bs.Kind == "program" {
		return BlackView, true
	}
	return "", false
}

// addViews puts a view of every source in bs's list into the show's scenes
// (once each), sized to the compositor n's canvas; it says which entry
// names no source of the plan.
func (b *State) addViews(n *plan.Node, bs *BusState) error {
	list := bs.Scenes()
	for _, addr := range list {
		if !isSourceView(addr) || b.scenes[addr] != nil {
			continue
		}
		if _, ok := b.sourceMap()[addr]; !ok {
			return fmt.Errorf("%s routes to %s, which the plan does not hold", n.ID, addr)
		}
		v, err := b.viewOf(n, addr)
		if err != nil {
			return err
		}
		b.scenes[addr] = v
	}
	return nil
}

// viewOf is the view of source src on the bus of compositor n: the source
// drawn over the whole canvas.
func (b *State) viewOf(n *plan.Node, src string) (*plan.Scene, error) {
	_, w, h, _, err := b.Video(n)
	if err != nil {
		return nil, err
	}
	return &plan.Scene{Address: src, Layers: []plan.Layer{{Source: src, Rect: [4]int{0, 0, w, h}, Fit: frame.Contain.String(), Opacity: 1}}}, nil
}

// routeAddress is what an operator names in a switch: a scene (with or
// without "scene."), or on an AUX bus a source (source.NAME[...]).
func routeAddress(s string) string {
	if isSourceView(s) || s == BlackView {
		return s
	}
	return withPrefix("scene.", s)
}

// FrameRate implements control.FrameRater: a transition may be given in
// frames of the show's rate.
func (s *Show[F]) FrameRate() (num, den int64) { return s.State.rate.Num, s.State.rate.Den }
