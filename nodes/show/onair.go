package show

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/onairhq/onair/runtime"
)

// Going on air (issue 23): the show starts its groups in waves (the
// sources together, then the buses they feed, then the outputs), each
// wave once the one before is ready (the plan's readiness rules: a
// source's first frame paced, a bus's first tick, an output's first
// frame), and goes on air when the last is. What a source or bus does before that moment is
// the start's, not the show's: a source that started first paces for as
// long as the others take to start (on the GPU, 192 sources took 19 s,
// while decoders being created held the ones already running), and what it
// underran or dropped then was never on air. So the counts a user reads
// (the summary, /status, /metrics) run from the moment the show went on
// air; the start's are kept beside them (start underruns, start drops,
// start missed deadlines and repeats), and the start says how long it
// waited and for what (StartReport).

// StartReport is how long the show waited to go on air, and for what.
type StartReport struct {
	// StartedMs is from Start to on air, wall time.
	StartedMs float64 `json:"started_ms"`
	// WaitedMs is the start waves' readiness waits, summed (each wave
	// starts once the one before is ready, and waits as long as its
	// slowest group); SourcesMs is the sources' share: the waves that
	// started sources.
	WaitedMs  float64 `json:"waited_ms"`
	SourcesMs float64 `json:"sources_ms"`
	// Slowest is the source whose group took longest to be ready.
	Slowest   string  `json:"slowest,omitempty"`
	SlowestMs float64 `json:"slowest_ms,omitempty"`
}

// newStartReport reads the groups' readiness waits.
func newStartReport(groups []runtime.GroupStatus, started time.Duration) *StartReport {
	r := &StartReport{StartedMs: float64(started) / 1e6}
	wave := map[int]float64{}   // each wave's wait: its slowest group's
	hasSource := map[int]bool{} // the waves that started a source
	for _, g := range groups {
		wave[g.Wave] = max(wave[g.Wave], g.WaveReadyMs)
		if strings.HasPrefix(g.Name, "source.") {
			hasSource[g.Wave] = true
			if g.ReadyMs > r.SlowestMs {
				r.Slowest, r.SlowestMs = g.Name, g.ReadyMs
			}
		}
	}
	for w, ms := range wave {
		r.WaitedMs += ms
		if hasSource[w] {
			r.SourcesMs += ms
		}
	}
	return r
}

// Line is the report for a person: how long the start waited.
func (r *StartReport) Line() string {
	ms := func(v float64) time.Duration { return time.Duration(v * 1e6).Round(time.Millisecond) }
	line := fmt.Sprintf("waited %v for every part to be ready before going on air", ms(r.WaitedMs))
	if r.Slowest != "" {
		line += fmt.Sprintf(", %v of it for the sources (the slowest: %s, %v)", ms(r.SourcesMs), r.Slowest, ms(r.SlowestMs))
	}
	return line
}

// atOnAir is what a source had counted when the show went on air.
type atOnAir struct{ underruns, drops uint64 }

// busAtOnAir is what a bus had counted when the show went on air.
type busAtOnAir struct{ missed, repeats uint64 }

// onAirMarks holds the counts at the moment the show went on air; nil
// before (every count is the start's until then).
type onAirMarks struct {
	sources map[string]atOnAir
	buses   map[string]busAtOnAir
	start   *StartReport
}

// markOnAir records the moment the show went on air and every source's
// and bus's counts at it. A source added later (a change on air) has none:
// it counts from its first frame, and its first tick on air is after it.
func (b *State) markOnAir(start *StartReport) {
	if !b.onAir.CompareAndSwap(0, b.opts.Clock()) {
		return
	}
	m := &onAirMarks{sources: make(map[string]atOnAir, len(b.sourceMap())), buses: make(map[string]busAtOnAir, len(b.buses)), start: start}
	for a, s := range b.sourceMap() {
		m.sources[a] = atOnAir{underruns: s.Underrun.Load(), drops: s.Drops.Load()}
	}
	for a, bs := range b.buses {
		bs.mu.Lock()
		m.buses[a] = busAtOnAir{missed: bs.missed, repeats: bs.repeats}
		bs.mu.Unlock()
	}
	b.marks.Store(m)
}

// source splits a source's summary at the moment the show went on
// air: Underruns and Drops from then on, the start's apart.
func (m *onAirMarks) source(s *SourceSummary) {
	if m == nil {
		s.StartUnderruns, s.Underruns = s.Underruns, 0
		s.StartDrops, s.Drops = s.StartDrops+s.Drops, 0
		return
	}
	at := m.sources[s.Address]
	s.StartUnderruns, s.Underruns = at.underruns, s.Underruns-at.underruns
	s.StartDrops, s.Drops = s.StartDrops+at.drops, s.Drops-at.drops
}

// bus splits a bus's missed deadlines and repeats the same way.
func (m *onAirMarks) bus(s *BusSummary) {
	if m == nil {
		s.StartMissed, s.Missed = s.Missed, 0
		s.StartRepeats, s.Repeats = s.Repeats, 0
		return
	}
	at := m.buses[s.Address]
	s.StartMissed, s.Missed = at.missed, s.Missed-at.missed
	s.StartRepeats, s.Repeats = at.repeats, s.Repeats-at.repeats
}

// writeStart prints how the show went on air and what its start counted.
func (s Summary) writeStart(w io.Writer) {
	if s.Start != nil {
		fmt.Fprintf(w, "Start: on air after %v; %s\n", time.Duration(s.Start.StartedMs*1e6).Round(time.Millisecond), s.Start.Line())
	}
	var under, drops, missed, repeats uint64
	for _, src := range s.Sources {
		under += src.StartUnderruns
		drops += src.StartDrops
	}
	for _, b := range s.Buses {
		missed += b.StartMissed
		repeats += b.StartRepeats
	}
	if under+drops+missed+repeats > 0 {
		fmt.Fprintf(w, "  while starting, before going on air (not counted below): %d source underruns, %d source drops, %d missed deadlines, %d repeats\n", under, drops, missed, repeats)
	}
}
