package playout

import "fmt"

// Kind is how a bus goes from one scene to the next.
type Kind int

const (
	Cut  Kind = iota // the next tick shows the new scene
	Fade             // a mix from the old scene to the new over the duration
	Wipe             // an edge moving left to right over the duration
)

func (k Kind) String() string {
	switch k {
	case Cut:
		return "cut"
	case Fade:
		return "fade"
	case Wipe:
		return "wipe"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind reads "cut", "fade" or "wipe".
func ParseKind(s string) (Kind, error) {
	switch s {
	case "cut":
		return Cut, nil
	case "fade", "mix", "dissolve":
		return Fade, nil
	case "wipe":
		return Wipe, nil
	}
	return 0, fmt.Errorf("unknown transition %q: use cut, fade or wipe", s)
}

// Switcher holds what a bus shows: the scene on air and, during a
// transition, the scene it is going to. Scenes are indexes the caller
// assigns. A request takes effect at the first tick drawn after it.
type Switcher struct {
	onAir   int
	pending *request
	// scheduled are requests for a given tick (RequestAt), by tick.
	scheduled []request
	active    *active
	last      int64  // the last tick At was asked for; -1 before
	Cuts      uint64 // transitions completed
}

type request struct {
	kind  Kind
	to    int
	ticks int64
	at    int64 // RequestAt's tick; 0 for Request
}

type active struct {
	kind         Kind
	from, to     int
	start, ticks int64
}

// NewSwitcher returns a switcher with scene on air.
func NewSwitcher(scene int) *Switcher { return &Switcher{onAir: scene, last: -1} }

// Request asks for a transition to scene over ticks ticks (ignored for a
// cut). A request while another transition runs finishes that one at once.
func (s *Switcher) Request(kind Kind, scene int, ticks int64) {
	if kind == Cut || ticks < 1 {
		ticks = 0
	}
	s.pending = &request{kind, scene, ticks, 0}
}

// LateError refuses a switch asked for a tick already drawn.
type LateError struct {
	Tick int64 // the tick asked for
	Next int64 // the first tick a switch can still land on
}

// Frames is how many ticks too late the request came.
func (e *LateError) Frames() int64 { return e.Next - e.Tick }

func (e *LateError) Error() string {
	return fmt.Sprintf("tick %d was drawn already: the request is %d ticks late (the next tick a switch can land on is %d)", e.Tick, e.Frames(), e.Next)
}

// RequestAt asks for a transition to scene that starts on exactly tick at
// (a cut shows the new scene from that tick on). A tick already drawn is
// refused with a *LateError. Requests for ticks to come wait in tick
// order; one for a tick the bus passes over (a missed deadline) starts on
// the first tick drawn after it.
func (s *Switcher) RequestAt(kind Kind, scene int, ticks, at int64) error {
	if at <= s.last {
		return &LateError{Tick: at, Next: s.last + 1}
	}
	if kind == Cut || ticks < 1 {
		ticks = 0
	}
	i := len(s.scheduled)
	for i > 0 && s.scheduled[i-1].at > at {
		i--
	}
	s.scheduled = append(s.scheduled, request{})
	copy(s.scheduled[i+1:], s.scheduled[i:])
	s.scheduled[i] = request{kind, scene, ticks, at}
	return nil
}

// Last is the last tick At was asked for, -1 before the first: a switch
// for a tick after it can still land.
func (s *Switcher) Last() int64 { return s.last }

// Pending reports whether a request waits for the next tick, so that a
// compositor looks at its inputs at once instead of at its poll interval.
func (s *Switcher) Pending() bool { return s.pending != nil }

// At returns what tick k shows: scene from, and while a transition runs,
// scene to mixed in with progress in (0, 1]. With no transition to == from
// and progress is 0.
func (s *Switcher) At(k int64) (from, to int, kind Kind, progress float64) {
	if k > s.last {
		s.last = k
	}
	for len(s.scheduled) > 0 && s.scheduled[0].at <= k {
		r := s.scheduled[0]
		s.scheduled = s.scheduled[1:]
		s.start(r, k)
	}
	if s.pending != nil {
		r := s.pending
		s.pending = nil
		s.start(*r, k)
	}
	if a := s.active; a != nil {
		p := float64(k-a.start+1) / float64(a.ticks)
		if p >= 1 {
			s.onAir = a.to
			s.active = nil
			s.Cuts++
			return s.onAir, s.onAir, Cut, 0
		}
		return a.from, a.to, a.kind, p
	}
	return s.onAir, s.onAir, Cut, 0
}

// start begins r on tick k, finishing a running transition first.
func (s *Switcher) start(r request, k int64) {
	if s.active != nil {
		s.onAir = s.active.to
		s.active = nil
		s.Cuts++
	}
	if r.ticks == 0 {
		s.onAir = r.to
		s.Cuts++
	} else {
		s.active = &active{r.kind, s.onAir, r.to, k, r.ticks}
	}
}

// OnAir is the scene on air (the target once a transition completes).
func (s *Switcher) OnAir() int { return s.onAir }
