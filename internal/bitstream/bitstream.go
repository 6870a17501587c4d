// Package bitstream reads the syntax of H.264 and HEVC NAL units: their
// emulation prevention bytes removed (Unescape), then fixed-length and
// Exp-Golomb codes most significant bit first (Reader). nodes/media/es
// reads sequence parameter sets with it, cuda/hevc everything NVDEC needs.
//
// bitstream must never import anything of onair's.
package bitstream

import "errors"

// ErrShort is a NAL unit whose syntax runs past its end (or past what was
// unescaped of it).
var ErrShort = errors.New("the NAL unit ends inside its header")

// ErrGolomb is an Exp-Golomb code longer than 32 bits: corrupt.
var ErrGolomb = errors.New("Exp-Golomb code longer than 32 bits")

// Unescape copies a NAL unit's bytes into dst (reused) without its
// emulation prevention bytes (the 03 of every 00 00 03), giving the raw
// byte sequence payload the syntax is written in; at most max bytes of it
// when max > 0 (a header is short; slice data need never be copied).
func Unescape(dst, nal []byte, max int) []byte {
	dst = dst[:0]
	zeros := 0
	for _, b := range nal {
		if max > 0 && len(dst) >= max {
			break
		}
		if zeros >= 2 && b == 3 {
			zeros = 0
			continue
		}
		if b == 0 {
			zeros++
		} else {
			zeros = 0
		}
		dst = append(dst, b)
	}
	return dst
}

// Reader reads B from bit Pos on. Past the end it reads zeros and sets
// Err to ErrShort; a caller checks Err once, after a whole structure.
type Reader struct {
	B   []byte
	Pos int // in bits
	Err error
}

// U reads an n-bit unsigned value, u(n).
func (r *Reader) U(n int) int {
	v := 0
	for i := 0; i < n; i++ {
		at := r.Pos >> 3
		r.Pos++
		if at >= len(r.B) {
			r.Err = ErrShort
			v <<= 1
			continue
		}
		v = v<<1 | int(r.B[at]>>(7-uint(r.Pos-1)&7))&1
	}
	return v
}

// Flag reads u(1) as a bool.
func (r *Reader) Flag() bool { return r.U(1) == 1 }

// Skip passes n bits.
func (r *Reader) Skip(n int) {
	r.Pos += n
	if r.Pos > len(r.B)*8 {
		r.Err = ErrShort
	}
}

// UE reads an unsigned Exp-Golomb code, ue(v).
func (r *Reader) UE() int {
	zeros := 0
	for r.U(1) == 0 {
		if r.Err != nil {
			return 0
		}
		zeros++
		if zeros > 31 {
			r.Err = ErrGolomb
			return 0
		}
	}
	return (1<<zeros - 1) + r.U(zeros)
}

// SE reads a signed Exp-Golomb code, se(v).
func (r *Reader) SE() int {
	k := r.UE()
	if k&1 == 1 {
		return (k + 1) / 2
	}
	return -k / 2
}
