//go:build unix

package cpu

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) the process has used so far: on a
// machine shared with other work it measures the cost of a benchmark more
// steadily than the wall clock does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
