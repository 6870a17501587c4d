package panics

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestAPanicBecomesAnErrorLoggedOnce(t *testing.T) {
	var log bytes.Buffer
	l := slog.New(slog.NewTextHandler(&log, nil))
	before := Recovered()
	err := Run("a band", nil, func() error {
		var s []int
		_ = s[3] // a runtime error
		return nil
	})
	var e *Error
	if !errors.As(err, &e) || e.Where != "a band" || !strings.Contains(err.Error(), "panic in a band: runtime error: index out of range") {
		t.Fatalf("error %v", err)
	}
	var re interface{ RuntimeError() }
	if !errors.As(err, &re) {
		t.Errorf("%v does not unwrap to the runtime error", err)
	}
	if !bytes.Contains(e.Stack, []byte("panics_test.go")) {
		t.Errorf("the stack does not show where it panicked:\n%s", e.Stack)
	}
	if log.Len() != 0 {
		t.Errorf("logged with no logger given: %s", log.String())
	}
	// Carried to another goroutine's recovery, it is the same error,
	// counted once; logged once however often it is handed on.
	again := Run("the node's thread", l, func() error { Rethrow(fmt.Errorf("wrapped: %w", err)); Rethrow(err); return nil })
	if again != error(e) {
		t.Errorf("carried: %v, want the band's error", again)
	}
	e.Log(l)
	if n := strings.Count(log.String(), "recovered a panic"); n != 1 || !strings.Contains(log.String(), "panics_test.go") {
		t.Errorf("logged %d times:\n%s", n, log.String())
	}
	if n := Recovered() - before; n != 1 {
		t.Errorf("%d panics counted, want 1", n)
	}
	if err := Run("nothing", l, func() error { return errors.New("plain") }); err == nil || err.Error() != "plain" {
		t.Errorf("an error that is no panic: %v", err)
	}
}
