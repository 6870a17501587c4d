package bitstream

import "testing"

// The codes of the standards' tables read back, emulation prevention
// removed, and a read past the end reported.
func TestReader(t *testing.T) {
	// 00 00 03 01 unescapes to 00 00 01.
	if got := Unescape(nil, []byte{0, 0, 3, 1, 0, 0, 3, 0}, 0); string(got) != string([]byte{0, 0, 1, 0, 0, 0}) {
		t.Errorf("unescaped % x", got)
	}
	if got := Unescape(nil, []byte{1, 2, 3, 4}, 2); len(got) != 2 {
		t.Errorf("max 2 gave %d bytes", len(got))
	}
	// 1 | 010 | 011 | 00100 | 00101 | 1010 1100 (u(8) = 0xac) ...
	// ue: 1 -> 0, 010 -> 1, 011 -> 2, 00100 -> 3; se: 00101 -> 4 -> -2.
	r := Reader{B: []byte{0b10100110, 0b01000010, 0b11010110, 0b00000000}}
	if v := r.UE(); v != 0 {
		t.Errorf("ue 1: %d", v)
	}
	if v := r.UE(); v != 1 {
		t.Errorf("ue 010: %d", v)
	}
	if v := r.UE(); v != 2 {
		t.Errorf("ue 011: %d", v)
	}
	if v := r.UE(); v != 3 {
		t.Errorf("ue 00100: %d", v)
	}
	if v := r.SE(); v != -2 {
		t.Errorf("se 00101: %d", v)
	}
	if v := r.U(8); v != 0b10101100 || r.Err != nil {
		t.Errorf("u(8): %b, %v", v, r.Err)
	}
	r.U(16)
	if r.Err != ErrShort {
		t.Errorf("past the end: %v", r.Err)
	}
	long := Reader{B: make([]byte, 8)}
	if long.UE(); long.Err == nil {
		t.Error("a 64-bit run of zeros read as a code")
	}
}
