package media

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/onairhq/onair/frame"
	"github.com/onairhq/onair/internal/panics"
	"github.com/onairhq/onair/internal/peer"
	"github.com/onairhq/onair/internal/testwait"
)

// A frame that panics while it is written to ffmpeg (its luma plane is
// shorter than its rows: a bug upstream) ends that process as an exit
// does: reported with the panic, the process killed and reaped, a new one
// started, and the next frames written; the process and the output live.
func TestFFmpegOutputSurvivesAPanicFeedingIt(t *testing.T) {
	peer.NeedFFmpeg(t)
	var ev events
	o, err := StartFFmpeg(FFmpegConfig{Args: []string{"-f", "null", "-"}, Format: frame.NV12, Width: 160, Height: 90,
		Rate: frame.Rational{Num: 25, Den: 1}, Queue: 4, StallTimeout: eventBound, BackoffMin: 20 * time.Millisecond, OnEvent: ev.add})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	good := func() {
		g, _ := frame.New(frame.NV12, 160, 90)
		o.Write(g)
		g.Release()
	}
	good()
	testwait.Until(t, testwait.Bound, "the first process to take a frame", func() bool { return o.Stats().Written >= 1 })
	pid := o.PID()
	bad, _ := frame.New(frame.NV12, 160, 90)
	bad.Data[0] = bad.Data[0][1:160]
	o.Write(bad)
	bad.Release()
	testwait.Until(t, testwait.Bound, "the panic to be reported", func() bool { n, _ := ev.count(FFmpegExited); return n >= 1 })
	_, last := ev.count(FFmpegExited)
	if pe := (*panics.Error)(nil); !errors.As(last.Err, &pe) || last.PID != pid {
		t.Fatalf("exit event %+v: want process %d's, with the panic", last, pid)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d after the panic: %v, want it gone (killed and reaped)", pid, err)
	}
	testwait.Until(t, testwait.Bound, "a new process taking frames", func() bool {
		good()
		st := o.Stats()
		return st.Restarts >= 1 && st.Running && st.PID != pid && st.Written >= 2
	})
}
