// Package tsl5 is the TSL UMD protocol version 5.0, the common transport of
// tally to tally lights and under-monitor displays: packets (one screen,
// one display message per display), their encoding and decoding, the byte
// stream wrapper for TCP, and the destinations a show sends them to.
//
// The layout, as TSL's specification publishes it: every 16-bit value is
// little-endian. A packet is PBC (16 bits: the byte count of the rest of
// the packet), VER (8 bits: the minor version, 0 for 5.00), FLAGS (8 bits:
// bit 0 set for UTF-16LE text, bit 1 set for screen control data instead
// of display messages), SCREEN (16 bits; 0xFFFF is every screen), then
// display messages: INDEX (16 bits; 0xFFFF is every display), CONTROL (16
// bits: bits 0-1 the right-hand tally, 2-3 the text tally, 4-5 the
// left-hand tally, each 0 off, 1 red, 2 green, 3 amber; bits 6-7 the
// brightness 0..3; bit 15 set for control data instead of text), LENGTH
// (16 bits: the text's byte count) and the text. A packet is at most 2048
// bytes and travels in one UDP datagram; over a byte stream (TCP) each
// packet starts with DLE STX (0xFE 0x02) and every DLE inside it is sent
// twice, which the byte counts do not count.
//
// tsl5 must never import anything of onair: it is the wire format only.
package tsl5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Colour is a tally lamp's state.
type Colour uint8

const (
	Off Colour = iota
	Red
	Green
	Amber
)

func (c Colour) String() string {
	switch c {
	case Off:
		return "off"
	case Red:
		return "red"
	case Green:
		return "green"
	}
	return "amber"
}

// Display is one display message: a display's tallies, brightness and text.
type Display struct {
	Index      uint16
	RH, Text   Colour // right-hand and text tally
	LH         Colour // left-hand tally
	Brightness uint8  // 0..3
	Label      string
}

// Packet is one TSL 5.0 packet of display messages.
type Packet struct {
	Version  uint8
	Unicode  bool // text in UTF-16LE (else ASCII)
	Screen   uint16
	Displays []Display
}

// MaxPacket is the longest packet, PBC included.
const MaxPacket = 2048

// Wrapper bytes of a packet on a byte stream.
const (
	DLE = 0xFE
	STX = 0x02
)

const (
	flagUnicode = 1 << 0
	flagControl = 1 << 1
	ctlData     = 1 << 15
)

func (d Display) control() uint16 {
	return uint16(d.RH&3) | uint16(d.Text&3)<<2 | uint16(d.LH&3)<<4 | uint16(d.Brightness&3)<<6
}

// text is the label's bytes: ASCII (other runes as '?') or UTF-16LE.
func (p *Packet) text(s string) []byte {
	if p.Unicode {
		u := utf16.Encode([]rune(s))
		b := make([]byte, 2*len(u))
		for i, c := range u {
			binary.LittleEndian.PutUint16(b[2*i:], c)
		}
		return b
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			r = '?'
		}
		b = append(b, byte(r))
	}
	return b
}

// Encode writes the packets that carry p's displays, each at most
// MaxPacket bytes (a display whose text would not fit alone has it cut).
func (p *Packet) Encode() [][]byte {
	var out [][]byte
	var cur []byte
	start := func() {
		cur = make([]byte, 6, MaxPacket)
		cur[2] = p.Version
		if p.Unicode {
			cur[3] = flagUnicode
		}
		binary.LittleEndian.PutUint16(cur[4:], p.Screen)
	}
	flush := func() {
		binary.LittleEndian.PutUint16(cur[0:], uint16(len(cur)-2))
		out = append(out, cur)
		cur = nil
	}
	for _, d := range p.Displays {
		txt := p.text(d.Label)
		if max := MaxPacket - 6 - 6; len(txt) > max {
			txt = txt[:max&^1]
		}
		if cur != nil && len(cur)+6+len(txt) > MaxPacket {
			flush()
		}
		if cur == nil {
			start()
		}
		cur = binary.LittleEndian.AppendUint16(cur, d.Index)
		cur = binary.LittleEndian.AppendUint16(cur, d.control())
		cur = binary.LittleEndian.AppendUint16(cur, uint16(len(txt)))
		cur = append(cur, txt...)
	}
	if cur == nil {
		start()
	}
	flush()
	return out
}

// ErrControl is what Decode says of a packet of screen control data, which
// carries no displays.
var ErrControl = errors.New("tsl5: screen control data, not display messages")

