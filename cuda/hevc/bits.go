package hevc

import "errors"

// errShort is a parameter set or slice header that ends before its syntax
// does.
var errShort = errors.New("the NAL unit ends inside its header")

// unescape removes the emulation prevention bytes (00 00 03 -> 00 00) of
// a NAL unit's first bytes into dst (reused), at most max bytes of
// output: headers are short, slice data is never unescaped.
func unescape(dst, nal []byte, max int) []byte {
	dst = dst[:0]
	zeros := 0
	for _, b := range nal {
		if len(dst) >= max {
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

// reader reads a header's bits; past the end it reads zeros and sets err.
type reader struct {
	b   []byte
	pos int // in bits
	err error
}

func (r *reader) u(n int) int {
	v := 0
	for i := 0; i < n; i++ {
		byteAt := r.pos >> 3
		if byteAt >= len(r.b) {
			r.err = errShort
			r.pos++
			v <<= 1
			continue
		}
		v = v<<1 | int(r.b[byteAt]>>(7-uint(r.pos&7)))&1
		r.pos++
	}
	return v
}

func (r *reader) flag() bool     { return r.u(1) == 1 }
func (r *reader) u8(n int) uint8 { return uint8(r.u(n)) }

// ue is an Exp-Golomb code.
func (r *reader) ue() int {
	zeros := 0
	for r.u(1) == 0 {
		zeros++
		if zeros > 31 || r.err != nil {
			r.err = errShort
			return 0
		}
	}
	return (1 << zeros) - 1 + r.u(zeros)
}

func (r *reader) se() int {
	k := r.ue()
	if k&1 == 1 {
		return (k + 1) / 2
	}
	return -k / 2
}

func (r *reader) skip(n int) { r.pos += n }

// ceilLog2 is Ceil(Log2(n)) for n >= 1.
func ceilLog2(n int) int {
	b := 0
	for (1 << b) < n {
		b++
	}
	return b
}
