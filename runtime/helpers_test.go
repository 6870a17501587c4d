package runtime

import (
	"os"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/onairhq/onair/internal/testwait"
)

// fdTable maps this process's descriptors to what they are.
func fdTable(t testing.TB) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("reading /proc/self/fd: %v", err)
	}
	m := map[string]string{}
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		m[e.Name()] = target
	}
	return m
}

// settle waits until the goroutine count falls to want (goroutines exit
// asynchronously), for at most eventBound, and returns the last count.
func settle(want int) int {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(eventBound)
	n := goruntime.NumGoroutine()
	for n > want && time.Now().Before(deadline) {
		<-tick.C
		n = goruntime.NumGoroutine()
	}
	return n
}

// leakCheck records descriptors and goroutines now and, at cleanup, fails
// the test if either grew.
func leakCheck(t *testing.T) {
	t.Helper()
	before, gs := fdTable(t), goruntime.NumGoroutine()
	t.Cleanup(func() {
		if n := settle(gs); n > gs {
			buf := make([]byte, 1<<16)
			buf = buf[:goruntime.Stack(buf, true)]
			t.Errorf("goroutines: %d before, %d after; stacks:\n%s", gs, n, buf)
		}
		after := fdTable(t)
		for fd, what := range after {
			if before[fd] != what {
				t.Errorf("descriptor %s (%s) was not open before the test", fd, what)
			}
		}
		for fd, what := range before {
			if after[fd] != what {
				t.Errorf("descriptor %s (%s) was closed by the test", fd, what)
			}
		}
	})
}

// eventBound is how long a test waits for something that must happen: a
// loop to go to sleep, a group to restart, a number of frames to pass. It
// bounds a wait for an event, never a measurement; on an idle machine every
// event comes within a second or two, and the bound only keeps a broken
// runtime from hanging the suite on a machine busy with other work.
const eventBound = testwait.Bound

func (l *EventLoop) isSleeping() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sleeping
}