// Decode reads one packet (PBC first, exactly its length). Display
// messages of control data are skipped.
func Decode(b []byte) (*Packet, error) {
	if len(b) < 6 {
		return nil, fmt.Errorf("tsl5: a packet of %d bytes; the header alone is 6", len(b))
	}
	if len(b) > MaxPacket {
		return nil, fmt.Errorf("tsl5: a packet of %d bytes; at most %d", len(b), MaxPacket)
	}
	if n := int(binary.LittleEndian.Uint16(b)); n != len(b)-2 {
		return nil, fmt.Errorf("tsl5: the packet says %d bytes follow its count; %d do", n, len(b)-2)
	}
	p := &Packet{Version: b[2], Unicode: b[3]&flagUnicode != 0, Screen: binary.LittleEndian.Uint16(b[4:])}
	if b[3]&flagControl != 0 {
		return p, ErrControl
	}
	rest := b[6:]
	for len(rest) > 0 {
		if len(rest) < 6 {
			return nil, fmt.Errorf("tsl5: %d bytes left after %d displays; a display message is at least 6", len(rest), len(p.Displays))
		}
		idx, ctl, n := binary.LittleEndian.Uint16(rest), binary.LittleEndian.Uint16(rest[2:]), int(binary.LittleEndian.Uint16(rest[4:]))
		rest = rest[6:]
		if n > len(rest) {
			return nil, fmt.Errorf("tsl5: display %d says %d bytes of text; %d are left", idx, n, len(rest))
		}
		txt := rest[:n]
		rest = rest[n:]
		if ctl&ctlData != 0 {
			continue
		}
		d := Display{Index: idx, RH: Colour(ctl & 3), Text: Colour(ctl >> 2 & 3), LH: Colour(ctl >> 4 & 3), Brightness: uint8(ctl >> 6 & 3)}
		if p.Unicode {
			if n%2 != 0 {
				return nil, fmt.Errorf("tsl5: display %d has %d bytes of UTF-16 text, an odd count", idx, n)
			}
			u := make([]uint16, n/2)
			for i := range u {
				u[i] = binary.LittleEndian.Uint16(txt[2*i:])
			}
			d.Label = string(utf16.Decode(u))
		} else {
			d.Label = string(txt)
		}
		p.Displays = append(p.Displays, d)
	}
	return p, nil
}

// Wrap is a packet as it travels on a byte stream: DLE STX, then the
// packet with every DLE doubled.
func Wrap(pkt []byte) []byte {
	out := make([]byte, 0, len(pkt)+8)
	out = append(out, DLE, STX)
	for _, c := range pkt {
		out = append(out, c)
		if c == DLE {
			out = append(out, DLE)
		}
	}
	return out
}

// Unwrapper takes a byte stream in pieces and gives back the packets in
// it (Wrap undone).
type Unwrapper struct {
	cur     []byte
	in      bool // after a DLE STX
	pending bool // the last byte was a DLE
}

// Feed takes the next bytes of the stream and returns the packets that
// ended in them. A packet ends where the next DLE STX starts, or once its
// PBC's count is in.
func (u *Unwrapper) Feed(b []byte) [][]byte {
	var out [][]byte
	for _, c := range b {
		if u.pending {
			u.pending = false
			switch c {
			case STX:
				u.cur, u.in = u.cur[:0], true
				continue
			case DLE:
				// a doubled DLE: one data byte
			default:
				u.in = false // garbage: wait for the next DLE STX
				continue
			}
		} else if c == DLE {
			u.pending = true
			continue
		}
		if !u.in {
			continue
		}
		u.cur = append(u.cur, c)
		if len(u.cur) >= 2 && len(u.cur) == int(binary.LittleEndian.Uint16(u.cur))+2 {
			out = append(out, append([]byte(nil), u.cur...))
			u.cur, u.in = u.cur[:0], false
		} else if len(u.cur) > MaxPacket {
			u.cur, u.in = u.cur[:0], false
		}
	}
	return out
}

// Destination is where tally goes: udp or tcp, and host:port.
type Destination struct {
	Transport string // udp | tcp
	Addr      string // host:port
}

func (d Destination) String() string { return d.Transport + "://" + d.Addr }

// NewDestination is where a tally block sends: transport udp or tcp, a
// host (an IPv6 address is bracketed here) and a port 1 to 65535.
func NewDestination(transport, host string, port int) (Destination, error) {
	if transport != "udp" && transport != "tcp" {
		return Destination{}, fmt.Errorf("transport %q: write udp or tcp", transport)
	}
	if err := CheckHost(host); err != nil {
		return Destination{}, err
	}
	if port < 1 || port > 65535 {
		return Destination{}, fmt.Errorf("port %d: the port must be 1 to 65535", port)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return Destination{Transport: transport, Addr: host + ":" + strconv.Itoa(port)}, nil
}

// CheckHost refuses what is not a host name or an IP address: empty, with
// a port (one colon), brackets, a scheme or spaces.
func CheckHost(host string) error {
	switch {
	case host == "":
		return fmt.Errorf("the address is empty: write the receiver's host name or IP address")
	case strings.Contains(host, "://"):
		return fmt.Errorf("address %q: write the host alone (transport and port are attributes of their own)", host)
	case strings.Count(host, ":") == 1:
		return fmt.Errorf("address %q: write the host alone and the port in port", host)
	case strings.ContainsAny(host, "[]/ \t"):
		return fmt.Errorf("address %q: write a host name or an IP address, without brackets, slashes or spaces", host)
	}
	return nil
}
