package show

import (
	"testing"

	"github.com/onairhq/onair/playout"
	"github.com/onairhq/onair/runtime"
)

// TestAlignedReleasesLandOnTheirTicks: a pacer aligned to the show's grid
// releases frame n at origin + n periods counted in 1/120000 s and rounded
// up; the compositor must see that frame on tick n, for every n and every
// rate, or it shows a repeat and then skips a frame (what happened at 30
// fps, where a period is 33,333,333.3 ns, before the comparison allowed one
// unit of the time base).
func TestAlignedReleasesLandOnTheirTicks(t *testing.T) {
	tb, _ := runtime.ParseTimeBase("1/120000")
	for _, rate := range [][2]int64{{30, 1}, {30000, 1001}, {25, 1}, {50, 1}, {60000, 1001}} {
		period, _ := runtime.NewTimeBase(rate[1], rate[0])
		step := period.Convert(1, tb)
		origin := int64(123_456_789)
		g, _ := playout.NewGrid(rate[0], rate[1], origin)
		for n := int64(0); n < 100_000; n++ {
			release := origin + tb.ToNanosCeil(n*step)
			tick := g.At(n) + timeBaseSlackNs
			if release > tick {
				t.Fatalf("%d/%d fps: frame %d released at %d, after its tick %d", rate[0], rate[1], n, release, tick)
			}
			if n > 0 && release <= g.At(n-1)+timeBaseSlackNs {
				t.Fatalf("%d/%d fps: frame %d would show on tick %d already", rate[0], rate[1], n, n-1)
			}
		}
	}
}
