package runtime

// smooth_timestamps: slot numbering for sources that paint irregularly.
//
// Invariants:
//   - Each frame is stamped one slot after the previous one; timestamps
//     never go backwards and never repeat.
//   - A slot's ideal arrival is origin + n periods (exact conversion from
//     n). The drift of each arrival from its slot is averaged (exponential,
//     weight 1/8); only when that average passes the threshold does the
//     smoother re-anchor, to the slot nearest the arrival (still after the
//     previous slot). Jitter around a steady rate never resyncs.

import "fmt"

// Smoother stamps frames of an irregular source (a browser painting when it
// likes) with regular timestamps.
type Smoother struct {
	unit      TimeBase
	period    TimeBase
	threshold int64
	started   bool
	epochNs   int64 // arrival of slot 0: slot n stands for epoch + n periods
	originNs  int64
	originN   int64 // slot number at the origin
	slot      int64
	avgDrift  int64
	resyncs   uint64
}

// NewSmoother stamps in unit (e.g. 1/120000), one slot per frame period
// (1/30 s), re-anchoring when the average drift passes thresholdNs.
func NewSmoother(unit, period TimeBase, thresholdNs int64) (*Smoother, error) {
	if !unit.Valid() || !period.Valid() {
		return nil, fmt.Errorf("smooth_timestamps: time base %v and frame period %v must both be positive", unit, period)
	}
	if thresholdNs <= 0 {
		return nil, fmt.Errorf("smooth_timestamps: drift threshold %d ns must be positive (one frame period is a usual choice)", thresholdNs)
	}
	return &Smoother{unit: unit, period: period, threshold: thresholdNs}, nil
}

// Stamp takes a frame's arrival time (monotonic ns) and returns its
// timestamp in the smoother's unit.
func (s *Smoother) Stamp(arrivalNs int64) int64 {
	if !s.started {
		s.started, s.epochNs, s.originNs, s.originN, s.slot = true, arrivalNs, arrivalNs, 0, 0
		return 0
	}
	s.slot++
	ideal := s.originNs + s.period.ToNanos(s.slot-s.originN)
	drift := arrivalNs - ideal
	s.avgDrift += (drift - s.avgDrift) / 8
	if s.avgDrift > s.threshold || -s.avgDrift > s.threshold {
		// the slot whose time is nearest the arrival
		n := s.period.FromNanos(arrivalNs - s.epochNs + s.period.ToNanos(1)/2)
		if n <= s.slot-1 {
			n = s.slot // never backwards
		}
		s.slot, s.originN, s.originNs, s.avgDrift = n, n, arrivalNs, 0
		s.resyncs++
	}
	return s.period.Convert(s.slot, s.unit)
}

// Resyncs is how many times the smoother re-anchored.
func (s *Smoother) Resyncs() uint64 { return s.resyncs }
