package chromium

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestLostConnectionLogs: a show that stops closes the connection and
// that is logged at info, with no "error=<nil>"; a broken one is a
// warning with its error.
func TestLostConnectionLogs(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(slog.NewTextHandler(&b, nil))
	logLost(log, nil)
	if s := b.String(); !strings.Contains(s, "level=INFO") || strings.Contains(s, "error=") {
		t.Errorf("a clean close logs %q", s)
	}
	b.Reset()
	logLost(log, errors.New("connection reset by peer"))
	if s := b.String(); !strings.Contains(s, "level=WARN") || !strings.Contains(s, "connection reset by peer") {
		t.Errorf("a broken connection logs %q", s)
	}
}
