package ipc

// The wire format: one message per SOCK_SEQPACKET datagram, fixed sizes,
// little-endian, an 8-byte header on each. docs/PRODUCER-PROTOCOL.md is
// the reference; the offsets in the comments below are from the start of
// the message.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Version is the newest protocol version this package speaks, and what its
// Producer says; MinVersion the oldest it still accepts. A HELLO of a
// version outside them is answered with an ERROR (CodeVersion) naming
// both. Version 2 added the HELLO's memory field (GPU buffers); a version 1
// HELLO is version 2's without it, its buffers memfds.
const (
	Version    = 2
	MinVersion = 1
)

// Magic opens every message: "oair".
var Magic = [4]byte{'o', 'a', 'i', 'r'}

// HeaderSize is the size of the header every message starts with:
// magic (4), type (1), reserved (1, zero), length of the whole message (2).
const HeaderSize = 8

// MsgType is a message's type, byte 4 of its header.
type MsgType uint8

// The messages. Producer to onair: Hello, Frame, Forget, Bye. Onair to
// producer: Welcome, Release, Drain, Error.
const (
	TypeHello   MsgType = 0x01
	TypeFrame   MsgType = 0x02
	TypeForget  MsgType = 0x03
	TypeBye     MsgType = 0x04
	TypeWelcome MsgType = 0x11
	TypeRelease MsgType = 0x12
	TypeDrain   MsgType = 0x13
	TypeError   MsgType = 0x14
)

var typeNames = map[MsgType]string{
	TypeHello: "HELLO", TypeFrame: "FRAME", TypeForget: "FORGET", TypeBye: "BYE",
	TypeWelcome: "WELCOME", TypeRelease: "RELEASE", TypeDrain: "DRAIN", TypeError: "ERROR",
}

func (t MsgType) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type 0x%02x", uint8(t))
}

// Message sizes, header included. ERROR is MinErrorSize plus its text.
const (
	HelloSize    = 80 // version 2; a version 1 HELLO is HelloSizeV1
	HelloSizeV1  = 72
	FrameSize    = 32
	ForgetSize   = 16
	ByeSize      = 8
	WelcomeSize  = 24
	ReleaseSize  = 24
	DrainSize    = 24
	MinErrorSize = 12
	MaxErrorText = 1024
	// MaxMessage is the largest message either side sends.
	MaxMessage = MinErrorSize + MaxErrorText
)

var fixedSize = map[MsgType]int{
	TypeHello: HelloSize, TypeFrame: FrameSize, TypeForget: ForgetSize, TypeBye: ByeSize,
	TypeWelcome: WelcomeSize, TypeRelease: ReleaseSize, TypeDrain: DrainSize,
}

// PixelFormat is the layout of a buffer's picture.
type PixelFormat uint16

const (
	BGRA PixelFormat = 1 // 4 bytes a pixel: blue, green, red, alpha (Chromium's and Skia's native order on little-endian)
	RGBA PixelFormat = 2 // 4 bytes a pixel: red, green, blue, alpha
	NV12 PixelFormat = 3 // 8-bit 4:2:0: a luma plane, then interleaved CbCr at Offset1, BT.709 limited range
)

func (f PixelFormat) String() string {
	switch f {
	case BGRA:
		return "bgra"
	case RGBA:
		return "rgba"
	case NV12:
		return "nv12"
	}
	return fmt.Sprintf("format %d", uint16(f))
}

// Alpha says what a BGRA or RGBA buffer's fourth byte means.
type Alpha uint16

const (
	// AlphaOpaque: the fourth byte is ignored; every pixel is opaque. NV12
	// buffers are always opaque.
	AlphaOpaque Alpha = 0
	// AlphaStraight: colours are not multiplied by alpha (PNG, CSS).
	AlphaStraight Alpha = 1
	// AlphaPremultiplied: colours are already multiplied by alpha (GPU
	// compositors, Chromium's surfaces).
	AlphaPremultiplied Alpha = 2
)

func (a Alpha) String() string {
	switch a {
	case AlphaOpaque:
		return "opaque"
	case AlphaStraight:
		return "straight"
	case AlphaPremultiplied:
		return "premultiplied"
	}
	return fmt.Sprintf("alpha %d", uint16(a))
}

