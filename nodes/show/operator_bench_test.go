package show

import (
	"fmt"
	"testing"

	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/plan"
)

// seedsSizedPlan is a plan of the seeds' shape for the operator's state:
// 192 sources, 192 full-frame scenes and 64 quad splits, two Program buses
// that may show every scene, 20 AUX buses showing a source each.
func seedsSizedPlan() *plan.Plan {
	p := &plan.Plan{Show: "seeds-sized", FrameRate: value.Rational{Num: 30, Den: 1}}
	const sources, quads, aux = 192, 64, 20
	var scenes []string
	for i := range sources {
		src := fmt.Sprintf("source.s[%d]", i)
		p.Nodes = append(p.Nodes, plan.Node{ID: src + "/one_to_many_nb", Kind: "one_to_many_nb", Address: src})
		sc := fmt.Sprintf("scene.full[%d]", i)
		p.Scenes = append(p.Scenes, plan.Scene{Address: sc, Layers: []plan.Layer{{Source: src, Rect: [4]int{0, 0, 1920, 1080}, Fit: "contain", Opacity: 1}}})
		scenes = append(scenes, sc)
	}
	for q := range quads {
		sc := plan.Scene{Address: fmt.Sprintf("scene.quad[%d]", q)}
		for c := range 4 {
			sc.Layers = append(sc.Layers, plan.Layer{Source: fmt.Sprintf("source.s[%d]", (q*4+c)%sources), Rect: [4]int{c % 2 * 960, c / 2 * 540, 960, 540}, Fit: "contain", Opacity: 1})
		}
		p.Scenes = append(p.Scenes, sc)
		scenes = append(scenes, sc.Address)
	}
	for _, b := range []string{"a", "b"} {
		p.Nodes = append(p.Nodes, plan.Node{ID: "bus." + b + "/compositor", Kind: "compositor", Address: "bus." + b,
			Params: value.Settings{"bus": "program", "scenes": scenes, "scene": scenes[0]}})
	}
	for i := range aux {
		id := fmt.Sprintf("bus.mon[%d]/compositor", i)
		p.Nodes = append(p.Nodes, plan.Node{ID: id, Kind: "compositor", Address: fmt.Sprintf("bus.mon[%d]", i), Params: value.Settings{"bus": "aux"}})
		p.Edges = append(p.Edges, plan.Edge{From: fmt.Sprintf("source.s[%d]/one_to_many_nb", i*9%sources), To: id, Capacity: 3, Policy: "drop"})
	}
	return p
}

// BenchmarkOperatorAtASwitch is what a Program bus's compositor does for
// the operator after the tick that lands a switch, on the seeds' shape:
// the on_air event and the tally of every source worked out again. It runs
// after the tick's commit, so it is no part of the tick's hand-off; it
// comes out of the time before the next tick's deadline.
//
//	go test -run '^$' -bench OperatorAtASwitch -benchtime 2000x ./nodes/show/
func BenchmarkOperatorAtASwitch(b *testing.B) {
	st, err := newState(seedsSizedPlan(), Options{}, "test", func(string) bool { return true })
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	bus := st.buses["bus.a"]
	n := len(bus.Scenes())
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		// A cut every tick: a new scene on air, its tally, its event.
		st.op.ticked(bus, int64(i), 0, (i+1)%n, (i+1)%n, 0)
	}
}
