package es

import (
	"bytes"
	"fmt"
	"io"
)

// NewLive reads a live MPEG-TS (a network input, a pipe) from rd: the
// first H.264 or HEVC stream of the first program map that carries one (of
// codec want, unless want is 0). A stream that starts with an Annex B start
// code instead is read as an elementary stream: of codec want, or, with want 0, of the codec whose parameter set
// comes first. Nothing is read twice: what comes before
// the program map, and the access units before the first that carries a
// sequence parameter set, are skipped (a decoder cannot start there), and
// Next returns that access unit first. name says where the stream comes
// from, in errors. A live stream cannot be rewound. A read error of rd
// (a connection lost) ends the stream as its end does: the access units
// already read come out first, then io.EOF.
func NewLive(rd io.Reader, name string, want Codec) (*Reader, error) {
	var head [5]byte
	n, err := io.ReadFull(rd, head[:])
	if err != nil {
		return nil, fmt.Errorf("%s: the stream ended before it began (%v: %w)", name, err, ErrNoStream)
	}
	rd = io.MultiReader(bytes.NewReader(head[:n]), rd)
	var r *Reader
	if c, annexB := annexBCodec(head, want); annexB {
		if c == 0 {
			return nil, fmt.Errorf("%s: an elementary stream that starts with neither an H.264 SPS nor an HEVC VPS (%w)", name, ErrNoStream)
		}
		r = NewAnnexB(endOnError{rd}, c)
	} else {
		ts, c, err := newTSSource(endOnError{rd}, true, want)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r = newReader(c)
		r.ps = ts
		r.start.Audio = ts.audio
	}
	r.path = name
	for {
		au, err := r.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: the stream ended before its first %s sequence parameter set (%w)", name, r.codec, ErrNoStream)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if au.Info == nil {
			continue
		}
		// Kept until the first Next: the reader's buffer moves on.
		au.Data = append([]byte(nil), au.Data...)
		au.NALs = append([]int32(nil), au.NALs...)
		r.held = &au
		r.start.PTS, r.start.HasPTS = au.PTS, au.HasPTS
		return r, nil
	}
}

// Start is where a live stream's pictures start, for its sound's decoder:
// the PTS of the first access unit Next returns (90 kHz, when its PES
// packet carried one), and whether the transport stream's program map
// lists a stream that may be sound (an elementary stream carries none).
type Start struct {
	PTS    int64
	HasPTS bool
	Audio  bool
}

// Start says where a live stream's pictures start (NewLive).
func (r *Reader) Start() Start { return r.start }

// annexBCodec says whether head starts with a 4-byte Annex B start code,
// and the codec of the stream: want, or with want 0, the one whose first
// parameter set the first NAL unit header is (0 for neither).
func annexBCodec(head [5]byte, want Codec) (Codec, bool) {
	if !bytes.Equal(head[:4], []byte{0, 0, 0, 1}) {
		return 0, false
	}
	switch h := head[4]; {
	case want != 0:
		return want, true
	case h&0x1f == 7:
		return H264, true
	case (h>>1)&0x3f == 32:
		return HEVC, true
	}
	return 0, true
}

// endOnError reads as its reader does, but ends where it fails: the
// transport stream reader hands out the last payload only at an end.
type endOnError struct{ r io.Reader }

func (e endOnError) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		err = io.EOF
	}
	return n, err
}