// Memory is what a connection's buffers are, and so what their descriptors
// name (the HELLO's memory field, from version 2).
type Memory uint16

const (
	// MemoryHost: a sealed memfd that onair maps (version 1's only kind).
	MemoryHost Memory = 0
	// MemoryCUDA: device memory made with cuMemCreate and exported with
	// cuMemExportToShareableHandle as a POSIX file descriptor
	// (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), at least Size bytes
	// rounded up to the device's allocation granularity; onair imports it
	// with cuMemImportFromShareableHandle and maps it. The CUDA backend only.
	MemoryCUDA Memory = 1
)

func (m Memory) String() string {
	switch m {
	case MemoryHost:
		return "memfd"
	case MemoryCUDA:
		return "cuda"
	}
	return fmt.Sprintf("memory %d", uint16(m))
}

// Limits a HELLO must respect.
const (
	MaxDimension  = 8192
	MaxPitch      = 4 * MaxDimension * 2
	MaxBufferSize = 1 << 30
	MaxBuffers    = 64 // buffers one connection may have known at once
	NameSize      = 32
)

// Hello opens a connection: the producer's version and the picture every
// buffer of the connection holds.
//
//	 8 u16 version   10 u16 format   12 u16 alpha   14 u16 buffers
//	16 u32 width     20 u32 height   24 u32 pitch   28 u32 offset1
//	32 u64 size      40 [32] name (UTF-8, NUL-padded)
//	72 u16 memory    74 [6] reserved                          (version 2 on)
type Hello struct {
	Version uint16
	Picture
	// Buffers is how many buffers the producer may have out at once (its
	// ring); informational.
	Buffers uint16
	// Name names the producer in onair's logs ("chromium 130", "ticker").
	Name string
}

// Picture describes every buffer of a connection.
type Picture struct {
	Format PixelFormat
	Alpha  Alpha
	Width  int
	Height int
	// Pitch is the bytes per row of plane 0 (and of the CbCr plane of NV12).
	Pitch int
	// Offset1 is where NV12's CbCr plane starts; 0 for BGRA and RGBA.
	Offset1 int
	// Size is each buffer's size in bytes: the length onair maps.
	Size int
	// Memory is what the buffers are: memfds, or CUDA device memory.
	Memory Memory
}

// Frame says that a buffer holds a new picture.
//
//	8 u32 buffer   12 u32 flags   16 u64 sequence   24 i64 timestamp_ns
//
// With FlagFD the message carries the buffer's file descriptor
// (SCM_RIGHTS): on the first frame of each buffer, and only then.
type FrameMsg struct {
	Buffer    uint32
	Flags     uint32
	Sequence  uint64
	Timestamp int64 // the producer's CLOCK_MONOTONIC, ns, when it painted
}

// FlagFD: the message carries the buffer's file descriptor.
const FlagFD = 1

// Forget says the producer destroyed a buffer it holds: onair closes its
// descriptor and drops its import. Its id may then name a new buffer.
//
//	8 u32 buffer   12 u32 reserved
type Forget struct{ Buffer uint32 }

// Bye says the producer is leaving: onair gives back every buffer, sends
// DRAIN and closes the connection.
type Bye struct{}

// Welcome accepts a HELLO.
//
//	8 u16 version   10 u16 return_queue   12 u16 frames_in_flight   14 u16 reserved
//	16 u64 connection
type Welcome struct {
	Version        uint16
	ReturnQueue    uint16
	FramesInFlight uint16 // keep at most this many frames out (6 in use and 3 returning, by default)
	Connection     uint64 // the connection's number on this socket, for logs
}

// Release gives a buffer back: onair has finished with the picture of
// Sequence, and the producer may paint into the buffer again.
//
//	8 u32 buffer   12 u32 reserved   16 u64 sequence
type Release struct {
	Buffer   uint32
	Sequence uint64
}

