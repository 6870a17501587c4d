package ipc

import (
	"bytes"
	"testing"
)

// FuzzParse feeds the parser arbitrary datagrams: it must never panic, and
// whatever it accepts must encode back to the very same bytes (one
// encoding per message, so a receiver and a producer never disagree on
// what was said).
func FuzzParse(f *testing.F) {
	for _, m := range validMessages() {
		f.Add(m.Append(nil))
	}
	f.Add([]byte("oair\x01\x00\x0a\x00\x02\x00")) // a short HELLO of version 2
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			if m != nil {
				t.Fatalf("Parse returned a message and an error: %v", err)
			}
			return
		}
		if again := m.Append(nil); !bytes.Equal(again, b) {
			t.Fatalf("%v parsed from %x encodes to %x", m.Type(), b, again)
		}
		if h, ok := m.(Hello); ok {
			if err := h.Picture.Check(); err != nil {
				t.Fatalf("accepted a HELLO whose picture is wrong: %v", err)
			}
		}
	})
}
