package show

import (
	"log/slog"
	"os"
	"runtime"
	"sync/atomic"

	"github.com/onairhq/onair/plan"
)

// applyGoProcs sets how many processors Go's scheduler runs the show on
// (canvas go_procs) as the show starts: Go keeps about one OS thread for
// each processor it has used, so fewer processors mean fewer threads. 0
// is Go's default: left as it is, or restored when an earlier show of this
// process (onair watch reloading one) set it. The environment variable
// GOMAXPROCS (getenv's), when set, is the operator's override and wins;
// the log says so. It returns the processors Go runs on. A nil log is
// slog's default.
func applyGoProcs(p *plan.Plan, getenv func(string) string, log *slog.Logger) int {
	if log == nil {
		log = slog.Default()
	}
	n := p.Canvas.Int("go_procs")
	if n <= 0 {
		if goProcsSet.Swap(false) {
			runtime.SetDefaultGOMAXPROCS()
			log.Info("canvas go_procs is 0: Go's scheduler runs on its default processors again", "processors", runtime.GOMAXPROCS(0))
		}
		return runtime.GOMAXPROCS(0)
	}
	if env := getenv("GOMAXPROCS"); env != "" {
		procs := runtime.GOMAXPROCS(0)
		log.Info("GOMAXPROCS is set in the environment: it wins over canvas go_procs", "GOMAXPROCS", env, "go_procs", n, "processors", procs)
		return procs
	}
	goProcsSet.Store(true)
	if was := runtime.GOMAXPROCS(n); was != n {
		log.Info("canvas go_procs sets the processors Go's scheduler runs the show on", "go_procs", n, "was", was)
	}
	return n
}

// goProcsSet is whether applyGoProcs set Go's processors last.
var goProcsSet atomic.Bool

// goProcs is applyGoProcs on the process's environment.
func goProcs(p *plan.Plan, log *slog.Logger) int { return applyGoProcs(p, os.Getenv, log) }
