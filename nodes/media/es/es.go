// Package es reads H.264 and HEVC video as access units: Annex B
// elementary streams (.264, .h264, .hevc, .h265) and MPEG transport streams
// (.ts), split into the coded pictures a decoder takes one at a time.
//
// An access unit is one coded picture with the parameter sets and SEI that
// come before it, as bytes of the stream with their start codes: what
// NVDEC's parser (or an ffmpeg reading raw H.264/HEVC) takes. Reader.Next
// hands each access unit on as a slice of the reader's one read buffer, so
// nothing is copied on the way from the file to the decoder; a transport
// stream's payloads are gathered into that buffer as they are read.
//
// The boundaries follow the specifications' rules: a new access unit
// starts with an access unit delimiter, or with the first parameter set,
// prefix SEI (and, for H.264, NAL types 14 to 18) after the last slice of
// the previous picture, or with the first slice of a new picture
// (first_mb_in_slice = 0 in H.264, first_slice_segment_in_pic_flag in
// HEVC). Sequence parameter sets are parsed for the picture size (after
// the conformance window), bit depth and chroma format, so a user learns
// that a file does not fit its source before anything is decoded, and a
// change of size or format inside a stream is seen where it happens.
//
// Transport streams are read by es's own demultiplexer (ts.go), linear in
// the stream; its tests compare it with go-astits, the reader it replaced.
//
// es imports the standard library and internal/bitstream (the NAL syntax
// reader it shares with cuda/hevc), nothing else of onair's:
// the CPU backend's decoder, NVDEC's feeders and the tools all use it.
package es

import (
	"errors"
	"fmt"
)

// Codec is the video coding of a stream.
type Codec uint8

const (
	H264 Codec = iota + 1
	HEVC
)

func (c Codec) String() string {
	switch c {
	case H264:
		return "H.264"
	case HEVC:
		return "HEVC"
	}
	return fmt.Sprintf("Codec(%d)", uint8(c))
}

// ParseCodec maps "h264" and "hevc" (as node params spell them) to a Codec.
func ParseCodec(s string) (Codec, error) {
	switch s {
	case "h264", "H264", "H.264", "avc":
		return H264, nil
	case "hevc", "HEVC", "h265", "H265":
		return HEVC, nil
	}
	return 0, fmt.Errorf("unknown codec %q: use h264 or hevc", s)
}

// MaxSide is the longest side of a picture the package reads a sequence
// parameter set of, coded or displayed: a larger one is refused with
// AccessUnit.SPSError.
const MaxSide = 16384

// Info is what a sequence parameter set says about the pictures that follow
// it.
type Info struct {
	Codec Codec
	// Width and Height are the displayed size: the coded size less the
	// conformance window (HEVC) or frame cropping (H.264).
	Width, Height int
	// CodedWidth and CodedHeight are the decoded picture's size before
	// cropping (whole macroblocks or minimum coding blocks).
	CodedWidth, CodedHeight int
	// Crop is the conformance window in luma samples: left, right, top,
	// bottom.
	Crop [4]int
	// BitDepth is the luma bit depth (8 or 10 for what onair plays);
	// BitDepthChroma the chroma one.
	BitDepth, BitDepthChroma int
	// ChromaFormat is chroma_format_idc: 0 monochrome, 1 4:2:0, 2 4:2:2,
	// 3 4:4:4.
	ChromaFormat int
	// Profile is profile_idc (H.264) or general_profile_idc (HEVC).
	Profile int
	// Progressive is false for an H.264 stream that may code fields.
	Progressive bool
}

// SameFormat reports whether two parameter sets describe pictures of one
// size and format (what a decoder's output pool depends on).
func (i Info) SameFormat(o Info) bool {
	return i.Codec == o.Codec && i.Width == o.Width && i.Height == o.Height &&
		i.CodedWidth == o.CodedWidth && i.CodedHeight == o.CodedHeight &&
		i.BitDepth == o.BitDepth && i.BitDepthChroma == o.BitDepthChroma && i.ChromaFormat == o.ChromaFormat
}

func (i Info) String() string {
	chroma := [...]string{"4:0:0", "4:2:0", "4:2:2", "4:4:4"}
	c := "?"
	if i.ChromaFormat >= 0 && i.ChromaFormat < len(chroma) {
		c = chroma[i.ChromaFormat]
	}
	return fmt.Sprintf("%dx%d %d-bit %s %s", i.Width, i.Height, i.BitDepth, c, i.Codec)
}

// AccessUnit is one coded picture and the NAL units before it.
type AccessUnit struct {
	// Data is the access unit's bytes as they are in the stream, start
	// codes included. It is a slice of the reader's buffer, valid until
	// the next call to Next or Rewind: a user that keeps it copies it.
	Data []byte
	// Index counts access units from 0 in the stream.
	Index int64
	// Offset is where Data starts in the elementary stream (for a
	// transport stream: in the video payload, not the file).
	Offset int64
	// PTS is the presentation time of a transport stream's access unit in
	// 90 kHz units, when its PES packet carried one (HasPTS).
	PTS    int64
	HasPTS bool
	// Key is true for an IDR picture (H.264) or an IRAP picture (HEVC): a
	// decoder can start there.
	Key bool
	// Pictures is false for an access unit that holds no slice (parameter
	// sets or SEI alone, at the end of a stream).
	Pictures bool
	// Info is set when the access unit carries a sequence parameter set:
	// what it says. It is nil otherwise.
	Info *Info
	// SPSError is set when the access unit carries a sequence parameter
	// set that cannot be used (sides over MaxSide, a value out of range,
	// cut short): why. Info is nil then, unless another one of it can.
	SPSError error
	// NALs is where each NAL unit of Data starts: the index of its header's
	// first byte, just after its start code, in stream order. A NAL unit
	// ends where the next one's start code begins (its zero bytes
	// included), the last at the end of Data. It shares Data's lifetime.
	NALs []int32
}

// ErrNoStream is returned (wrapped) when a file holds no video this
// package reads.
var ErrNoStream = errors.New("no H.264 or HEVC video")
