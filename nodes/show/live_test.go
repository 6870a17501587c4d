package show

import (
	"testing"

	"github.com/onairhq/onair/nodes"
)

// TestEveryLiveParamHasItsHook: a param the registry marks Live is one the
// diff calls live and apply sends, so the show must have its hook; a hook
// for a param not marked Live would never be called.
func TestEveryLiveParamHasItsHook(t *testing.T) {
	live := map[[2]string]bool{}
	for _, k := range nodes.All() {
		for _, p := range k.Params {
			if p.Live {
				live[[2]string{k.Name, p.Name}] = true
				if liveHooks[[2]string{k.Name, p.Name}] == nil {
					t.Errorf("%s.%s is Live in nodes/ but has no live hook (nodes/show/live.go)", k.Name, p.Name)
				}
			}
		}
	}
	for kp := range liveHooks {
		if !live[kp] {
			t.Errorf("live hook for %s.%s, which nodes/ does not mark Live", kp[0], kp[1])
		}
	}
}
