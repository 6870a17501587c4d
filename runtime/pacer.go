package runtime

// The realtime pacer.
//
// Invariants:
//   - A pacer counts in exactly one unit: a time base (1/120000 s) or a tick
//     period (1/30 s: one unit per frame). Timestamps in that unit map to
//     release times as origin + exact conversion of (pts - originPTS): the
//     n-th release is computed from n, so no rounding accumulates.
//   - A release time inside the clock's current quantum is due. A clock that
//     reads whole milliseconds cannot show a time between two of its steps;
//     waiting for it to pass would ask the loop for a deadline already past,
//     over and over, until the clock turns (the seeds' spin). So with a
//     quantum q, a release r is due once r < floor(now/q)*q + q, and a timer
//     armed at r (which fires at or after r) always finds it due: one
//     wake-up per frame.
//   - A discontinuity (a release more than ResyncAfter ahead of or behind
//     the clock: a looped file's timestamps restarting, a stalled reader)
//     re-anchors the origin to now instead of bursting or stalling.
//   - With a grid (AlignPeriod, AlignOriginNs: the show's frame ticks), an
//     anchor is the first grid instant at or after now, so every source of
//     that rate on a loop is released in the same wake-up: the loop wakes
//     once per tick, not once per source.

import (
	"fmt"
	"sync/atomic"
)

// PacerConfig configures a Pacer. Set TimeBase or TickPeriod, never both.
type PacerConfig struct {
	// TimeBase is the unit timestamps count in, e.g. 1/120000 s.
	TimeBase TimeBase
	// TickPeriod makes the unit one tick, e.g. 1001/30000 s: timestamps
	// count frames.
	TickPeriod TimeBase
	// QuantumNs is the clock's quantum; 0 means 1 ns (Now's resolution).
	QuantumNs int64
	// ResyncAfterNs is how far off a release may be before the pacer
	// re-anchors; 0 means one second.
	ResyncAfterNs int64
	// Clock reads the time in ns; nil means Now.
	Clock func() int64
	// AlignPeriod and AlignOriginNs put anchors on a grid of instants
	// origin + k periods (the show's frame ticks); zero: anchor at now.
	AlignPeriod   TimeBase
	AlignOriginNs int64
}

// Pacer maps timestamps to release times on the monotonic clock.
type Pacer struct {
	unit      TimeBase
	quantum   int64
	resync    int64
	clock     func() int64
	synced    bool
	originPTS int64
	originNs  int64
	align     TimeBase
	alignAt   int64

	// mutation check: the pre-fix rule (due only once the clock shows it)
	strictDue bool

	released atomic.Uint64
	early    atomic.Uint64 // wake-ups that found the release not yet due
	resyncs  atomic.Uint64
	jitter   Histogram // release time minus due time, ns
}

// NewPacer checks cfg and makes a pacer.
func NewPacer(cfg PacerConfig) (*Pacer, error) {
	tb, tp := cfg.TimeBase.Valid(), cfg.TickPeriod.Valid()
	if tb == tp {
		return nil, fmt.Errorf("pacer: set time_base (such as 1/120000) or tick_period (such as 1/30), exactly one; got time_base %v, tick_period %v", cfg.TimeBase, cfg.TickPeriod)
	}
	p := &Pacer{unit: cfg.TimeBase, quantum: cfg.QuantumNs, resync: cfg.ResyncAfterNs, clock: cfg.Clock, align: cfg.AlignPeriod, alignAt: cfg.AlignOriginNs}
	if tp {
		p.unit = cfg.TickPeriod
	}
	if p.quantum <= 0 {
		p.quantum = 1
	}
	if p.resync <= 0 {
		p.resync = 1_000_000_000
	}
	if p.clock == nil {
		p.clock = Now
	}
	return p, nil
}

// Unit is the unit the pacer counts and stamps in.
func (p *Pacer) Unit() TimeBase { return p.unit }

// Now reads the pacer's clock.
func (p *Pacer) Now() int64 { return p.clock() }

