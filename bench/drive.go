package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/nodes"
	"github.com/onairhq/onair/nodes/show"
	"github.com/onairhq/onair/plan"
)

// SampleDevice reads the backend's device report once a second for d (or
// until the show fails) and returns the readings.
func SampleDevice(r show.Running, d time.Duration) []any {
	var out []any
	end := time.After(d)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-end:
			return out
		case <-r.Failed():
			return out
		case <-tick.C:
			if st, ok := r.Status().(show.StatusReport); ok && st.Device != nil {
				out = append(out, st.Device)
			}
		}
	}
}

// MeanOf averages each number of the readings (as their JSON has them).
func MeanOf(readings []any) map[string]float64 {
	if len(readings) == 0 {
		return nil
	}
	sum := map[string]float64{}
	for _, x := range readings {
		data, _ := json.Marshal(x)
		var m map[string]any
		json.Unmarshal(data, &m)
		for k, v := range m {
			if f, ok := v.(float64); ok {
				sum[k] += f
			}
		}
	}
	for k := range sum {
		sum[k] /= float64(len(readings))
	}
	return sum
}

// SwitchEvery switches every Program bus to its next scene until stop is
// closed: cut, fade and wipe in turn (500 ms transitions), the second
// Program bus one transition ahead of the first, so that at every switch
// both kinds of work happen at once. Refused switches are counted in errs
// (the first is printed).
func SwitchEvery(r show.Running, scenes map[string][]string, d time.Duration, stop chan struct{}, errs *atomic.Uint64, stderr io.Writer) {
	kinds := []string{"cut", "fade", "wipe"}
	t := time.NewTicker(d)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		j := 0
		for _, b := range r.Summary().Buses {
			if b.Kind != "program" {
				continue
			}
			list := scenes[b.Address]
			if len(list) < 2 {
				continue
			}
			next := list[(slices.Index(list, b.OnAir)+1)%len(list)]
			kind := kinds[(i+j)%3]
			j++
			dur := time.Duration(0)
			if kind != "cut" {
				dur = 500 * time.Millisecond
			}
			if err := r.Switch(b.Address, next, kind, dur); err != nil && errs.Add(1) == 1 {
				fmt.Fprintf(stderr, "onair bench: switching %s to %s: %v\n", b.Address, next, err)
			}
		}
	}
}

// ProgramScenes maps each Program bus of the plan to the scenes it may
// show.
func ProgramScenes(p *plan.Plan) map[string][]string {
	out := map[string][]string{}
	for _, n := range p.Nodes {
		if k, ok := nodes.Lookup(n.Kind); ok && k.Has(nodes.Compositor) && n.Params.String("bus") == "program" {
			out[n.Address] = n.Params.Strings("scenes")
		}
	}
	return out
}
