package backends

import (
	"slices"
	"testing"

	"github.com/onairhq/onair/nodes"
)

// TestBackendsRunTheirKinds: every kind a backend's plans can hold has its
// constructor in that backend: the kinds of its lowering's chains, what
// those fuse into (their Fuses, and what that fuses into), and the kinds
// buses and outputs lower to (Kind.From) unless the backend refuses them. A kind added to
// a lowering or a registry entry without its constructor fails here, not
// on air.
func TestBackendsRunTheirKinds(t *testing.T) {
	for _, b := range All() {
		runs := b.Kinds()
		var want []string
		for _, k := range nodes.All() {
			for _, elem := range k.From {
				if b.Lowering.Chains[elem].Refuse == "" && !slices.Contains(want, k.Name) { // else the backend refuses the element
					want = append(want, k.Name)
				}
			}
		}
		for _, c := range b.Lowering.Chains {
			for _, l := range c.Links {
				want = append(want, l.Kind)
			}
		}
		for i := 0; i < len(want); i++ { // want grows with what its kinds fuse into
			k, ok := nodes.Lookup(want[i])
			if !ok {
				t.Errorf("%s: kind %s is not registered in nodes/", b.Name, want[i])
				continue
			}
			for _, f := range []string{k.Fuses.OnLoop, k.Fuses.WithReader, k.Fuses.WithChain} {
				if f != "" && !slices.Contains(want, f) {
					want = append(want, f)
				}
			}
		}
		for _, k := range want {
			if !slices.Contains(runs, k) {
				t.Errorf("the %s backend's plans may hold %s, which it has no constructor for", b.Name, k)
			}
		}
	}
}
