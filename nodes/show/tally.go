package show

// Tally out and tally by visibility. A source is on a bus's picture when
// some layer of a scene the bus draws shows it (visibleLayers): not
// transparent, on the canvas, and not hidden under one opaque layer above
// it that fills its rect. /status, /events, the page and TSL all read the
// tally computeTally works out from that.
//
// For each of the plan's tally blocks the show sends TSL UMD 5.0 (package
// tsl5) to its destination: a display per source (its index in the sorted
// list of sources, its name as the show writes it as text), on the block's
// screen, red on every lamp while it is on a Program
// bus's picture, green while it is on a preview, off otherwise; on every
// change of the tally and once a second. A destination that cannot be
// reached is tried again on the next send, and logged once per error.

import (
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/onairhq/onair/plan"
	"github.com/onairhq/onair/tsl5"
)

// visibleLayers are the layers of sc that show on a w×h canvas.
func (b *State) visibleLayers(sc *plan.Scene, w, h int) []plan.Layer {
	var out []plan.Layer
	for i, l := range sc.Layers {
		r := clip(l.Rect, w, h)
		if l.Opacity <= 0 || r[2] <= 0 || r[3] <= 0 {
			continue
		}
		hidden := false
		for j, o := range sc.Layers {
			above := o.Z > l.Z || o.Z == l.Z && j > i
			if above && o.Opacity >= 1 && (o.Fit == "stretch" || o.Fit == "cover") && !b.mayBeKeyed(o.Source) && contains4(o.Rect, r) {
				hidden = true
				break
			}
		}
		if !hidden {
			out = append(out, l)
		}
	}
	return out
}

// mayBeKeyed reports whether a source's pictures may carry alpha (a
// browser's), so that it hides nothing beneath it.
func (b *State) mayBeKeyed(src string) bool {
	s := b.sourceMap()[src]
	return s == nil || s.browser.Load() != nil
}

// clip is r's part on a w×h canvas.
func clip(r [4]int, w, h int) [4]int {
	x0, y0 := max(r[0], 0), max(r[1], 0)
	x1, y1 := min(r[0]+r[2], w), min(r[1]+r[3], h)
	return [4]int{x0, y0, x1 - x0, y1 - y0}
}

// contains4 reports whether rect a holds rect b whole.
func contains4(a, b [4]int) bool {
	return a[0] <= b[0] && a[1] <= b[1] && a[0]+a[2] >= b[0]+b[2] && a[1]+a[3] >= b[1]+b[3]
}

// canvasSize is the show's canvas in pixels.
func (b *State) canvasSize() (int, int) {
	if s := b.plan.Size; s.W > 0 && s.H > 0 {
		return s.W, s.H
	}
	return 1 << 30, 1 << 30 // nothing is off an unknown canvas
}

// tallyOut sends the tally as TSL 5.0 to the canvas's destinations.
type tallyOut struct {
	b       *State
	dests   []tsl5.Destination
	screens []uint16 // each destination's screen
	conns   []net.Conn
	errs    []string // the last error of each destination, logged once
	log     *slog.Logger
	kick    chan struct{}
	stop    chan struct{}
	done    sync.WaitGroup
}

// startTally starts the sender when the plan has tally blocks (checked by
// the show language; one whose destination does not parse is skipped).
func startTally(b *State) *tallyOut {
	var dests []tsl5.Destination
	var screens []uint16
	for _, t := range b.plan.Tallies {
		if d, err := tsl5.NewDestination(t.Transport, t.Address, t.Port); err == nil {
			dests = append(dests, d)
			screens = append(screens, uint16(t.Screen))
		}
	}
	if len(dests) == 0 {
		return nil
	}
	log := b.opts.Log
	if log == nil {
		log = slog.Default()
	}
	t := &tallyOut{b: b, dests: dests, screens: screens, conns: make([]net.Conn, len(dests)), errs: make([]string, len(dests)),
		log: log, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	t.done.Add(1)
	go t.run()
	return t
}

// changed asks for a send now; it never waits.
func (t *tallyOut) changed() {
	if t == nil {
		return
	}
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

func (t *tallyOut) close() {
	if t == nil {
		return
	}
	close(t.stop)
	t.done.Wait()
}

func (t *tallyOut) run() {
	defer t.done.Done()
	defer func() {
		for _, c := range t.conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		t.send()
		select {
		case <-t.stop:
			return
		case <-t.kick:
		case <-tick.C:
		}
	}
}

// packet is the tally of every source as one TSL packet for a screen
// (before it is cut to size).
func (t *tallyOut) packet(st OperatorStatus, screen uint16) *tsl5.Packet {
	p := &tsl5.Packet{Screen: screen}
	for i, src := range st.Sources {
		c := tsl5.Off
		switch x := st.Tally[src]; {
		case x.Program:
			c = tsl5.Red
		case x.Preview:
			c = tsl5.Green
		}
		p.Displays = append(p.Displays, tsl5.Display{Index: uint16(i), RH: c, Text: c, LH: c, Brightness: 3, Label: strings.TrimPrefix(src, "source.")})
	}
	return p
}

func (t *tallyOut) send() {
	st := t.b.op.status()
	pkts := map[uint16][][]byte{}
	for i, d := range t.dests {
		sc := t.screens[i]
		if pkts[sc] == nil {
			pkts[sc] = t.packet(st, sc).Encode()
		}
		err := t.sendTo(i, d, pkts[sc])
		msg := ""
		if err != nil {
			msg = err.Error()
			if t.conns[i] != nil {
				t.conns[i].Close()
				t.conns[i] = nil
			}
		}
		if msg != t.errs[i] {
			if msg != "" {
				t.log.Warn("tally: cannot send TSL 5.0; trying again each second", "destination", d.String(), "error", msg)
			} else {
				t.log.Info("tally: sending TSL 5.0 again", "destination", d.String())
			}
			t.errs[i] = msg
		}
	}
}

func (t *tallyOut) sendTo(i int, d tsl5.Destination, pkts [][]byte) error {
	if t.conns[i] == nil {
		c, err := net.DialTimeout(d.Transport, d.Addr, time.Second)
		if err != nil {
			return err
		}
		t.conns[i] = c
	}
	c := t.conns[i]
	c.SetWriteDeadline(time.Now().Add(time.Second))
	for _, p := range pkts {
		if d.Transport == "tcp" {
			p = tsl5.Wrap(p)
		}
		if _, err := c.Write(p); err != nil {
			return err
		}
	}
	return nil
}
