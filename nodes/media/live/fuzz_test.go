package live

import (
	"encoding/binary"
	"testing"
)

// FuzzContinuity: any bytes, cut anywhere, are counted without a panic,
// and the count does not depend on where the stream was cut.
func FuzzContinuity(f *testing.F) {
	p := make([]byte, 2*tsPacket)
	for i := 0; i < 2; i++ {
		p[i*tsPacket], p[i*tsPacket+3] = 0x47, 0x10|byte(i*2) // payload only; counters 0, 2: one error
	}
	f.Add(p, 100)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		var whole, parts continuity
		n := whole.feed(b)
		if cut < 0 || cut > len(b) {
			cut = len(b) / 2
		}
		m := parts.feed(b[:cut]) + parts.feed(b[cut:])
		if n != m {
			t.Fatalf("%d errors whole, %d cut at %d", n, m, cut)
		}
	})
}

// FuzzReorder: any sequence of sequence numbers is put in order without a
// panic; every packet is handed on once, or counted dropped, and what is
// handed on is in increasing order.
func FuzzReorder(f *testing.F) {
	f.Add([]byte{0, 1, 0, 3, 0, 2, 0, 9, 0, 100, 0, 5})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r reorder
		var out []byte
		pushed := int64(0)
		for i := 0; i+1 < len(b); i += 2 {
			seq := binary.BigEndian.Uint16(b[i:])
			out = r.push(seq, []byte{b[i], b[i+1]}, out)
			pushed++
		}
		for i := 2; i+1 < len(out); i += 2 {
			prev, cur := binary.BigEndian.Uint16(out[i-2:]), binary.BigEndian.Uint16(out[i:])
			if d := cur - prev; d == 0 || d > 1<<15 {
				t.Fatalf("handed on %d after %d", cur, prev)
			}
		}
		held := int64(0)
		for _, h := range r.have {
			if h {
				held++
			}
		}
		if got := int64(len(out)/2) + r.dropped + held; got != pushed {
			t.Fatalf("%d pushed, %d handed on + dropped + held", pushed, got)
		}
	})
}
