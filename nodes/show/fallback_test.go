package show

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/onairhq/onair/runtime"
)

// A failing source logs a new error once, counts every failure, waits a
// RetryEvery before its next try and says which fallback it shows; once its
// input works it clears the source's error and says it had been failing.
func TestFallbackReportsOnceAndWaitsToRetry(t *testing.T) {
	for _, tc := range []struct{ onError, says string }{
		{"black", "source shows black until its file is usable"},
		{"hold", "source holds its last good frame until its file is usable"},
	} {
		st := &SourceState{Address: "source.a"}
		var logged bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logged, nil))
		var stats runtime.NodeStats
		fb := NewFallback(st, tc.onError, "its file is usable")
		if !fb.Due() || fb.Failing() || fb.Hold != (tc.onError == "hold") {
			t.Fatalf("%s: a new fallback: due %v, failing %v, hold %v", tc.onError, fb.Due(), fb.Failing(), fb.Hold)
		}
		missing := errors.New("open a.yuv: no such file or directory")
		fb.Fail(log, &stats, missing)
		fb.Fail(log, &stats, missing)
		if fb.Due() || !fb.Failing() {
			t.Errorf("%s: right after a failure: due %v, failing %v; want a wait of RetryEvery", tc.onError, fb.Due(), fb.Failing())
		}
		if n := stats.Errors.Load(); n != 2 {
			t.Errorf("%s: %d errors counted, want 2", tc.onError, n)
		}
		if n := strings.Count(logged.String(), tc.says); n != 1 {
			t.Errorf("%s: %q logged %d times, want once:\n%s", tc.onError, tc.says, n, logged.String())
		}
		if st.lastErr != missing.Error() {
			t.Errorf("%s: the source's last error is %q", tc.onError, st.lastErr)
		}
		if !fb.Recovered() || fb.Recovered() || fb.Failing() || st.lastErr != "" {
			t.Errorf("%s: recovering: failing %v, last error %q", tc.onError, fb.Failing(), st.lastErr)
		}
	}
}