// Drain is the last message of a connection onair retires: every RELEASE
// it will ever send on the connection came before it.
//
//	 8 u16 reason   10 u16 reserved   12 u32 returned   16 u32 unreturned
//	20 u32 reserved
type Drain struct {
	Reason DrainReason
	// Returned counts the RELEASEs the connection carried, in all.
	Returned uint32
	// Unreturned counts the buffers onair still held and could not give
	// back (a conversion that never finished); 0 on a clean retire.
	Unreturned uint32
}

// DrainReason is why a connection was retired.
type DrainReason uint16

const (
	DrainStop     DrainReason = 1 // the source stopped (the show ended, or its group restarts)
	DrainReplaced DrainReason = 2 // no longer sent: a second producer is refused (CodeBusy) instead of replacing the one streaming
	DrainBye      DrainReason = 3 // the producer said BYE
	DrainError    DrainReason = 4 // a protocol error, sent as ERROR just before
)

func (r DrainReason) String() string {
	switch r {
	case DrainStop:
		return "stop"
	case DrainReplaced:
		return "replaced"
	case DrainBye:
		return "bye"
	case DrainError:
		return "error"
	}
	return fmt.Sprintf("reason %d", uint16(r))
}

// ErrorMsg says why onair refuses the producer, in words for its log.
//
//	8 u16 code   10 u16 reserved   12 text (UTF-8, at most 1024 bytes)
type ErrorMsg struct {
	Code ErrorCode
	Text string
}

// ErrorCode classifies an ERROR.
type ErrorCode uint16

const (
	CodeVersion    ErrorCode = 1 // the producer speaks another protocol version
	CodeMalformed  ErrorCode = 2 // a message that does not parse
	CodeProtocol   ErrorCode = 3 // a message that parses but breaks the rules (a frame for an unknown buffer)
	CodeFormat     ErrorCode = 4 // a picture onair cannot take (size, pitch, format)
	CodeResource   ErrorCode = 5 // too many buffers, a descriptor that cannot be used
	CodeBusy       ErrorCode = 6 // another producer is streaming on the socket
	CodePermission ErrorCode = 7 // the producer's user may not connect (SO_PEERCRED)
	CodeImport     ErrorCode = 8 // a buffer the backend could not import or convert
)

// Message is one message of either side.
type Message interface {
	Type() MsgType
	// Append appends the encoded message to b.
	Append(b []byte) []byte
}

func (Hello) Type() MsgType    { return TypeHello }
func (FrameMsg) Type() MsgType { return TypeFrame }
func (Forget) Type() MsgType   { return TypeForget }
func (Bye) Type() MsgType      { return TypeBye }
func (Welcome) Type() MsgType  { return TypeWelcome }
func (Release) Type() MsgType  { return TypeRelease }
func (Drain) Type() MsgType    { return TypeDrain }
func (ErrorMsg) Type() MsgType { return TypeError }

var le = binary.LittleEndian

func header(b []byte, t MsgType, size int) []byte {
	b = append(b, Magic[:]...)
	b = append(b, byte(t), 0)
	return le.AppendUint16(b, uint16(size))
}

// Append encodes the HELLO in the layout of its version: version 1 has no
// memory field (its buffers are memfds).
func (m Hello) Append(b []byte) []byte {
	size := HelloSize
	if m.Version == 1 {
		size = HelloSizeV1
	}
	b = header(b, TypeHello, size)
	b = le.AppendUint16(b, m.Version)
	b = le.AppendUint16(b, uint16(m.Format))
	b = le.AppendUint16(b, uint16(m.Alpha))
	b = le.AppendUint16(b, m.Buffers)
	b = le.AppendUint32(b, uint32(m.Width))
	b = le.AppendUint32(b, uint32(m.Height))
	b = le.AppendUint32(b, uint32(m.Pitch))
	b = le.AppendUint32(b, uint32(m.Offset1))
	b = le.AppendUint64(b, uint64(m.Size))
	var name [NameSize]byte
	copy(name[:], truncUTF8(m.Name, NameSize))
	b = append(b, name[:]...)
	if size == HelloSizeV1 {
		return b
	}
	b = le.AppendUint16(b, uint16(m.Memory))
	return append(b, 0, 0, 0, 0, 0, 0)
}

