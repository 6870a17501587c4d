package es

import (
	"fmt"
	"io"
)

// NewLive reads a live MPEG-TS (a network input, a pipe) from rd: the
// first H.264 or HEVC stream of the first program map that carries one (of
// codec want, unless want is 0). Nothing is read twice: what comes before
// the program map, and the access units before the first that carries a
// sequence parameter set, are skipped (a decoder cannot start there), and
// Next returns that access unit first. name says where the stream comes
// from, in errors. A live stream cannot be rewound. A read error of rd
// (a connection lost) ends the stream as its end does: the access units
// already read come out first, then io.EOF.
func NewLive(rd io.Reader, name string, want Codec) (*Reader, error) {
	ts, c, err := newTSSource(endOnError{rd}, true, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r := newReader(c)
	r.ps, r.path = ts, name
	for {
		au, err := r.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: the stream ended before its first %s sequence parameter set (%w)", name, c, ErrNoStream)
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
		return r, nil
	}
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
