package show

import "github.com/onairhq/onair/frame"

// FrameSync is a live source's frame synchroniser: the source's clock is
// not the show's, so a sender a little fast brings one frame more than the
// show takes every so often, and one a little slow one fewer. The show's
// side is the pacer, which takes one frame a period and repeats the last
// (an underrun) when none waits: a slow source is corrected there. A fast
// one is corrected here: each decoded frame, as it arrives, is counted
// with the frames already waiting for the pacer (the wait); once the wait
// has stayed above Target for a whole window of arrivals, that frame is
// dropped, so the wait, the source's latency, stays within one frame of
// Target for as long as the show runs. A burst of the network's or the
// decoder's that waits less than a window is not a drift and is not
// dropped. Not safe for concurrent use: the source's sending side owns it.
type FrameSync struct {
	// Target is how many frames a live source keeps waiting for its pacer,
	// the frame that arrived included: its latency in frame periods.
	Target int
	// Window is how many arrivals the wait must stay above Target over
	// before a frame is dropped: a second's worth.
	Window int

	low  int // the lowest wait in this window
	seen int // arrivals in this window
	owe  int // frames still to drop: what the last window's wait stood above Target
}

// NewFrameSync is the synchroniser of a live source of rate: one frame
// waits (the next the pacer releases), watched over a second.
func NewFrameSync(rate frame.Rational) *FrameSync {
	w := 1
	if rate.Den > 0 {
		w = max(1, int(rate.Num/rate.Den))
	}
	return &FrameSync{Target: 1, Window: w}
}

// Arrived is called as a frame arrives, with wait the frames that would
// then be waiting for the pacer (it included); true says to drop it (and
// count a frame-sync drop). A wait that stood more than one frame above
// Target (a burst that lasted, a reconnection's backlog) drops as many
// frames as it stood above, one an arrival.
func (s *FrameSync) Arrived(wait int) bool {
	if s.owe > 0 {
		s.owe--
		return true
	}
	if s.seen == 0 || wait < s.low {
		s.low = wait
	}
	if s.seen++; s.seen < s.Window {
		return false
	}
	s.seen = 0
	if s.low <= s.Target {
		return false
	}
	s.owe = s.low - s.Target - 1
	return true
}
