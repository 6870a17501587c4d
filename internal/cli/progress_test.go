package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressOnlyOnATerminal: to a pipe or a file, nothing; to a
// terminal, one line rewritten at each whole percent, ended once.
func TestProgressOnlyOnATerminal(t *testing.T) {
	var pipe bytes.Buffer
	p := newProgress(&pipe, "onair media: x", 300)
	for i := 1; i <= 300; i++ {
		p.frame(i)
	}
	p.done()
	during(&pipe, "onair bench: measuring", 3*time.Second)()
	if pipe.Len() != 0 {
		t.Errorf("progress to a non-terminal: %q", pipe.String())
	}
	var term bytes.Buffer
	p = &progress{w: &term, what: "onair media: x", total: 300, shown: -1}
	for i := 1; i <= 300; i++ {
		p.frame(i)
	}
	p.done()
	s := term.String()
	if n := strings.Count(s, "\r"); n != 101 || !strings.HasSuffix(s, "\ronair media: x: 300/300 frames (100%)\n") {
		t.Errorf("%d updates, ending %q; want 101 (0%% to 100%%) and the last at 300/300", n, s[max(0, len(s)-60):])
	}
}
