package runtime

// The clock.
//
// Invariants:
//   - Now returns CLOCK_MONOTONIC in nanoseconds, the clock the loops'
//     timerfds are armed on, so a deadline computed from Now is a deadline
//     the kernel understands with TFD_TIMER_ABSTIME.
//   - Now never goes backwards and costs no system call: it is Go's own
//     monotonic reading (vDSO) plus an offset measured once at start-up.

import (
	"time"

	"golang.org/x/sys/unix"
)

var (
	clockBase   = time.Now()
	clockOffset int64 // CLOCK_MONOTONIC at clockBase, in ns
)

func init() {
	// The narrowest of several samples: a goroutine switch between the
	// readings would otherwise skew the offset.
	best := time.Duration(1<<63 - 1)
	for i := 0; i < 16; i++ {
		var ts unix.Timespec
		before := time.Since(clockBase)
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			// Cannot happen on Linux; NewEventLoop refuses to start.
			clockOffset = -1
			return
		}
		after := time.Since(clockBase)
		if w := after - before; w < best {
			best = w
			clockOffset = ts.Nano() - int64(before+after)/2
		}
	}
}

// Now is the monotonic clock in nanoseconds (CLOCK_MONOTONIC).
func Now() int64 { return int64(time.Since(clockBase)) + clockOffset }
