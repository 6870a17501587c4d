package show

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/onairhq/onair/playout"
	"github.com/onairhq/onair/showerr"
	"github.com/onairhq/onair/timecode"
)

// The show's timecode (SMPTE ST 12): tick k of every bus is labelled
// start + k frames, where start is canvas timecode_start or, without one,
// the time of day (local time) at tick 0. Each bus stamps its ticks'
// timecode in their frames' metadata; /status, every event, the page and
// the as-run log report it; a switch may ask for a timecode (SwitchAt).

// showClock is the show's timecode: its rate and the frame count of tick 0.
type showClock struct {
	rate  timecode.Rate
	param string // timecode_start; "" is the time of day
	// wall0 and mono0 are one reading of the wall and monotonic clocks,
	// from which tick 0's time of day follows.
	wall0 time.Time
	mono0 int64

	once  sync.Once
	start int64 // frames from midnight of tick 0
}

func newShowClock(rate timecode.Rate, param string, wall time.Time, mono int64) (*showClock, error) {
	if param != "" {
		if _, err := rate.Parse(param); err != nil {
			return nil, fmt.Errorf("timecode_start: %v", err)
		}
	}
	return &showClock{rate: rate, param: param, wall0: wall, mono0: mono}, nil
}

// startFrame is the frame count of tick 0, fixed the first time it is
// asked for (by then the grid's origin is).
func (b *State) startFrame() int64 {
	c := b.tc
	c.once.Do(func() {
		if c.param != "" {
			tc, _ := c.rate.Parse(c.param)
			c.start = c.rate.Frame(tc)
			return
		}
		c.start = c.rate.TimeOfDay(c.wall0.Add(time.Duration(b.origin - c.mono0)))
	})
	return c.start
}

// TimecodeAt is the timecode of tick k.
func (b *State) TimecodeAt(k int64) timecode.Timecode {
	return b.tc.rate.Label(b.startFrame() + k)
}

// TimecodeRate is the show's timecode rate.
func (b *State) TimecodeRate() timecode.Rate { return b.tc.rate }

// tickNow is the tick presented now on the grid (0 before tick 0).
func (b *State) tickNow() int64 {
	return max(0, b.grid().Index(b.opts.Clock()))
}

// TickOf is the tick a timecode names: the one labelled tc nearest the
// tick presented now (within twelve hours either way; a day of labels
// wraps at midnight). tc is parsed at the show's rate: a malformed label
// or one that does not exist at the rate (a dropped frame number at
// 30000/1001) is an error wrapping ErrInvalid.
func (b *State) TickOf(tc string) (int64, error) {
	t, err := b.tc.rate.Parse(strings.TrimSpace(tc))
	if err != nil {
		return 0, fmt.Errorf("%v (the show runs at %s): %w", err, b.tc.rate, ErrInvalid)
	}
	now := b.tickNow()
	return now + b.tc.rate.Diff(b.startFrame()+now, b.tc.rate.Frame(t)), nil
}

// TimecodeStatus is the show's timecode in /status.
type TimecodeStatus struct {
	Rate      string `json:"rate"`       // "30000/1001 drop-frame"
	DropFrame bool   `json:"drop_frame"` // labels written HH:MM:SS;FF
	Origin    string `json:"origin"`     // "time_of_day" or "start"
	Start     string `json:"start"`      // the timecode of tick 0
	// Now is the timecode of the tick presented now, and Tick that tick.
	Now  string `json:"now"`
	Tick int64  `json:"tick"`
	// Buses is each bus's last tick drawn, as a timecode ("" before the
	// first): a Program bus's is the Program timecode.
	Buses map[string]string `json:"buses"`
}

func (b *State) timecodeStatus() TimecodeStatus {
	now := b.tickNow()
	st := TimecodeStatus{Rate: b.tc.rate.String(), DropFrame: b.tc.rate.Drop, Origin: "time_of_day",
		Start: b.TimecodeAt(0).String(), Now: b.TimecodeAt(now).String(), Tick: now, Buses: map[string]string{}}
	if b.tc.param != "" {
		st.Origin = "start"
	}
	for a, bs := range b.buses {
		bs.mu.Lock()
		first, at := bs.first, bs.onAirAt
		bs.mu.Unlock()
		st.Buses[a] = ""
		if first >= 0 {
			st.Buses[a] = b.TimecodeAt(at).String()
		}
	}
	return st
}

// SwitchAt puts scene on bus with a transition lasting d starting on
// exactly the tick labelled tc (cut: that tick shows the new scene). A
// tick already drawn is refused (an error wrapping ErrConflict) with how
// late the request is, in frames and ms. origin says who asked (page,
// cli, cue, api, apply), for the as-run log.
func (b *State) SwitchAt(bus, scene, kind string, d time.Duration, tc, origin string) error {
	return b.switchTo(bus, scene, kind, d, tc, origin)
}

// lateError turns the switcher's refusal into the user's words.
func (b *State) lateError(bs *BusState, tc string, late *playout.LateError) error {
	period := b.grid()
	ms := float64(period.At(late.Next)-period.At(late.Tick)) / 1e6
	return fmt.Errorf("%s: %s (tick %d) is past: the request came %d frames (%.1f ms) late; the next timecode %s can still switch on is %s: %w",
		bs.Address, strings.TrimSpace(tc), late.Tick, late.Frames(), ms, bs.Address, b.TimecodeAt(late.Next), ErrConflict)
}

// ErrConflict is a request the show cannot carry out on air (a switch for
// a tick already drawn).
var ErrConflict = showerr.ErrConflict
