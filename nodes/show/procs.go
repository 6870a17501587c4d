package show

import (
	"log/slog"
	"os"
	"runtime"

	"github.com/onairhq/onair/compiler/plan"
)

// applyGoProcs sets how many processors Go's scheduler runs the show on
// (canvas go_procs) as the show starts: Go keeps about one OS thread for
// each processor it has used, so fewer processors mean fewer threads. 0
// leaves Go's default. The environment variable GOMAXPROCS (getenv's), when
// set, is the operator's override and wins; the log says so. Nothing is
// restored: a process runs one show. It returns the processors Go runs on.
// A nil log is slog's default.
func applyGoProcs(p *plan.Plan, getenv func(string) string, log *slog.Logger) int {
	if log == nil {
		log = slog.Default()
	}
	n := p.Canvas.Int("go_procs")
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	if env := getenv("GOMAXPROCS"); env != "" {
		procs := runtime.GOMAXPROCS(0)
		log.Info("GOMAXPROCS is set in the environment: it wins over canvas go_procs", "GOMAXPROCS", env, "go_procs", n, "processors", procs)
		return procs
	}
	if was := runtime.GOMAXPROCS(n); was != n {
		log.Info("canvas go_procs sets the processors Go's scheduler runs the show on", "go_procs", n, "was", was)
	}
	return n
}

// goProcs is applyGoProcs on the process's environment.
func goProcs(p *plan.Plan, log *slog.Logger) int { return applyGoProcs(p, os.Getenv, log) }
