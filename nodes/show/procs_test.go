package show

import (
	"bytes"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/onairhq/onair/internal/value"
	"github.com/onairhq/onair/plan"
)

// canvas go_procs sets Go's processors as the show starts; 0 leaves them,
// or restores Go's default after a show that set them, and GOMAXPROCS in
// the environment wins, with a log line saying so.
func TestGoProcs(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	noEnv := func(string) string { return "" }
	withEnv := func(k string) string {
		if k == "GOMAXPROCS" {
			return "5"
		}
		return ""
	}
	cases := []struct {
		name     string
		procs    int // canvas go_procs (absent when 0)
		getenv   func(string) string
		start    int // GOMAXPROCS before the show starts
		want     int
		logWants string
	}{
		{"0 leaves Go's default", 0, noEnv, 7, 7, ""},
		{"2 sets 2", 2, noEnv, 7, 2, "go_procs=2 was=7"},
		{"the same again says nothing", 2, noEnv, 2, 2, ""},
		{"GOMAXPROCS in the environment wins", 2, withEnv, 5, 5, "GOMAXPROCS=5 go_procs=2 processors=5"},
		{"0 after a show set them restores Go's default", 0, noEnv, 2, def, "default processors again"},
		{"0 again leaves them", 0, noEnv, 3, 3, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runtime.GOMAXPROCS(c.start)
			p := &plan.Plan{Canvas: value.Settings{}}
			if c.procs != 0 {
				p.Canvas["go_procs"] = c.procs
			}
			var logged bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logged, nil))
			if got := applyGoProcs(p, c.getenv, log); got != c.want {
				t.Errorf("applyGoProcs = %d, want %d", got, c.want)
			}
			if got := runtime.GOMAXPROCS(0); got != c.want {
				t.Errorf("GOMAXPROCS %d, want %d", got, c.want)
			}
			if c.logWants == "" && logged.Len() > 0 || !strings.Contains(logged.String(), c.logWants) {
				t.Errorf("log %q, want %q", logged.String(), c.logWants)
			}
		})
	}
}
