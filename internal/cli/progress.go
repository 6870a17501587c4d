package cli

import (
	"fmt"
	"io"
)

// progress prints how far a long command has come, on one line of stderr
// rewritten in place, only when stderr is a terminal (a log or a pipe gets
// nothing): each whole percent of total.
type progress struct {
	w     io.Writer // nil: not a terminal
	what  string
	total int
	shown int // the last percent printed; -1 before
}

func newProgress(stderr io.Writer, what string, total int) *progress {
	p := &progress{what: what, total: total, shown: -1}
	if isTerminal(stderr) && total > 0 {
		p.w = stderr
	}
	return p
}

// frame records that done of total are done.
func (p *progress) frame(done int) {
	if p.w == nil {
		return
	}
	if pc := done * 100 / p.total; pc != p.shown {
		p.shown = pc
		fmt.Fprintf(p.w, "\r%s: %d/%d frames (%d%%)", p.what, done, p.total, pc)
	}
}

// done ends the progress line.
func (p *progress) done() {
	if p.w != nil && p.shown >= 0 {
		fmt.Fprintln(p.w)
	}
}
