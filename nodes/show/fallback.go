package show

import (
	"log/slog"
	"time"

	"github.com/onairhq/onair/runtime"
)

// Fallback is every source's answer to an input it cannot use (a file
// missing, broken or not what the source declares; a decoder that fails):
// the show stays on air. The source sends black, or with on_error = "hold"
// its last good frame, at its own pace, so the buses keep their deadlines;
// it tries the input again every RetryEvery; each failure is counted, the
// source's last error and, when it is new, logged once, saying which of
// the two the source shows. The frames, host or device, are the backend's:
// Fallback is the policy, and one for every backend's sources.
type Fallback struct {
	// Hold is on_error = "hold": the last good frame, not black.
	Hold bool

	st      *SourceState
	until   string // when the fallback ends, for the log: "its file is usable"
	next    time.Time
	failing bool
}

// RetryEvery is how often a failing source tries its input again.
const RetryEvery = time.Second

// NewFallback is the policy of source st with its on_error param ("black"
// or "hold"); until ends the log line ("source shows black until ...").
func NewFallback(st *SourceState, onError, until string) *Fallback {
	return &Fallback{Hold: onError == "hold", st: st, until: until}
}

// Due reports whether the input may be tried now: at once, then
// RetryEvery after each failure.
func (f *Fallback) Due() bool { return !time.Now().Before(f.next) }

// Failing reports whether the source sends its fallback (a failure since
// it last recovered).
func (f *Fallback) Failing() bool { return f.failing }

// Fail counts err in stats, makes it the source's last error (logged when
// it is a new one) and puts the next try RetryEvery from now.
func (f *Fallback) Fail(log *slog.Logger, stats *runtime.NodeStats, err error) {
	stats.Errors.Add(1)
	if f.st.Fail(err) {
		what := "source shows black until " + f.until
		if f.Hold {
			what = "source holds its last good frame until " + f.until
		}
		log.Error(what, "error", err)
	}
	f.failing = true
	f.next = time.Now().Add(RetryEvery)
}

// Recovered clears the source's last error once its input works again;
// it reports whether the source had been failing.
func (f *Fallback) Recovered() bool {
	f.st.ClearErr()
	was := f.failing
	f.failing = false
	return was
}
