package ipc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// validMessages is one of each message, as the fuzz target's seeds too.
func validMessages() []Message {
	return []Message{
		Hello{Version: Version, Picture: NewPicture(BGRA, AlphaPremultiplied, 1920, 1080), Buffers: 9, Name: "chromium"},
		Hello{Version: Version, Picture: NewPicture(NV12, AlphaOpaque, 640, 360), Buffers: 4},
		Hello{Version: Version, Picture: Picture{Format: RGBA, Alpha: AlphaStraight, Width: 2, Height: 2, Pitch: 64, Size: 4096}, Name: "ticker ünïcode"},
		FrameMsg{Buffer: 3, Flags: FlagFD, Sequence: 1 << 40, Timestamp: -5},
		FrameMsg{Buffer: 0xffffffff, Sequence: 7, Timestamp: 123456789},
		Forget{Buffer: 12},
		Bye{},
		Welcome{Version: Version, ReturnQueue: 3, FramesInFlight: 9, Connection: 42},
		Release{Buffer: 5, Sequence: 99},
		Drain{Reason: DrainReplaced, Returned: 1000, Unreturned: 1},
		ErrorMsg{Code: CodeVersion, Text: "producer protocol version 2 is not spoken here"},
		ErrorMsg{Code: CodeProtocol},
	}
}

func TestMessagesRoundTrip(t *testing.T) {
	for _, m := range validMessages() {
		b := m.Append(nil)
		if n := int(le.Uint16(b[6:8])); n != len(b) {
			t.Errorf("%v: header length %d, message %d bytes", m.Type(), n, len(b))
		}
		got, err := Parse(b)
		if err != nil {
			t.Errorf("%v: %v", m.Type(), err)
			continue
		}
		if got != m {
			t.Errorf("%v: got %+v, want %+v", m.Type(), got, m)
		}
		if again := got.Append(nil); !bytes.Equal(again, b) {
			t.Errorf("%v: encoding is not canonical", m.Type())
		}
	}
}

