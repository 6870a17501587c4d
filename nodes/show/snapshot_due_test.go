package show

import "testing"

// TestSnapshotsKeepTheRateAsked: on a 25 fps bus whose ticks come up to
// 3 ms early or late, a tile watched at 25, 10, 5 or 2 a second gets that
// many snapshots a second, not half of them (a tick a little early is not
// skipped) nor more; and a watch after a pause starts at once without a
// burst.
func TestSnapshotsKeepTheRateAsked(t *testing.T) {
	const period = 40_000_000 // 25 fps
	for _, fps := range []int64{25, 10, 5, 2} {
		slots := map[string]*snapSlot{"bus.pgm": {name: "bus.pgm"}}
		s := &snapshots{}
		s.slots.Store(&slots)
		sl := slots["bus.pgm"]
		sl.watchUntil.Store(1 << 62)
		sl.intervalNs.Store(1_000_000_000 / fps)
		taken := 0
		seed := uint32(1)
		for tick := int64(0); tick < 250; tick++ { // 10 s
			seed = seed*1664525 + 1013904223
			jitter := int64(seed>>16)%6_000_001 - 3_000_000
			if s.due("bus.pgm", 1_000_000_000+tick*period+jitter, period) != nil {
				taken++
				sl.busy.Store(false)
			}
		}
		if want := int(10 * fps); taken < want-1 || taken > want+1 {
			t.Errorf("at %d a second: %d snapshots in 10 s, want %d", fps, taken, want)
		}
		// Unwatched for a minute, then watched again: one snapshot at the
		// next tick, then the rate again.
		now := int64(100_000_000_000)
		got := 0
		for tick := int64(0); tick < 25; tick++ {
			if s.due("bus.pgm", now+tick*period, period) != nil {
				got++
				sl.busy.Store(false)
			}
		}
		if got < int(fps)-1 || got > int(fps)+1 {
			t.Errorf("at %d a second after a pause: %d snapshots in the next second", fps, got)
		}
	}
}
