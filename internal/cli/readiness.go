package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/onairhq/onair/nodes/show"
)

// readinessLine says how long a show's start waited for its groups to be
// ready (a source's first frame decoded and paced, a bus's first tick, an
// output's first frame) before it went on air, and which source was the
// slowest: the start-up a show waits for rather than airing a stutter.
// Empty when the running show gives no runtime status.
func readinessLine(r show.Running) string {
	st, ok := r.Status().(show.StatusReport)
	if !ok {
		return ""
	}
	var all, sources time.Duration
	var slowest string
	var slowestD time.Duration
	for _, g := range st.Runtime.Groups {
		d := time.Duration(g.ReadyMs * 1e6)
		all += d
		if strings.HasPrefix(g.Name, "source.") {
			sources += d
			if d > slowestD {
				slowest, slowestD = g.Name, d
			}
		}
	}
	line := fmt.Sprintf("waited %v for every part to be ready before going on air", all.Round(time.Millisecond))
	if slowest != "" {
		line += fmt.Sprintf(", %v of it for the sources (the slowest: %s, %v)", sources.Round(time.Millisecond), slowest, slowestD.Round(time.Millisecond))
	}
	return line
}
