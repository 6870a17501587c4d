package value

import (
	"fmt"
	"slices"
)

// PixelFormat is the pixel layout of a picture: in the plan (its JSON
// spells it "nv12" or "p010") and in every frame.
type PixelFormat uint8

const (
	// NV12 is 8-bit 4:2:0: a luma plane of W×H bytes, then a chroma plane of
	// H/2 rows of W/2 interleaved Cb,Cr byte pairs.
	NV12 PixelFormat = iota + 1
	// P010 is 10-bit 4:2:0 in 16-bit little-endian words, the sample in the
	// high ten bits; planes as NV12 with two bytes per sample.
	P010
)

// ParsePixelFormat maps "nv12" and "p010" to a PixelFormat.
func ParsePixelFormat(s string) (PixelFormat, error) {
	switch s {
	case "nv12", "NV12":
		return NV12, nil
	case "p010", "P010":
		return P010, nil
	}
	return 0, fmt.Errorf("unknown pixel format %q: use nv12 or p010", s)
}

func (f PixelFormat) String() string {
	switch f {
	case NV12:
		return "nv12"
	case P010:
		return "p010"
	}
	return fmt.Sprintf("PixelFormat(%d)", uint8(f))
}

// BytesPerSample is 1 for NV12 and 2 for P010.
func (f PixelFormat) BytesPerSample() int {
	if f == P010 {
		return 2
	}
	return 1
}

// BitDepth is 8 for NV12 and 10 for P010.
func (f PixelFormat) BitDepth() int {
	if f == P010 {
		return 10
	}
	return 8
}

// Size is the number of bytes a tightly packed W×H picture takes.
func (f PixelFormat) Size(w, h int) int { return w * h * 3 / 2 * f.BytesPerSample() }

// Black returns the limited-range black of the format as stored samples:
// luma and chroma (16/128 for NV12, 64<<6 and 512<<6 for P010).
func (f PixelFormat) Black() (y, c uint16) {
	if f == P010 {
		return 64 << 6, 512 << 6
	}
	return 16, 128
}

// MarshalText spells f as the plan does: "nv12" or "p010".
func (f PixelFormat) MarshalText() ([]byte, error) {
	if f != NV12 && f != P010 {
		return nil, fmt.Errorf("no pixel format %d", uint8(f))
	}
	return []byte(f.String()), nil
}

// UnmarshalText reads "nv12" or "p010"; anything else is an error.
func (f *PixelFormat) UnmarshalText(b []byte) error {
	x, err := ParsePixelFormat(string(b))
	if err != nil {
		return err
	}
	*f = x
	return nil
}

// Stream names what a node emits and an edge carries: frames of a pixel
// format ("nv12", "p010"), "packets" (compressed or raw, from a reader or
// demuxer) or "dmabuf" (foreign GPU buffers handed over a socket). The
// plan spells it as text; one spelt otherwise is refused as it is read.
type Stream string

// The streams onair knows (the registry's formats are these).
const (
	StreamNV12    Stream = "nv12"
	StreamP010    Stream = "p010"
	StreamPackets Stream = "packets"
	StreamDMABUF  Stream = "dmabuf"
)

// Streams are the streams onair knows, frames first.
var Streams = []Stream{StreamNV12, StreamP010, StreamPackets, StreamDMABUF}

// Pixel is the pixel format of a stream of frames; false for packets and
// foreign buffers.
func (s Stream) Pixel() (PixelFormat, bool) {
	switch s {
	case StreamNV12:
		return NV12, true
	case StreamP010:
		return P010, true
	}
	return 0, false
}

// UnmarshalText reads a stream onair knows ("" is none: a sink emits
// nothing).
func (s *Stream) UnmarshalText(b []byte) error {
	x := Stream(b)
	if x != "" && !slices.Contains(Streams, x) {
		return fmt.Errorf("stream format %q is none of nv12, p010, packets, dmabuf", x)
	}
	*s = x
	return nil
}
