package tsl5

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestPacketBytes: a packet of two displays is exactly the bytes the
// specification lays out, and reads back as it was written.
func TestPacketBytes(t *testing.T) {
	p := &Packet{Screen: 3, Displays: []Display{
		{Index: 0, RH: Red, Text: Red, LH: Red, Brightness: 3, Label: "cam1"},
		{Index: 0x0102, RH: Green, Text: Off, LH: Amber, Brightness: 1, Label: ""},
	}}
	got := p.Encode()
	want := []byte{
		20, 0, // PBC: 4 of header after it, 10 and 6 of displays
		0, 0, 3, 0, // VER, FLAGS, SCREEN
		0, 0, 0x15 | 0xC0, 0, 4, 0, 'c', 'a', 'm', '1', // INDEX 0, CONTROL red/red/red, brightness 3, LENGTH 4
		2, 1, 0x32 | 0x40, 0, 0, 0, // INDEX 0x0102, CONTROL RH green, LH amber, brightness 1, no text
	}
	if len(got) != 1 || !bytes.Equal(got[0], want) {
		t.Fatalf("Encode = % x\nwant     % x", got, want)
	}
	back, err := Decode(got[0])
	if err != nil || !reflect.DeepEqual(back, p) {
		t.Fatalf("Decode = %+v, %v; want %+v", back, err, p)
	}
	u := &Packet{Unicode: true, Displays: []Display{{Index: 7, Label: "Kamera ü"}}}
	if back, err := Decode(u.Encode()[0]); err != nil || back.Displays[0].Label != "Kamera ü" {
		t.Errorf("a UTF-16 label reads back as %+v, %v", back, err)
	}
}

// TestManyDisplaysSplitAcrossPackets: 300 displays do not fit one 2048
// byte packet; each packet is whole and every display is in one of them.
func TestManyDisplaysSplitAcrossPackets(t *testing.T) {
	p := &Packet{Screen: 1}
	for i := range 300 {
		p.Displays = append(p.Displays, Display{Index: uint16(i), RH: Red, Label: fmt.Sprintf("source.cam[%d]", i)})
	}
	pkts := p.Encode()
	if len(pkts) < 2 {
		t.Fatalf("%d packets for 300 displays", len(pkts))
	}
	var all []Display
	for _, b := range pkts {
		if len(b) > MaxPacket {
			t.Fatalf("a packet of %d bytes", len(b))
		}
		d, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, d.Displays...)
	}
	if !reflect.DeepEqual(all, p.Displays) {
		t.Errorf("the packets carry %d displays, not the 300 written in order", len(all))
	}
}

// TestStreamWrapper: over a byte stream, DLE bytes inside a packet are
// doubled and the packets come back whole however the stream is cut.
func TestStreamWrapper(t *testing.T) {
	raw := (&Packet{Screen: 0xFEFE, Displays: []Display{{Index: 0xFE, RH: Red}}}).Encode()[0]
	w := Wrap(raw)
	if !bytes.HasPrefix(w, []byte{DLE, STX}) || bytes.Count(w, []byte{DLE, DLE}) != 3 {
		t.Fatalf("Wrap = % x: want DLE STX and each of the three DLEs doubled", w)
	}
	stream := append(append([]byte("junk"), w...), w...)
	for cut := 1; cut < len(stream); cut++ {
		var u Unwrapper
		got := append(u.Feed(stream[:cut]), u.Feed(stream[cut:])...)
		if len(got) != 2 || !bytes.Equal(got[0], raw) || !bytes.Equal(got[1], raw) {
			t.Fatalf("cut at %d: %d packets % x", cut, len(got), got)
		}
	}
}

// TestNewDestination: a tally block's transport, host and port make the
// address the sender dials (an IPv6 address bracketed), and what is not a
// host alone is refused with what to write.
func TestNewDestination(t *testing.T) {
	for _, c := range []struct {
		tr, host string
		port     int
		want     string
	}{
		{"udp", "10.0.0.5", 8900, "udp://10.0.0.5:8900"},
		{"tcp", "tally.local", 9000, "tcp://tally.local:9000"},
		{"tcp", "::1", 9000, "tcp://[::1]:9000"},
		{"http", "x", 1, "error: transport \"http\": write udp or tcp"},
		{"udp", "x", 0, "error: port 0: the port must be 1 to 65535"},
		{"udp", "", 1, "error: the address is empty"},
		{"udp", "10.0.0.5:8900", 8900, "error: address \"10.0.0.5:8900\": write the host alone and the port in port"},
		{"udp", "udp://x", 1, "error: address \"udp://x\": write the host alone"},
		{"udp", "[::1]", 1, "error: address \"[::1]\": write a host name or an IP address, without brackets"},
	} {
		d, err := NewDestination(c.tr, c.host, c.port)
		got := d.String()
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("NewDestination(%q, %q, %d) = %s; want %s", c.tr, c.host, c.port, got, c.want)
		}
	}
}

// FuzzDecode: any bytes are refused or read, and a packet read encodes to
// one that reads back the same.
func FuzzDecode(f *testing.F) {
	f.Add((&Packet{Screen: 1, Displays: []Display{{Index: 2, RH: Red, Label: "x"}}}).Encode()[0])
	f.Add([]byte{4, 0, 0, 2, 0, 0})
	f.Add([]byte{10, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			return
		}
		for _, pkt := range p.Encode() {
			q, err := Decode(pkt)
			if err != nil {
				t.Fatalf("a decoded packet re-encodes to one Decode refuses: %v", err)
			}
			if len(q.Displays) > len(p.Displays) {
				t.Fatalf("re-encoding made displays up")
			}
		}
		var u Unwrapper
		if got := u.Feed(Wrap(b)); len(got) != 1 || !bytes.Equal(got[0], b) {
			t.Fatalf("a wrapped packet unwraps to %d packets", len(got))
		}
	})
}

// FuzzUnwrap: any stream gives packets no longer than MaxPacket, each
// holding exactly its PBC's count.
func FuzzUnwrap(f *testing.F) {
	f.Add(Wrap((&Packet{Displays: []Display{{Index: 0xFE}}}).Encode()[0]))
	f.Add([]byte{DLE, STX, DLE, DLE, 0, DLE})
	f.Fuzz(func(t *testing.T, b []byte) {
		var u Unwrapper
		for _, p := range u.Feed(b) {
			if len(p) > MaxPacket || len(p) < 2 || int(p[0])|int(p[1])<<8 != len(p)-2 {
				t.Fatalf("packet % x", p)
			}
		}
	})
}
