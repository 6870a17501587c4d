package playout

// Schedule decides which tick a bus draws when. Tick k presents at
// Grid.At(k) and is drawn at its deadline, Latency ticks later; it is
// committed when the outputs have accepted it. A tick whose draw could not
// start before the next tick's deadline is missed: the schedule moves on to
// the newest due tick and counts the ones it passed over.
type Schedule struct {
	Grid    Grid
	Latency int64 // in ticks; the seeds' compositor ran two

	next   int64 // the next tick to draw
	Missed uint64
	Drawn  uint64
}

// NewSchedule returns a schedule whose first tick is the first one on the
// grid whose deadline is at or after now.
func NewSchedule(g Grid, latency int64, now int64) *Schedule {
	s := &Schedule{Grid: g, Latency: latency}
	if now > g.Origin {
		s.next = g.Index(now-latency*g.Period()) + 1
		if s.next < 0 {
			s.next = 0
		}
	}
	return s
}

// Next is the tick the schedule will draw next.
func (s *Schedule) Next() int64 { return s.next }

// Deadline is when tick k is to be drawn.
func (s *Schedule) Deadline(k int64) int64 { return s.Grid.At(k + s.Latency) }

// HandOffLimit is how long the hand-off of tick k may wait for an output
// that has no room: until half a frame period after the tick's deadline.
// An output still full then misses tick k (the tick is dropped for that
// output alone), so a slow output never holds its bus past half a period
// (issue 23's bound on a tick, deadline to commit).
func (s *Schedule) HandOffLimit(k int64) int64 {
	return s.Deadline(k) + s.Grid.Period()/2
}

// NextDeadline is the deadline of the next tick to draw.
func (s *Schedule) NextDeadline() int64 { return s.Deadline(s.next) }

// Due returns the tick to draw at time now, if one is due. When the deadline
// of a later tick has passed too, the ticks before it are counted as missed
// and skipped: drawing stale ticks late would only make every later one late.
func (s *Schedule) Due(now int64) (tick int64, ok bool) {
	if now < s.Deadline(s.next) {
		return 0, false
	}
	k := s.Grid.Index(now) - s.Latency // the newest tick whose deadline has passed
	if k > s.next {
		s.Missed += uint64(k - s.next)
		s.next = k
	}
	return s.next, true
}

// Commit records that tick k was drawn and accepted by the outputs.
func (s *Schedule) Commit(k int64) {
	if k >= s.next {
		s.next = k + 1
		s.Drawn++
	}
}
