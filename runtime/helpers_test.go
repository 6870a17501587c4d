package runtime

import (
	"os"
	goruntime "runtime"
	"testing"
	"time"
)

// openFDs counts this process's open descriptors.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("reading /proc/self/fd: %v", err)
	}
	return len(ents)
}

// settle waits until the goroutine count falls to want (goroutines exit
// asynchronously) and returns the last count.
func settle(want int) int {
	n := goruntime.NumGoroutine()
	for i := 0; i < 200 && n > want; i++ {
		time.Sleep(10 * time.Millisecond)
		n = goruntime.NumGoroutine()
	}
	return n
}

// leakCheck records descriptors and goroutines now and, at cleanup, fails
// the test if either grew.
func leakCheck(t *testing.T) {
	t.Helper()
	fds, gs := openFDs(t), goruntime.NumGoroutine()
	t.Cleanup(func() {
		if n := settle(gs); n > gs {
			buf := make([]byte, 1<<16)
			buf = buf[:goruntime.Stack(buf, true)]
			t.Errorf("goroutines: %d before, %d after; stacks:\n%s", gs, n, buf)
		}
		if n := openFDs(t); n != fds {
			t.Errorf("open descriptors: %d before, %d after", fds, n)
		}
	})
}

// eventually polls cond until it holds or 5 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 5s waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (l *EventLoop) isSleeping() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sleeping
}
