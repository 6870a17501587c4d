package control

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/onairhq/onair/events"
)

// TestWatchSkipsMalformedEvents is issue 27's item 11: `onair status
// -watch` against a server whose event is cut off inside an escape
// (data: {"type":"x\) panicked in cleanJSON. A malformed event is skipped
// and the events after it arrive.
func TestWatchSkipsMalformedEvents(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(VersionHeader, "x")
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"type\":\"x\\\n\n"+
			"data: {\"type\":\"x\\u00\n\n"+
			"data: \"\\\n\n"+
			"data: {\"seq\":7,\"type\":\"cut\\u001b[2J\"}\n\n")
	}))
	defer srv.Close()
	c := &Client{Addr: srv.Listener.Addr().String()}
	var got []events.Event
	last, err := c.Watch(context.Background(), 0, func(e events.Event) { got = append(got, e) })
	if err == nil || !strings.Contains(err.Error(), "ended the stream") {
		t.Errorf("Watch: %v, want the stream ended", err)
	}
	if len(got) != 1 || got[0].Type != "cut[2J" || last != 7 {
		t.Errorf("Watch saw %+v (last %d), want the one well-formed event, cleaned, seq 7", got, last)
	}
}

// FuzzCleanJSON: any bytes are read without a panic; valid JSON stays
// valid, with no control character left in its strings, and cleaning it
// again changes nothing.
func FuzzCleanJSON(f *testing.F) {
	for _, s := range []string{`{"type":"x\`, `"\u00`, `"\`, `{"a":"\u001b[2J\n\t","b":[1,"\u202e"]}`, "\"\x85\xff\"", `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := cleanJSON(b)
		if !json.Valid(b) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("cleanJSON(%q) = %q, not JSON", b, out)
		}
		if again := cleanJSON(out); string(again) != string(out) {
			t.Fatalf("cleaning %q again gives %q", out, again)
		}
		// Numbers stay text: valid JSON may hold one no float64 can
		// (1e700), which is not cleanJSON's business.
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				for _, r := range x {
					if unwanted(r) {
						t.Fatalf("cleanJSON(%q) = %q keeps %U", b, out, r)
					}
				}
				if !utf8.ValidString(x) {
					t.Fatalf("cleanJSON(%q) = %q: invalid UTF-8", b, out)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for k, e := range x {
					walk(k)
					walk(e)
				}
			}
		}
		walk(v)
	})
}
