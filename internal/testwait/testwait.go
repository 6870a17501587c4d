// Package testwait is how the project's tests wait for something another
// goroutine, thread or process does: poll the condition itself, with a
// generous bound, never a sleep that hopes the machine is idle.
package testwait

import (
	"testing"
	"time"
)

// Bound is the default bound: long enough for a busy 2-core CI machine,
// short enough that a hang fails the test rather than the run.
const Bound = time.Minute

// Until polls cond every 10 ms until it holds, failing the test with what
// it waited for once bound has passed.
func Until(t testing.TB, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", bound, what)
		}
		<-tick.C
	}
}
