package cli

import (
	"fmt"
	"io"
	"time"
)

// progress prints how far a long command has come, on one line of stderr
// rewritten in place, only when stderr is a terminal (a log or a pipe gets
// nothing): each whole percent of total.
type progress struct {
	w     io.Writer // nil: not a terminal
	what  string
	units string // what is counted; "" is frames
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
		fmt.Fprintf(p.w, "\r%s: %d/%d %s (%d%%)", p.what, done, p.total, p.unit(), pc)
	}
}

// done ends the progress line.
func (p *progress) done() {
	if p.w != nil && p.shown >= 0 {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) unit() string {
	if p.units == "" {
		return "frames"
	}
	return p.units
}

// during shows the seconds of d passing as progress (a terminal only)
// until the returned stop is called.
func during(stderr io.Writer, what string, d time.Duration) (stop func()) {
	p := newProgress(stderr, what, int(d.Round(time.Second)/time.Second))
	p.units = "s"
	if p.w == nil {
		return func() {}
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-tick.C:
				p.frame(min(n, p.total))
			}
		}
	}()
	return func() {
		close(done)
		<-ended
		p.done()
	}
}