func (m FrameMsg) Append(b []byte) []byte {
	b = header(b, TypeFrame, FrameSize)
	b = le.AppendUint32(b, m.Buffer)
	b = le.AppendUint32(b, m.Flags)
	b = le.AppendUint64(b, m.Sequence)
	return le.AppendUint64(b, uint64(m.Timestamp))
}

func (m Forget) Append(b []byte) []byte {
	b = header(b, TypeForget, ForgetSize)
	b = le.AppendUint32(b, m.Buffer)
	return le.AppendUint32(b, 0)
}

func (Bye) Append(b []byte) []byte { return header(b, TypeBye, ByeSize) }

func (m Welcome) Append(b []byte) []byte {
	b = header(b, TypeWelcome, WelcomeSize)
	b = le.AppendUint16(b, m.Version)
	b = le.AppendUint16(b, m.ReturnQueue)
	b = le.AppendUint16(b, m.FramesInFlight)
	b = le.AppendUint16(b, 0)
	return le.AppendUint64(b, m.Connection)
}

func (m Release) Append(b []byte) []byte {
	b = header(b, TypeRelease, ReleaseSize)
	b = le.AppendUint32(b, m.Buffer)
	b = le.AppendUint32(b, 0)
	return le.AppendUint64(b, m.Sequence)
}

func (m Drain) Append(b []byte) []byte {
	b = header(b, TypeDrain, DrainSize)
	b = le.AppendUint16(b, uint16(m.Reason))
	b = le.AppendUint16(b, 0)
	b = le.AppendUint32(b, m.Returned)
	b = le.AppendUint32(b, m.Unreturned)
	return le.AppendUint32(b, 0)
}

func (m ErrorMsg) Append(b []byte) []byte {
	text := truncUTF8(m.Text, MaxErrorText)
	b = header(b, TypeError, MinErrorSize+len(text))
	b = le.AppendUint16(b, uint16(m.Code))
	b = le.AppendUint16(b, 0)
	return append(b, text...)
}

// truncUTF8 cuts s to at most n bytes without splitting a character.
func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// ParseError is a message that does not parse: what was wrong, and at
// which byte.
type ParseError struct {
	Type   MsgType // 0 when the header itself is broken
	Offset int
	What   string
}

func (e *ParseError) Error() string {
	if e.Type == 0 {
		return fmt.Sprintf("producer protocol: malformed message at byte %d: %s", e.Offset, e.What)
	}
	return fmt.Sprintf("producer protocol: malformed %v message at byte %d: %s", e.Type, e.Offset, e.What)
}

// VersionError is a HELLO of another protocol version than Version.
type VersionError struct{ Got uint16 }

func (e *VersionError) Error() string {
	return fmt.Sprintf("producer protocol version %d is not spoken here: onair speaks versions %d to %d (docs/PRODUCER-PROTOCOL.md); update the producer or onair so that they agree", e.Got, MinVersion, Version)
}

// ErrVersion matches every VersionError with errors.Is.
var ErrVersion = errors.New("producer protocol version mismatch")

func (e *VersionError) Is(target error) bool { return target == ErrVersion }

