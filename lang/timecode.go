package lang

import (
	"github.com/onairhq/onair/timecode"
)

// checkTimecodeStart refuses a canvas timecode_start that does not exist at
// the show's frame rate (a dropped frame number at 30000/1001, say), at the
// attribute's line.
func (l *loader) checkTimecodeStart() {
	c := &l.show.Canvas
	s := c.String("timecode_start")
	if s == "" || l.show.FrameRate.Num <= 0 || l.show.FrameRate.Den <= 0 {
		return
	}
	r, err := timecode.NewRate(l.show.FrameRate.Num, l.show.FrameRate.Den)
	if err == nil {
		_, err = r.Parse(s)
	}
	if err != nil {
		l.errorf(c.Attrs["timecode_start"], "Invalid timecode_start",
			"%v. Write the timecode of the show's first tick as HH:MM:SS:FF (HH:MM:SS;FF at drop-frame rates), or leave timecode_start out for the time of day.", err)
	}
}
