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

	"github.com/onairhq/onair/compiler/plan"
	"github.com/onairhq/onair/frame"
)

// isSourceView reports whether an entry of a bus's list is a source
// drawn over the whole canvas rather than a scene.
func isSourceView(addr string) bool { return strings.HasPrefix(addr, "source.") }

// BlackView is the scene of no layers every Program bus may show.
const BlackView = "black"

// addViews puts a view of every source in bs's list into the show's scenes
// (once each), sized to the compositor n's canvas, and BlackView at the end
// of a Program bus's list; it says which entry names no source of the plan.
func (b *State) addViews(n *plan.Node, bs *BusState) error {
	list := bs.Scenes()
	if bs.Kind == "program" && !contains(list, BlackView) {
		l := append(list[:len(list):len(list)], BlackView)
		bs.scenes.Store(&l)
		b.scenes[BlackView] = &plan.Scene{Address: BlackView}
	}
	for _, addr := range list {
		if !isSourceView(addr) || b.scenes[addr] != nil {
			continue
		}
		if _, ok := b.sources[addr]; !ok {
			return fmt.Errorf("%s routes to %s, which the plan does not hold", n.ID, addr)
		}
		_, w, h, _, err := b.Video(n)
		if err != nil {
			return err
		}
		b.scenes[addr] = &plan.Scene{Address: addr, Layers: []plan.Layer{{Source: addr, Rect: [4]int{0, 0, w, h}, Fit: frame.Contain.String(), Opacity: 1}}}
	}
	return nil
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
