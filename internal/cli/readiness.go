package cli

import (
	"github.com/onairhq/onair/nodes/show"
)

// readinessLine says how long a show's start waited for its groups to be
// ready (a source's first frame decoded and paced, a bus's first tick, an
// output's first frame) before it went on air, and which source was the
// slowest: the start-up a show waits for rather than airing a stutter.
// Empty before the show is on air.
func readinessLine(r show.Running) string {
	if st := r.Summary().Start; st != nil {
		return st.Line()
	}
	return ""
}
