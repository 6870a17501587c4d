package runtime

// smooth_timestamps: slot numbering for sources that paint irregularly.
//
// Invariants:
//   - Each frame kept is stamped one slot after the previous one, or
//     later; timestamps never go backwards and never repeat.
//   - A slot's ideal arrival is origin + n periods (exact conversion from
//     n). The drift of each arrival from its slot is averaged (exponential,
//     weight 1/8); only when that average passes the threshold does the
//     smoother re-anchor, to the slot nearest the arrival (still after the
//     previous slot). Jitter around a steady rate never resyncs.
//   - No frame is stamped more than MaxLead after its arrival: a frame
//     whose next slot lies further ahead is refused (Stamp's keep is
//     false; the caller holds it until Due, and drops it for a newer one),
//     so a source faster than the show's rate loses frames instead of
//     running ahead of real time. What a frame waits between arrival and
//     its slot is bounded by MaxLead whatever the source's rate.
//   - Slots of real time that no frame arrived in, between two arrivals,
//     are counted (Gaps): a source slower than the show's rate.

import "fmt"

// Smoother stamps frames of an irregular source (a browser painting when it
// likes) with regular timestamps.
type Smoother struct {
	unit      TimeBase
	period    TimeBase
	threshold int64
	lead      int64 // MaxLead in ns
	started   bool
	epochNs   int64 // arrival of slot 0: slot n stands for epoch + n periods
	originNs  int64
	originN   int64 // slot number at the origin
	slot      int64
	avgDrift  int64
	resyncs   uint64
	lastReal  int64 // the real-time slot of the last arrival
	gaps      uint64
}

// MaxLead is how far ahead of its arrival a frame may be stamped, in
// frame periods: half a period. A frame is then shown at most 1.5 periods
// after it arrived (its slot, and the tick at or after it), and jitter of
// up to a quarter period each way around a steady rate drops nothing.
const MaxLead = 0.5

// NewSmoother stamps in unit (e.g. 1/120000), one slot per frame period
// (1/30 s), re-anchoring when the average drift passes thresholdNs.
func NewSmoother(unit, period TimeBase, thresholdNs int64) (*Smoother, error) {
	if !unit.Valid() || !period.Valid() {
		return nil, fmt.Errorf("smooth_timestamps: time base %v and frame period %v must both be positive", unit, period)
	}
	if thresholdNs <= 0 {
		return nil, fmt.Errorf("smooth_timestamps: drift threshold %d ns must be positive (one frame period is a usual choice)", thresholdNs)
	}
	return &Smoother{unit: unit, period: period, threshold: thresholdNs, lead: int64(float64(period.ToNanos(1)) * MaxLead)}, nil
}

// Stamp takes a frame's arrival time (monotonic ns) and returns its
// timestamp in the smoother's unit. keep is false when the frame came too
// early for the next slot (the source paints faster than the show's rate):
// nothing changed; stamp it again at Due, unless a newer frame comes first.
func (s *Smoother) Stamp(arrivalNs int64) (pts int64, keep bool) {
	if !s.started {
		s.started, s.epochNs, s.originNs, s.originN, s.slot = true, arrivalNs, arrivalNs, 0, 0
		return 0, true
	}
	// The slot of real time the frame arrived in (nearest), for Gaps.
	real := s.period.FromNanos(arrivalNs - s.epochNs + s.period.ToNanos(1)/2)
	if d := real - s.lastReal; d > 1 {
		s.gaps += uint64(d - 1)
	}
	if real > s.lastReal {
		s.lastReal = real
	}
	next := s.slot + 1
	ideal := s.originNs + s.period.ToNanos(next-s.originN)
	if ideal-arrivalNs > s.lead {
		return 0, false
	}
	s.slot = next
	drift := arrivalNs - ideal
	s.avgDrift += (drift - s.avgDrift) / 8
	if s.avgDrift > s.threshold || -s.avgDrift > s.threshold {
		// the slot whose time is nearest the arrival
		n := real
		if n <= s.slot-1 {
			n = s.slot // never backwards
		}
		s.slot, s.originN, s.originNs, s.avgDrift = n, n, arrivalNs, 0
		s.resyncs++
	}
	return s.period.Convert(s.slot, s.unit), true
}

// Resyncs is how many times the smoother re-anchored.
func (s *Smoother) Resyncs() uint64 { return s.resyncs }

// Due is the earliest arrival (monotonic ns) Stamp keeps a frame at: the
// next slot less MaxLead. Before the first frame it is 0.
func (s *Smoother) Due() int64 {
	if !s.started {
		return 0
	}
	return s.originNs + s.period.ToNanos(s.slot+1-s.originN) - s.lead
}

// Gaps is how many slots of real time passed with no frame arriving in
// them, between the first arrival and the last: the source paints slower
// than the show's rate (or paused).
func (s *Smoother) Gaps() uint64 { return s.gaps }