func TestParseRefusesWithTheReason(t *testing.T) {
	hello := Hello{Version: Version, Picture: NewPicture(BGRA, AlphaStraight, 64, 32)}.Append(nil)
	frame := FrameMsg{Buffer: 1}.Append(nil)
	mut := func(b []byte, i int, v byte) []byte {
		c := append([]byte(nil), b...)
		c[i] = v
		return c
	}
	withPicture := func(p Picture) []byte { return Hello{Version: Version, Picture: p}.Append(nil) }
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "shorter than the 8-byte header"},
		{"magic", mut(frame, 0, 'X'), "not a producer protocol message"},
		{"reserved header byte", mut(frame, 5, 1), "reserved header byte"},
		{"length field", mut(frame, 6, 31), "header says 31 bytes, the message has 32"},
		{"truncated", frame[:20], "header says 32 bytes, the message has 20"},
		{"unknown type", mut(frame, 4, 0x7f), "unknown message type"},
		{"frame flags", mut(frame, 12, 2), "unknown flags 0x2"},
		{"forget reserved", mut(Forget{}.Append(nil), 13, 1), "reserved byte"},
		{"drain reserved", mut(Drain{}.Append(nil), 21, 1), "reserved byte"},
		{"name after padding", mut(hello, 60, 'x'), "bytes after its NUL padding"},
		{"name not utf8", mut(mut(hello, 40, 0xff), 41, 0xfe), "not UTF-8"},
		{"odd width", withPicture(Picture{Format: BGRA, Width: 3, Height: 2, Pitch: 12, Size: 24}), "must be even"},
		{"zero size", withPicture(Picture{Format: BGRA, Width: 0, Height: 2, Pitch: 12, Size: 24}), "width and height must be 1 to"},
		{"pitch short", withPicture(Picture{Format: RGBA, Width: 4, Height: 2, Pitch: 15, Size: 64}), "needs 16 to"},
		{"buffer short", withPicture(Picture{Format: BGRA, Width: 4, Height: 2, Pitch: 16, Size: 31}), "needs 32 bytes"},
		{"nv12 alpha", withPicture(Picture{Format: NV12, Alpha: AlphaStraight, Width: 4, Height: 2, Pitch: 4, Offset1: 8, Size: 12}), "has no alpha"},
		{"nv12 overlap", withPicture(Picture{Format: NV12, Width: 4, Height: 2, Pitch: 4, Offset1: 4, Size: 12}), "overlaps the luma plane"},
		{"rgb offset1", withPicture(Picture{Format: BGRA, Width: 4, Height: 2, Pitch: 16, Offset1: 4, Size: 32}), "has one plane"},
		{"format", withPicture(Picture{Format: 9, Width: 4, Height: 2, Pitch: 16, Size: 32}), "pixel format 9"},
		{"alpha", withPicture(Picture{Format: BGRA, Alpha: 7, Width: 4, Height: 2, Pitch: 16, Size: 32}), "alpha 7"},
		{"error text utf8", mut(ErrorMsg{Text: "ab"}.Append(nil), 12, 0xff), "not UTF-8"},
	}
	for _, c := range cases {
		_, err := Parse(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// A producer of another version gets a version error, whatever its HELLO
// looks like after the version field.
func TestOtherVersionIsAVersionError(t *testing.T) {
	b := Hello{Version: 3, Picture: NewPicture(BGRA, AlphaOpaque, 8, 8)}.Append(nil)
	b = append(b, 1, 2, 3, 4) // a longer v3 HELLO
	le.PutUint16(b[6:8], uint16(len(b)))
	_, err := Parse(b)
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("got %v, want a version error", err)
	}
	for _, want := range []string{"version 3", "onair speaks versions 1 to 2", "PRODUCER-PROTOCOL.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestVersionOneHelloIsStillSpoken: a version 1 HELLO (72 bytes, no
// memory field) parses, its buffers memfds; version 2 carries the memory
// field, and one of an unknown memory is refused naming the field.
func TestVersionOneHelloIsStillSpoken(t *testing.T) {
	v1 := Hello{Version: 1, Picture: NewPicture(BGRA, AlphaPremultiplied, 64, 32), Name: "old"}
	b := v1.Append(nil)
	if len(b) != HelloSizeV1 {
		t.Fatalf("a version 1 HELLO is %d bytes, want %d", len(b), HelloSizeV1)
	}
	m, err := Parse(b)
	if err != nil || m != v1 || m.(Hello).Memory != MemoryHost {
		t.Fatalf("version 1: %+v, %v", m, err)
	}
	v2 := Hello{Version: 2, Picture: NewPicture(BGRA, AlphaPremultiplied, 64, 32)}
	v2.Memory = MemoryCUDA
	b = v2.Append(nil)
	if len(b) != HelloSize || le.Uint16(b[72:74]) != 1 {
		t.Fatalf("a version 2 HELLO is %d bytes with memory %d", len(b), le.Uint16(b[72:74]))
	}
	if m, err := Parse(b); err != nil || m != v2 {
		t.Fatalf("version 2: %+v, %v", m, err)
	}
	b[72] = 9
	if _, err := Parse(b); err == nil || !strings.Contains(err.Error(), "memory 9 is none of") {
		t.Fatalf("memory 9: %v", err)
	}
	b[72], b[75] = 1, 1
	if _, err := Parse(b); err == nil || !strings.Contains(err.Error(), "offset 75") && !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("a reserved byte after memory: %v", err)
	}
	// A version 1 HELLO of version 2's length is malformed.
	b = append(Hello{Version: 1, Picture: v1.Picture}.Append(nil), make([]byte, 8)...)
	le.PutUint16(b[6:8], uint16(len(b)))
	if _, err := Parse(b); err == nil || !strings.Contains(err.Error(), "want 72") {
		t.Fatalf("a long version 1 HELLO: %v", err)
	}
}

func TestTruncUTF8KeepsCharactersWhole(t *testing.T) {
	s := strings.Repeat("é", 20) // 40 bytes
	got := truncUTF8(s, NameSize-1)
	if len(got) != 30 || got != strings.Repeat("é", 15) {
		t.Fatalf("got %q (%d bytes)", got, len(got))
	}
	m, err := Parse(Hello{Version: Version, Picture: NewPicture(BGRA, AlphaOpaque, 2, 2), Name: s}.Append(nil))
	if err != nil || m.(Hello).Name != strings.Repeat("é", 16) {
		t.Fatalf("got %v, %v", m, err)
	}
}