// Release returns the release time (monotonic ns) of timestamp pts,
// anchoring the first timestamp to now and re-anchoring on a discontinuity.
func (p *Pacer) Release(pts int64) int64 {
	now := p.clock()
	if !p.synced {
		p.synced, p.originPTS, p.originNs = true, pts, p.anchor(now)
		return p.originNs
	}
	r := p.originNs + p.unit.ToNanosCeil(pts-p.originPTS)
	if r-now > p.resync || now-r > p.resync {
		p.resyncs.Add(1)
		p.originPTS, p.originNs = pts, p.anchor(now)
		return p.originNs
	}
	return r
}

// anchor is now, or with a grid the first grid instant at or after now.
func (p *Pacer) anchor(now int64) int64 {
	if !p.align.Valid() || now <= p.alignAt {
		if p.align.Valid() {
			return p.alignAt
		}
		return now
	}
	k := p.align.FromNanos(now - p.alignAt)
	at := p.alignAt + p.align.ToNanosCeil(k)
	if at < now {
		at = p.alignAt + p.align.ToNanosCeil(k+1)
	}
	return at
}

// Due reports whether release r is due at the clock's current reading:
// anywhere inside the current quantum counts.
func (p *Pacer) Due(r int64) bool {
	now := p.clock()
	if p.strictDue {
		return r <= now
	}
	return r < now-mod(now, p.quantum)+p.quantum
}

func mod(a, q int64) int64 {
	m := a % q
	if m < 0 {
		m += q
	}
	return m
}

// Resync drops the anchor: the next Release anchors to now.
func (p *Pacer) Resync() { p.synced = false }

// PacerStats is a pacer's counters, ready for JSON.
type PacerStats struct {
	Unit     string            `json:"unit"`
	Released uint64            `json:"released"`
	Early    uint64            `json:"early_wakeups"` // wake-ups that found nothing due: a spin shows here
	Resyncs  uint64            `json:"resyncs"`
	JitterNs HistogramSnapshot `json:"jitter_ns"` // release minus due
}

// Stats reads the pacer's counters.
func (p *Pacer) Stats() PacerStats {
	return PacerStats{Unit: p.unit.String(), Released: p.released.Load(), Early: p.early.Load(), Resyncs: p.resyncs.Load(), JitterNs: p.jitter.Snapshot()}
}

// Pacing releases timestamps on an event loop: one timer per pacing, reset
// for each release.
type Pacing struct {
	p     *Pacer
	timer *Timer
	pts   int64
	rel   int64
	next  func(pts int64) (int64, bool)
	emit  func(pts int64)
	done  bool
}

// Run starts releasing on loop l: emit(pts) runs on the loop's thread when
// pts is due, then next(pts) gives the following timestamp (false: stop).
// Call Stop on the loop's thread (or through l.Do) to end it early.
func (p *Pacer) Run(l *EventLoop, first int64, next func(pts int64) (int64, bool), emit func(pts int64)) *Pacing {
	g := &Pacing{p: p, pts: first, next: next, emit: emit}
	g.timer = l.NewTimer(g.fire)
	g.rel = p.Release(first)
	g.timer.Reset(g.rel)
	return g
}

func (g *Pacing) fire() {
	if g.done {
		return
	}
	p := g.p
	if !p.Due(g.rel) {
		p.early.Add(1)
		g.timer.Reset(g.rel)
		return
	}
	p.jitter.Record(Now() - g.rel)
	p.released.Add(1)
	g.emit(g.pts)
	if g.done {
		return
	}
	pts, ok := g.next(g.pts)
	if !ok {
		g.done = true
		return
	}
	g.pts = pts
	g.rel = p.Release(pts)
	g.timer.Reset(g.rel)
}

// Stop ends the pacing; call it on the loop's thread.
func (g *Pacing) Stop() {
	g.done = true
	g.timer.Stop()
}

// Release is the release time (monotonic ns) of the timestamp being
// emitted, or of the next one between emits.
func (g *Pacing) Release() int64 { return g.rel }
