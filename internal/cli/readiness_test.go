package cli

import (
	"regexp"
	"testing"
	"time"
)

// TestRunSaysHowLongItWaitedForReadiness: onair run says how long its
// start waited for the show's parts to be ready before going on air, and
// which source was the slowest; the wait is part of the start-up it
// reports, never more.
func TestRunSaysHowLongItWaitedForReadiness(t *testing.T) {
	show := writeRunShow(t)
	rc, out, errs := runCLI(t, "run", "-duration", "1s", "-listen", "", show)
	if rc != 0 {
		t.Fatalf("rc=%d\n%s\n%s", rc, out, errs)
	}
	started := regexp.MustCompile(`started in (\S+)`).FindStringSubmatch(out)
	waited := regexp.MustCompile(`waited (\S+) for every part to be ready before going on air, (\S+) of it for the sources \(the slowest: (source\.\w+), (\S+)\)`).FindStringSubmatch(out)
	if started == nil || waited == nil {
		t.Fatalf("stdout does not say how long the start waited for readiness:\n%s", out)
	}
	d := make([]time.Duration, 0, 4)
	for _, s := range []string{started[1], waited[1], waited[2], waited[4]} {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		d = append(d, v)
	}
	if !(d[3] <= d[2] && d[2] <= d[1] && d[1] <= d[0]) || d[3] <= 0 {
		t.Errorf("start-up %v, waited %v, for the sources %v, the slowest %v: each must be part of the one before, and the slowest source more than 0", d[0], d[1], d[2], d[3])
	}
}
