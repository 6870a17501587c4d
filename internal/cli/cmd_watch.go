package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/onairhq/onair/control"
	"github.com/onairhq/onair/events"
)

// watchContext is how long `onair status -watch` runs: until Ctrl-C
// (tests replace it).
var watchContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// watchEvents follows the show's events, one line each, reconnecting (from
// the last event it saw) when the stream breaks, until interrupted. It
// gives up at once on an answer that will not change by asking again (not
// an onair show, a wrong token).
func watchEvents(c *control.Client, stdout, stderr io.Writer) int {
	ctx, stop := watchContext()
	defer stop()
	var after uint64
	backoff := 500 * time.Millisecond
	for {
		var err error
		seen := after
		after, err = c.Watch(ctx, after, func(e events.Event) { writeEvent(stdout, e) })
		if ctx.Err() != nil {
			return 0
		}
		msg := err.Error()
		if strings.Contains(msg, "not an onair show") || strings.Contains(msg, "token") {
			fmt.Fprintf(stderr, "onair status: %v\n", err)
			return 1
		}
		if after > seen {
			backoff = 500 * time.Millisecond
		}
		fmt.Fprintf(stderr, "onair status: %v; trying again in %v\n", err, backoff)
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// writeEvent prints one event for a person: the time, what it is about
// and what happened.
func writeEvent(w io.Writer, e events.Event) {
	d, _ := e.Data.(map[string]any)
	str := func(k string) string { s, _ := d[k].(string); return s }
	num := func(k string) int64 { f, _ := d[k].(float64); return int64(f) }
	list := func(k string) string {
		var out []string
		if l, ok := d[k].([]any); ok {
			for _, x := range l {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
		}
		return strings.Join(out, " → ")
	}
	at := e.Time.Local().Format("15:04:05.000")
	switch e.Type {
	case "hello":
		op, _ := d["operator"].(map[string]any)
		fmt.Fprintf(w, "%s  watching %s on the %s backend at %v fps\n", at, str("show"), str("backend"), d["frame_rate"])
		buses, _ := op["buses"].([]any)
		for _, b := range buses {
			bm, _ := b.(map[string]any)
			line := fmt.Sprintf("%s  %-16s on air: %s", at, bm["address"], joinAny(bm["on_air"], bm["sources"]))
			if p, _ := bm["preview"].(string); p != "" {
				line += ", preview: " + p
			}
			fmt.Fprintln(w, line)
		}
		if t, ok := op["tally"].(map[string]any); ok {
			writeTally(w, at, t)
		}
	case "switch":
		line := fmt.Sprintf("%s  %-16s %s to %s asked", at, str("bus"), str("transition"), str("scene"))
		if ms := num("duration_ms"); ms > 0 {
			line = fmt.Sprintf("%s  %-16s %s to %s over %d ms asked", at, str("bus"), str("transition"), str("scene"), ms)
		}
		if tc := str("at"); tc != "" {
			line += " for " + tc
		}
		if o := str("origin"); o != "" {
			line += " (" + o + ")"
		}
		fmt.Fprintln(w, line)
	case "on_air":
		tc := ""
		if s := str("timecode"); s != "" {
			tc = " " + s
		}
		fmt.Fprintf(w, "%s  %-16s on air: %s (tick %d)%s\n", at, str("bus"), list("on_air"), num("tick"), tc)
	case "preview":
		fmt.Fprintf(w, "%s  %-16s preview: %s\n", at, str("bus"), str("preview"))
	case "tally":
		if t, ok := d["tally"].(map[string]any); ok {
			writeTally(w, at, t)
		}
	case "missed_deadline":
		fmt.Fprintf(w, "%s  %-16s MISSED %d deadline(s) at tick %d %s, %d in all\n", at, str("bus"), num("missed"), num("tick"), str("timecode"), num("missed_total"))
	case "source_error":
		fmt.Fprintf(w, "%s  %-16s ERROR: %s\n", at, str("source"), str("error"))
	case "source_ok":
		fmt.Fprintf(w, "%s  %-16s delivers again\n", at, str("source"))
	case "lost":
		fmt.Fprintf(w, "%s  fell behind: %d events lost\n", at, num("events"))
	case "apply":
		more := ""
		if n := num("more"); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		fmt.Fprintf(w, "%s  changed on air: %s%s\n", at, strings.ReplaceAll(list("changed"), " → ", ", "), more)
	default:
		fmt.Fprintf(w, "%s  %s %v\n", at, e.Type, e.Data)
	}
}

func joinAny(vals ...any) string {
	var out []string
	for _, v := range vals {
		if l, ok := v.([]any); ok {
			for _, x := range l {
				out = append(out, fmt.Sprint(x))
			}
		}
	}
	return strings.Join(out, " → ")
}

// writeTally prints which sources are on Program, on preview and on AUX
// buses.
func writeTally(w io.Writer, at string, t map[string]any) {
	var pgm, pvw, aux []string
	names := make([]string, 0, len(t))
	for k := range t {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, src := range names {
		x, _ := t[src].(map[string]any)
		if x["program"] == true {
			pgm = append(pgm, src)
		}
		if x["preview"] == true {
			pvw = append(pvw, src)
		}
		if l, ok := x["aux"].([]any); ok && len(l) > 0 {
			aux = append(aux, fmt.Sprintf("%s (%s)", src, joinAny(l)))
		}
	}
	none := func(l []string) string {
		if len(l) == 0 {
			return "-"
		}
		return strings.Join(l, ", ")
	}
	fmt.Fprintf(w, "%s  tally            program: %s; preview: %s; aux: %s\n", at, none(pgm), none(pvw), none(aux))
}