// Parse decodes one message. Every field is checked that the message's own
// rules fix (sizes, reserved bytes, a HELLO's picture); whether a message
// makes sense on its connection is the receiver's business. The version of
// a HELLO is read before its size, so a producer of another version gets a
// VersionError whatever its HELLO looks like.
func Parse(b []byte) (Message, error) {
	if len(b) < HeaderSize {
		return nil, &ParseError{Offset: len(b), What: fmt.Sprintf("%d bytes, shorter than the %d-byte header", len(b), HeaderSize)}
	}
	if [4]byte(b[0:4]) != Magic {
		return nil, &ParseError{Offset: 0, What: fmt.Sprintf("magic %q, want %q: not a producer protocol message", b[0:4], Magic[:])}
	}
	t := MsgType(b[4])
	if b[5] != 0 {
		return nil, &ParseError{Type: t, Offset: 5, What: "reserved header byte is not zero"}
	}
	if n := int(le.Uint16(b[6:8])); n != len(b) {
		return nil, &ParseError{Type: t, Offset: 6, What: fmt.Sprintf("header says %d bytes, the message has %d", n, len(b))}
	}
	if t == TypeHello && len(b) >= 10 {
		if v := le.Uint16(b[8:10]); v < MinVersion || v > Version {
			return nil, &VersionError{Got: v}
		}
	}
	if t == TypeError {
		if len(b) < MinErrorSize || len(b) > MinErrorSize+MaxErrorText {
			return nil, &ParseError{Type: t, Offset: 6, What: fmt.Sprintf("%d bytes, want %d to %d", len(b), MinErrorSize, MinErrorSize+MaxErrorText)}
		}
		if err := zero(t, b, 10, 12); err != nil {
			return nil, err
		}
		text := b[MinErrorSize:]
		if !utf8.Valid(text) {
			return nil, &ParseError{Type: t, Offset: MinErrorSize, What: "text is not UTF-8"}
		}
		return ErrorMsg{Code: ErrorCode(le.Uint16(b[8:10])), Text: string(text)}, nil
	}
	want, known := fixedSize[t]
	if t == TypeHello && le.Uint16(b[8:10]) == 1 {
		want = HelloSizeV1
	}
	if !known {
		return nil, &ParseError{Type: t, Offset: 4, What: "unknown message type"}
	}
	if len(b) != want {
		return nil, &ParseError{Type: t, Offset: 6, What: fmt.Sprintf("%d bytes, want %d", len(b), want)}
	}
	switch t {
	case TypeHello:
		m := Hello{
			Version: le.Uint16(b[8:10]),
			Picture: Picture{
				Format: PixelFormat(le.Uint16(b[10:12])), Alpha: Alpha(le.Uint16(b[12:14])),
				Width: int(le.Uint32(b[16:20])), Height: int(le.Uint32(b[20:24])),
				Pitch: int(le.Uint32(b[24:28])), Offset1: int(le.Uint32(b[28:32])),
			},
			Buffers: le.Uint16(b[14:16]),
		}
		size := le.Uint64(b[32:40])
		if size > MaxBufferSize {
			return nil, &ParseError{Type: t, Offset: 32, What: fmt.Sprintf("buffer size %d is over the %d-byte limit", size, MaxBufferSize)}
		}
		m.Size = int(size)
		name := b[40:72]
		if i := strings.IndexByte(string(name), 0); i >= 0 {
			if err := zero(t, b, 40+i, 72); err != nil {
				return nil, &ParseError{Type: t, Offset: err.(*ParseError).Offset, What: "name has bytes after its NUL padding"}
			}
			name = name[:i]
		}
		if !utf8.Valid(name) {
			return nil, &ParseError{Type: t, Offset: 40, What: "name is not UTF-8"}
		}
		m.Name = string(name)
		if m.Version >= 2 {
			m.Memory = Memory(le.Uint16(b[72:74]))
			if err := zero(t, b, 74, 80); err != nil {
				return nil, err
			}
		}
		if err := m.Picture.Check(); err != nil {
			return nil, &ParseError{Type: t, Offset: 10, What: err.Error()}
		}
		return m, nil
	case TypeFrame:
		m := FrameMsg{Buffer: le.Uint32(b[8:12]), Flags: le.Uint32(b[12:16]), Sequence: le.Uint64(b[16:24]), Timestamp: int64(le.Uint64(b[24:32]))}
		if m.Flags&^FlagFD != 0 {
			return nil, &ParseError{Type: t, Offset: 12, What: fmt.Sprintf("unknown flags 0x%x", m.Flags&^FlagFD)}
		}
		return m, nil
	case TypeForget:
		if err := zero(t, b, 12, 16); err != nil {
			return nil, err
		}
		return Forget{Buffer: le.Uint32(b[8:12])}, nil
	case TypeBye:
		return Bye{}, nil
	case TypeWelcome:
		if err := zero(t, b, 14, 16); err != nil {
			return nil, err
		}
		return Welcome{Version: le.Uint16(b[8:10]), ReturnQueue: le.Uint16(b[10:12]), FramesInFlight: le.Uint16(b[12:14]), Connection: le.Uint64(b[16:24])}, nil
	case TypeRelease:
		if err := zero(t, b, 12, 16); err != nil {
			return nil, err
		}
		return Release{Buffer: le.Uint32(b[8:12]), Sequence: le.Uint64(b[16:24])}, nil
	case TypeDrain:
		if err := zero(t, b, 10, 12); err != nil {
			return nil, err
		}
		if err := zero(t, b, 20, 24); err != nil {
			return nil, err
		}
		return Drain{Reason: DrainReason(le.Uint16(b[8:10])), Returned: le.Uint32(b[12:16]), Unreturned: le.Uint32(b[16:20])}, nil
	}
	return nil, &ParseError{Type: t, Offset: 4, What: "unknown message type"}
}

