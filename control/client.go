package control

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Client talks to a running show's server. It reads at most
// MaxResponseBytes of an answer, refuses one without the Onair-Version
// header (another program on that port), and strips control characters
// from everything it hands on, so that what it prints cannot drive the
// terminal.
type Client struct {
	Addr  string // host:port, or http:// or https:// with host:port
	Token string
	// CA names a PEM file of the CA certificates an https:// server's
	// certificate must chain to; "" trusts the system's roots.
	CA   string
	HTTP *http.Client // nil: a client that follows no redirect, with a DefaultClientTimeout (POST /plan: ApplyWait)
}

// ErrNoAnswer: the request may have been sent, but no answer came back
// (the show could not be reached, or the connection broke or timed out
// before the answer). Whether it was carried out is for the caller to
// find out.
var ErrNoAnswer = errors.New("no answer from the show")

func (c *Client) url(path string) string {
	addr := c.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	if strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://") {
		return strings.TrimSuffix(addr, "/") + path
	}
	return "http://" + addr + path
}

// do sends a request and returns the answer's body: JSON from an onair
// server, cleaned of control characters.
func (c *Client) do(method, path string, body []byte) ([]byte, error) {
	return c.doWithin(DefaultClientTimeout, method, path, body)
}

// doWithin is do, waiting up to timeout for the answer (unless c.HTTP is
// set: its own).
func (c *Client) doWithin(timeout time.Duration, method, path string, body []byte) ([]byte, error) {
	hc := c.HTTP
	if hc == nil {
		tr, err := c.transport(0)
		if err != nil {
			return nil, err
		}
		hc = &http.Client{
			Timeout:       timeout,
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	req, err := http.NewRequest(method, c.url(path), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(OriginHeader, "cli")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the show at %s: %v (is `onair run` running with -listen %s?): %w", c.url(""), err, c.Addr, ErrNoAnswer)
	}
	defer resp.Body.Close()
	if resp.Header.Get(VersionHeader) == "" {
		return nil, fmt.Errorf("%s is not an onair show: it answered %s %s with %q and no %s header; check -addr (onair run prints the address it serves)",
			c.url(""), method, path, clean(resp.Status), VersionHeader)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer from %s: %v: %w", method, path, c.url(""), err, ErrNoAnswer)
	}
	if len(b) > MaxResponseBytes {
		return nil, fmt.Errorf("%s %s: the answer from %s is larger than %d MiB, more than any show's; check -addr", method, path, c.url(""), MaxResponseBytes>>20)
	}
	if resp.StatusCode/100 != 2 {
		var e struct{ Error string }
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("%s %s: %s", method, path, clean(e.Error))
		}
		return nil, fmt.Errorf("%s %s: %s", method, path, clean(resp.Status))
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("%s %s: %s answered with something other than JSON; check -addr", method, path, c.url(""))
	}
	return cleanJSON(b), nil
}

// Status returns the show's status as JSON, cleaned of control characters.
func (c *Client) Status() ([]byte, error) { return c.do("GET", "/status", nil) }

// Plan returns the plan on air, as JSON.
func (c *Client) Plan() ([]byte, error) { return c.do("GET", "/plan", nil) }

// Apply sends a new plan (JSON) to the show on air (POST /plan) and returns
// the server's answer: what it changed. It waits ApplyWait, as long as
// the server may work on it; an error wrapping ErrNoAnswer leaves open
// whether the show took the plan (GET /plan tells).
func (c *Client) Apply(planJSON []byte) ([]byte, error) {
	return c.doWithin(ApplyWait, "POST", "/plan", planJSON)
}

// Switch asks for a cut, fade or wipe to scene on bus, and checks that the
// server says it did so.
func (c *Client) Switch(bus, scene, kind string, d time.Duration) error {
	dur := ""
	if d > 0 {
		dur = d.String()
	}
	return c.SwitchAt(bus, scene, kind, dur, "")
}

// SwitchAt is Switch on the tick labelled at (HH:MM:SS:FF; "" is the next
// tick) with the duration as an operator writes it, which the show reads
// (ParseDuration: "15f", "12", "0.5s"; "" is its default).
func (c *Client) SwitchAt(bus, scene, kind, duration, at string) error {
	req := SwitchRequest{Scene: scene, At: at, Duration: duration}
	b, _ := json.Marshal(req)
	path := "/buses/" + bus + "/" + kind
	ans, err := c.do("POST", path, b)
	if err != nil {
		return err
	}
	var done struct{ Scene, Transition string }
	if json.Unmarshal(ans, &done) != nil || done.Transition != kind || done.Scene != scene {
		return fmt.Errorf("POST %s: the server did not confirm the %s to %s (it answered %.200s)", path, kind, scene, ans)
	}
	return nil
}

// unwanted is a character that must not reach a terminal from a server:
// control characters (C0, DEL, C1), bidirectional overrides and line or
// paragraph separators.
func unwanted(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// spaceFor is what replaces an unwanted character: a space for one that
// separates words (tab, newline), nothing for the rest.
func spaceFor(r rune) string {
	switch r {
	case '\t', '\n', '\r', '\u2028', '\u2029':
		return " "
	}
	return ""
}

// clean is s without control characters (see unwanted) and with invalid
// UTF-8 replaced, safe to print to a terminal.
func clean(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case unwanted(r):
			b.WriteString(spaceFor(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// cleanJSON is b with control characters taken out of its strings,
// whether written raw or as escapes, and invalid UTF-8 replaced;
// everything else, layout and order included, stays as it was. Valid JSON
// stays valid. It reads any bytes without going past their end: an escape
// cut off by the end of b (not JSON) is dropped.
func cleanJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString := false
	for i := 0; i < len(b); {
		c := b[i]
		if !inString {
			out = append(out, c)
			inString = c == '"'
			i++
			continue
		}
		switch {
		case c == '"':
			out = append(out, c)
			inString = false
			i++
		case c == '\\' && i+1 < len(b) && b[i+1] == 'u':
			// In valid JSON four hex digits follow.
			if i+6 > len(b) {
				return out
			}
			v, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 32)
			if r := rune(v); err == nil && unwanted(r) {
				out = append(out, spaceFor(r)...)
			} else {
				out = append(out, b[i:i+6]...)
			}
			i += 6
		case c == '\\':
			if i+1 >= len(b) {
				return out
			}
			switch b[i+1] {
			case 'b', 'f':
			case 'n', 'r', 't':
				out = append(out, ' ')
			default:
				out = append(out, b[i:i+2]...)
			}
			i += 2
		default:
			r, n := utf8.DecodeRune(b[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				out = utf8.AppendRune(out, utf8.RuneError)
			case unwanted(r):
				out = append(out, spaceFor(r)...)
			default:
				out = append(out, b[i:i+n]...)
			}
			i += n
		}
	}
	return out
}
