package show

import (
	"fmt"
	"sort"
)

// Ready is nil when every bus is on air: primed (it drew its first tick)
// and drawing (its last tick drawn is within a second of the tick
// presented now). Else it names the first bus, in address order, that is
// not, and why: what GET /readyz answers.
func (b *State) Ready() error {
	now := b.tickNow()
	second := int64(1)
	if b.rate.Den > 0 && b.rate.Num > b.rate.Den {
		second = (b.rate.Num + b.rate.Den - 1) / b.rate.Den
	}
	addrs := make([]string, 0, len(b.buses))
	for a := range b.buses {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, a := range addrs {
		bs := b.buses[a]
		bs.mu.Lock()
		first, last := bs.first, bs.onAirAt
		bs.mu.Unlock()
		switch {
		case first < 0:
			return fmt.Errorf("%s has drawn no tick yet (waiting for its inputs' first frames)", a)
		case now-last > second:
			return fmt.Errorf("%s drew its last tick %d ticks ago (tick %d; now %d): it is not drawing", a, now-last, last, now)
		}
	}
	return nil
}

// Ready implements control.Readier: a show with a node failed for good
// is not ready, nor one whose buses are not all on air (State.Ready).
func (s *Show[F]) Ready() error {
	select {
	case <-s.Exec.Failed():
		return fmt.Errorf("a node failed for good: %v", s.Exec.Err())
	default:
	}
	return s.State.Ready()
}