// zero checks that b[from:to] is all zero bytes (reserved fields).
func zero(t MsgType, b []byte, from, to int) error {
	for i := from; i < to; i++ {
		if b[i] != 0 {
			return &ParseError{Type: t, Offset: i, What: "reserved byte is not zero"}
		}
	}
	return nil
}

// BytesPerPixel is 4 for BGRA and RGBA, 1 (luma) for NV12.
func (f PixelFormat) BytesPerPixel() int {
	if f == NV12 {
		return 1
	}
	return 4
}

// Check reports what is wrong with a picture description, in the words a
// producer's author needs.
func (p Picture) Check() error {
	if p.Memory > MemoryCUDA {
		return fmt.Errorf("memory %d is none of 0 (memfd), 1 (cuda: a CUDA POSIX file descriptor)", uint16(p.Memory))
	}
	switch p.Format {
	case BGRA, RGBA:
		if p.Alpha > AlphaPremultiplied {
			return fmt.Errorf("alpha %d is none of 0 (opaque), 1 (straight), 2 (premultiplied)", uint16(p.Alpha))
		}
	case NV12:
		if p.Alpha != AlphaOpaque {
			return fmt.Errorf("an nv12 picture has no alpha: send alpha 0 (opaque), got %v", p.Alpha)
		}
	default:
		return fmt.Errorf("pixel format %d is none of 1 (bgra), 2 (rgba), 3 (nv12)", uint16(p.Format))
	}
	if p.Width <= 0 || p.Height <= 0 || p.Width > MaxDimension || p.Height > MaxDimension {
		return fmt.Errorf("size %dx%d: width and height must be 1 to %d", p.Width, p.Height, MaxDimension)
	}
	if p.Width%2 != 0 || p.Height%2 != 0 {
		return fmt.Errorf("size %dx%d: width and height must be even (onair's frames are 4:2:0)", p.Width, p.Height)
	}
	row := p.Width * p.Format.BytesPerPixel()
	if p.Pitch < row || p.Pitch > MaxPitch {
		return fmt.Errorf("pitch %d: a %v row of %d pixels needs %d to %d bytes", p.Pitch, p.Format, p.Width, row, MaxPitch)
	}
	need := p.Pitch * p.Height
	if p.Format == NV12 {
		if p.Offset1 < need {
			return fmt.Errorf("nv12 CbCr plane at offset %d overlaps the luma plane (%d bytes)", p.Offset1, need)
		}
		need = p.Offset1 + p.Pitch*(p.Height/2)
	} else if p.Offset1 != 0 {
		return fmt.Errorf("offset1 %d: a %v picture has one plane, send 0", p.Offset1, p.Format)
	}
	if p.Size < need || p.Size > MaxBufferSize {
		return fmt.Errorf("buffer size %d: the picture needs %d bytes (at most %d)", p.Size, need, MaxBufferSize)
	}
	return nil
}

// NewPicture describes a tightly packed picture of the format: pitch the
// row's bytes, NV12's CbCr plane right after its luma.
func NewPicture(f PixelFormat, a Alpha, w, h int) Picture {
	p := Picture{Format: f, Alpha: a, Width: w, Height: h, Pitch: w * f.BytesPerPixel()}
	p.Size = p.Pitch * h
	if f == NV12 {
		p.Offset1 = p.Size
		p.Size += p.Pitch * (h / 2)
	}
	return p
}
