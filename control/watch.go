package control

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/onairhq/onair/events"
)

// MaxEventBytes bounds one event the client reads (its data line). The
// largest is the hello, which names every bus's scenes as the plan does,
// so the bound is the plan's.
const MaxEventBytes = MaxPlanBytes

// Watch follows the show's GET /events, calling f for each event (the
// first is "hello", the state to start from) until ctx ends or the stream
// does. after resumes after that event (Last-Event-ID; 0: from now). It
// returns the Seq of the last event it saw, so a caller can reconnect
// from there. Like every answer the client reads, events must come from
// an onair server, are bounded in size and cleaned of control characters.
func (c *Client) Watch(ctx context.Context, after uint64, f func(events.Event)) (uint64, error) {
	hc := c.HTTP
	if hc == nil {
		// No overall timeout: the stream lasts. The connection and the
		// answer's headers are bounded, and the server sends a comment
		// every DefaultEventKeepAlive.
		tr, err := c.transport(5 * time.Second)
		if err != nil {
			return after, err
		}
		hc = &http.Client{
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	req, err := http.NewRequestWithContext(ctx, "GET", c.url("/events"), nil)
	if err != nil {
		return after, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(after, 10))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return after, fmt.Errorf("cannot reach the show at %s: %v (is `onair run` running with -listen %s?)", c.url(""), err, c.Addr)
	}
	defer resp.Body.Close()
	if resp.Header.Get(VersionHeader) == "" {
		return after, fmt.Errorf("%s is not an onair show: it answered GET /events with %q and no %s header; check -addr", c.url(""), clean(resp.Status), VersionHeader)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		dec := json.NewDecoder(&limitedReader{r: resp.Body, n: MaxResponseBytes})
		if dec.Decode(&e) == nil && e.Error != "" {
			return after, fmt.Errorf("GET /events: %s", clean(e.Error))
		}
		return after, fmt.Errorf("GET /events: %s", clean(resp.Status))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return after, fmt.Errorf("GET /events: %s answered with %q, not an event stream; check -addr", c.url(""), clean(ct))
	}
	// A keep-alive comes every DefaultEventKeepAlive: a stream silent for
	// much longer is dead.
	idle := time.AfterFunc(3*DefaultEventKeepAlive, func() { resp.Body.Close() })
	defer idle.Stop()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4096), MaxEventBytes)
	var data string
	for sc.Scan() {
		idle.Reset(3 * DefaultEventKeepAlive)
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		case line == "" && data != "":
			var e events.Event
			// An event that is not JSON is skipped, as one of an unknown
			// shape is.
			if json.Valid([]byte(data)) && json.Unmarshal(cleanJSON([]byte(data)), &e) == nil {
				if e.Seq > after && e.Type != "lost" {
					after = e.Seq
				}
				f(e)
			}
			data = ""
		}
	}
	if ctx.Err() != nil {
		return after, nil
	}
	if err := sc.Err(); err != nil {
		return after, fmt.Errorf("GET /events: the stream from %s broke: %v", c.url(""), err)
	}
	return after, fmt.Errorf("GET /events: the show at %s ended the stream", c.url(""))
}

// limitedReader reads at most n bytes of r.
type limitedReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("answer too large")
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= k
	return k, err
}
