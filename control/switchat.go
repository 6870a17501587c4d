package control

import (
	"net/http"
	"time"
)

// OriginHeader names where a switch comes from, for the show's as-run log:
// "cli" from `onair cut`, "page" from the operator's page; any other
// value, or none, is "api".
const OriginHeader = "Onair-Origin"

// TimedSwitcher is a Show whose switches can land on the tick a timecode
// names ("at", HH:MM:SS:FF; "" is the next tick) and that records where
// each came from (origin: page, cli, api). A tick already drawn is
// refused with an error wrapping showerr.ErrConflict (409), saying how late the
// request was; a timecode that does not exist at the show's rate, with
// one wrapping showerr.ErrInvalid (400).
type TimedSwitcher interface {
	SwitchAt(bus, scene, kind string, d time.Duration, at, origin string) error
	TakeAt(bus, kind string, d time.Duration, at, origin string) error
}

// origin is where r comes from, as OriginHeader says.
func origin(r *http.Request) string {
	switch o := r.Header.Get(OriginHeader); o {
	case "cli", "page":
		return o
	}
	return "api"
}
