package es

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxAccessUnit bounds one access unit, start codes included: Next refuses
// a longer one with an error, so nothing longer reaches a decoder. (A
// 16384x16384 4:2:0 picture at 10 bits is 768 MiB raw, but no encoder
// onair plays spends a twelfth of that on one coded picture.)
const MaxAccessUnit = 64 << 20

// initialBuffer is the read buffer's first size, and what it may hold past
// the longest access unit: at most MaxAccessUnit+initialBuffer in all for
// an elementary stream (for a transport stream, the longer of this and
// one PES payload past it).
const initialBuffer = 64 << 10

// payloadSource supplies the elementary stream of a container: each call
// returns the next piece of payload and, when it carries one, the PTS of
// the first access unit that starts in it.
type payloadSource interface {
	next() (data []byte, pts int64, hasPTS bool, err error)
	rewind() error
}

type ptsMark struct {
	off int64 // where the payload starts in the elementary stream
	pts int64
}

// Reader splits a stream into access units. It is not safe for concurrent
// use.
type Reader struct {
	codec Codec
	path  string

	// Exactly one of rd (an Annex B stream) and ps (a container) is set.
	rd     io.Reader
	seek   io.Seeker
	ps     payloadSource
	closer io.Closer

	buf  []byte
	n    int   // valid bytes in buf
	base int64 // stream offset of buf[0]
	eof  bool
	err  error // sticky read error

	// The access unit being gathered.
	auStart int // index of its first byte; -1 before the first start code
	auCode  int // index of its first 00 00 01
	auNALs  int
	seenVCL bool
	key     bool
	info    *Info
	spsErr  error // why an SPS of it cannot be used

	// The last start code found.
	scan     int  // where the search for the next start code goes on
	nal      int  // index of the NAL header after the last start code
	pending  bool // that NAL is not classified yet
	boundary int  // where that NAL's start code begins (zeros before 00 00 01 included)
	code     int  // index of its 00 00 01
	spsAt    int  // index of an SPS NAL's header whose end is not found yet; -1

	marks     []ptsMark
	nals      []int64 // stream offsets of the NAL headers of the access unit being gathered
	auNALsOut []int32 // the last access unit's NALs, relative to its start
	index     int64
	skipped   int64 // bytes before the first start code
	scratch   []byte
	first     *Info       // the first parameter set of the stream
	done      bool        // the last access unit was returned
	fatal     error       // an access unit over MaxAccessUnit: every later Next returns it
	held      *AccessUnit // a live stream's first access unit, read ahead by NewLive
	start     Start       // a live stream's first access unit's time, and its sound
}

func newReader(c Codec) *Reader {
	return &Reader{codec: c, buf: make([]byte, initialBuffer), auStart: -1, spsAt: -1}
}

// NewAnnexB reads an Annex B elementary stream of codec c from rd. If rd
// is also an io.Seeker, Rewind starts it again.
func NewAnnexB(rd io.Reader, c Codec) *Reader {
	r := newReader(c)
	r.rd = rd
	r.seek, _ = rd.(io.Seeker)
	return r
}

// Open opens a file of H.264 or HEVC video: a transport stream (told by its
// sync bytes, whatever its name) or an Annex B elementary stream. want is
// the codec the caller expects, or 0 for any: a transport stream's first
// video stream of that codec is read; an elementary stream is taken to be
// of that codec (with want 0, its name says: .264/.h264/.avc or
// .hevc/.h265/.265). The first access units are read ahead until a
// sequence parameter set is found, so that Info answers.
func Open(path string, want Codec) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w (check the source's path)", err)
	}
	r, err := open(f, path, want)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func open(f *os.File, path string, want Codec) (*Reader, error) {
	var head [tsPacket*2 + 1]byte
	n, err := io.ReadFull(f, head[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n >= 8 && string(head[4:8]) == "ftyp" {
		return nil, fmt.Errorf("%s is an MP4/MOV file, which this source does not read: play it with a source \"stream\" (url = the file), which remuxes it (%w)", path, ErrNoStream)
	}
	var r *Reader
	if isTS(head[:n]) {
		ts, c, err := newTSSource(f, false, want)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = newReader(c)
		r.ps = ts
	} else {
		c := want
		if c == 0 {
			c = codecOfName(path)
		}
		if c == 0 {
			return nil, fmt.Errorf("%s: cannot tell H.264 from HEVC by its name: name it .264/.h264 or .hevc/.h265 (or say the codec)", path)
		}
		r = NewAnnexB(f, c)
	}
	r.path = path
	r.closer = f
	if err := r.findInfo(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// isTS reports whether b starts like a transport stream: sync bytes 188
// bytes apart.
func isTS(b []byte) bool {
	if len(b) < 1 || b[0] != 0x47 {
		return false
	}
	if len(b) > tsPacket && b[tsPacket] != 0x47 {
		return false
	}
	return true
}

func codecOfName(path string) Codec {
	for i := len(path) - 1; i >= 0 && path[i] != '/'; i-- {
		if path[i] == '.' {
			switch string(bytes.ToLower([]byte(path[i:]))) {
			case ".264", ".h264", ".avc", ".26l":
				return H264
			case ".hevc", ".h265", ".265":
				return HEVC
			}
			return 0
		}
	}
	return 0
}

// findInfo reads ahead to the first sequence parameter set and rewinds.
// One that cannot be used, with no good one before the first picture, is
// the reason the stream cannot be played.
func (r *Reader) findInfo() error {
	var bad error
	for {
		au, err := r.Next()
		if err == io.EOF && bad != nil {
			return fmt.Errorf("%w (%w)", bad, ErrNoStream)
		}
		if err == io.EOF {
			return fmt.Errorf("holds no %s sequence parameter set: is it an %s stream? (%w)", r.codec, r.codec, ErrNoStream)
		}
		if err != nil {
			return err
		}
		if au.Info != nil {
			break
		}
		if au.SPSError != nil && bad == nil {
			bad = fmt.Errorf("access unit %d (byte %d): %w", au.Index, au.Offset, au.SPSError)
		}
		if au.Pictures && bad != nil {
			return fmt.Errorf("%w; no picture of the stream can be decoded", bad)
		}
		if au.Pictures {
			return fmt.Errorf("its first picture comes before any %s sequence parameter set: it is no %s stream that can be decoded from its start", r.codec, r.codec)
		}
	}
	return r.Rewind()
}

// Codec is the stream's codec.
func (r *Reader) Codec() Codec { return r.codec }

// Info is what the stream's first sequence parameter set says (known once
// Open returns).
func (r *Reader) Info() (Info, bool) {
	if r.first == nil {
		return Info{}, false
	}
	return *r.first, true
}

// Skipped is how many bytes came before the first start code.
func (r *Reader) Skipped() int64 { return r.skipped }

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Rewind starts the stream again from its first byte (a file or another
// io.Seeker), keeping the buffer.
func (r *Reader) Rewind() error {
	switch {
	case r.ps != nil:
		if err := r.ps.rewind(); err != nil {
			return err
		}
	case r.seek != nil:
		if _, err := r.seek.Seek(0, io.SeekStart); err != nil {
			return err
		}
	default:
		return errors.New("es: the stream cannot be rewound")
	}
	first := r.first
	*r = Reader{codec: r.codec, path: r.path, rd: r.rd, seek: r.seek, ps: r.ps, closer: r.closer,
		buf: r.buf, scratch: r.scratch, marks: r.marks[:0], nals: r.nals[:0], auNALsOut: r.auNALsOut[:0], auStart: -1, spsAt: -1, first: first}
	return nil
}

func (r *Reader) hdrLen() int {
	if r.codec == HEVC {
		return 3 // two header bytes and the byte holding first_slice_segment_in_pic_flag
	}
	return 2 // one header byte and the byte that starts first_mb_in_slice
}

// Next returns the next access unit, or io.EOF after the last one.
func (r *Reader) Next() (AccessUnit, error) {
	if au := r.held; au != nil {
		r.held = nil
		return *au, nil
	}
	if r.fatal != nil {
		return AccessUnit{}, r.fatal
	}
	if r.done {
		return AccessUnit{}, io.EOF
	}
	for {
		if r.pending {
			if r.n-r.nal < r.hdrLen() && !r.eof {
				if err := r.fill(); err != nil {
					return AccessUnit{}, err
				}
				continue
			}
			starts, vcl, key, sps := r.classify(r.buf[r.nal:min(r.n, r.nal+r.hdrLen())])
			r.pending = false
			var au AccessUnit
			emit := starts && r.auNALs > 0
			if emit {
				if err := r.bound(r.boundary); err != nil {
					return AccessUnit{}, err
				}
				au = r.cut(r.boundary)
				r.auStart, r.auCode = r.boundary, r.code
			}
			r.auNALs++
			r.nals = append(r.nals, r.base+int64(r.nal))
			r.seenVCL = r.seenVCL || vcl
			r.key = r.key || key
			if sps {
				r.spsAt = r.nal
			}
			if emit {
				return au, nil
			}
		}
		i := bytes.Index(r.buf[r.scan:r.n], startCode)
		if i < 0 {
			if r.eof {
				return r.last()
			}
			r.scan = max(r.scan, r.n-2)
			if err := r.fill(); err != nil {
				return AccessUnit{}, err
			}
			continue
		}
		p := r.scan + i
		b := p
		lo := max(0, p-1) // before the first start code: its zero_byte only
		if r.auStart >= 0 {
			lo = r.nal + 1
		}
		for b > lo && r.buf[b-1] == 0 {
			b--
		}
		if r.spsAt >= 0 {
			r.parseSPS(r.buf[r.spsAt:b])
		}
		if r.auStart < 0 {
			r.skipped = r.base + int64(b)
			r.auStart, r.auCode = b, p
		}
		r.nal, r.scan, r.pending, r.boundary, r.code = p+3, p+3, true, b, p
	}
}

var startCode = []byte{0, 0, 1}

// classify reads a NAL unit's header (and the first bits of a slice's
// header): whether it starts a new access unit after the NAL units
// gathered so far, whether it is a slice (VCL), a random access point, a
// sequence parameter set.
func (r *Reader) classify(h []byte) (starts, vcl, key, sps bool) {
	if len(h) == 0 {
		return false, false, false, false
	}
	if r.codec == HEVC {
		if len(h) < 2 {
			return false, false, false, false
		}
		t := h[0] >> 1 & 0x3f
		layer0 := h[0]&1 == 0 && h[1]>>3 == 0
		switch {
		case t < 32:
			first := len(h) > 2 && h[2]&0x80 != 0
			return r.seenVCL && first && layer0, true, t >= 16 && t <= 23, false
		case t == 35: // access unit delimiter
			return layer0, false, false, false
		case t == 32 || t == 33 || t == 34 || t == 39 || t >= 41 && t <= 44 || t >= 48 && t <= 55:
			return r.seenVCL && layer0, false, false, t == 33 && layer0
		}
		return false, false, false, false
	}
	t := h[0] & 0x1f
	switch t {
	case 1, 2, 5:
		first := len(h) > 1 && h[1]&0x80 != 0
		return r.seenVCL && first, true, t == 5, false
	case 3, 4:
		return false, true, false, false
	case 9: // access unit delimiter
		return true, false, false, false
	case 6, 7, 8, 14, 15, 16, 17, 18:
		return r.seenVCL, false, false, t == 7
	}
	return false, false, false, false
}

func (r *Reader) parseSPS(nal []byte) {
	r.spsAt = -1
	info, err := parseSPS(r.codec, nal, &r.scratch)
	if err != nil {
		// The access unit says why; the reader goes on, as a decoder
		// would, and its user decides.
		r.spsErr = err
		return
	}
	r.info = &info
	if r.first == nil {
		f := info
		r.first = &f
	}
}

// cut returns the access unit gathered so far, ending at end (a buffer
// index), and resets the gathering.
func (r *Reader) cut(end int) AccessUnit {
	au := AccessUnit{Data: r.buf[r.auStart:end:end], Index: r.index, Offset: r.base + int64(r.auStart),
		Key: r.key, Pictures: r.seenVCL, Info: r.info, SPSError: r.spsErr}
	r.auNALsOut = r.auNALsOut[:0]
	for _, off := range r.nals {
		r.auNALsOut = append(r.auNALsOut, int32(off-au.Offset))
	}
	r.nals = r.nals[:0]
	au.NALs = r.auNALsOut[:len(r.auNALsOut):len(r.auNALsOut)]
	code := r.base + int64(r.auCode)
	k := 0
	for k < len(r.marks) && r.marks[k].off <= code {
		au.PTS, au.HasPTS = r.marks[k].pts, true
		k++
	}
	if k > 0 {
		r.marks = append(r.marks[:0], r.marks[k:]...)
	}
	r.index++
	r.auNALs, r.seenVCL, r.key, r.info, r.spsErr = 0, false, false, nil, nil
	return au
}

// last returns the access unit at the end of the stream, without the zero
// bytes that trail it.
func (r *Reader) last() (AccessUnit, error) {
	r.done = true
	if r.auStart < 0 {
		if r.err != nil {
			return AccessUnit{}, r.err
		}
		return AccessUnit{}, io.EOF
	}
	end := r.n
	for end > r.nal && r.buf[end-1] == 0 {
		end--
	}
	if r.spsAt >= 0 {
		r.parseSPS(r.buf[r.spsAt:end])
	}
	if r.auNALs == 0 {
		if r.err != nil {
			return AccessUnit{}, r.err
		}
		return AccessUnit{}, io.EOF
	}
	if err := r.bound(end); err != nil {
		return AccessUnit{}, err
	}
	return r.cut(end), nil
}

// bound refuses the access unit being gathered when, ending at end, it
// would be longer than MaxAccessUnit.
func (r *Reader) bound(end int) error {
	if end-r.auStart <= MaxAccessUnit {
		return nil
	}
	return r.tooLong()
}

func (r *Reader) tooLong() error {
	r.fatal = fmt.Errorf("%s: access unit %d (byte %d) runs past %d MiB, the most one access unit may hold: is it %s video?",
		r.name(), r.index, r.base+int64(max(r.auStart, 0)), MaxAccessUnit>>20, r.codec)
	r.err, r.eof = r.fatal, true
	return r.fatal
}

// fill compacts the buffer (dropping what was returned or skipped) and
// reads more of the stream into it.
func (r *Reader) fill() error {
	if r.err != nil || r.eof {
		r.eof = true
		return nil
	}
	keep := r.auStart
	if keep < 0 {
		keep = max(0, r.scan-1) // a start code's zero_byte may be just before the scan
	}
	if keep > 0 {
		copy(r.buf, r.buf[keep:r.n])
		r.n -= keep
		r.base += int64(keep)
		r.scan -= keep
		if r.auStart >= 0 {
			r.auStart -= keep
			r.auCode -= keep
			r.nal -= keep
			r.boundary -= keep
			r.code -= keep
			if r.spsAt >= 0 {
				r.spsAt -= keep
			}
		}
	}
	if r.ps != nil {
		return r.fillPayload()
	}
	if r.n == len(r.buf) {
		if err := r.grow(r.n+1, initialBuffer); err != nil {
			return err
		}
	}
	m, err := r.rd.Read(r.buf[r.n:])
	r.n += m
	switch {
	case err == io.EOF:
		r.eof = true
	case err != nil:
		r.err, r.eof = fmt.Errorf("reading %s: %w", r.name(), err), true
	}
	return nil
}

func (r *Reader) fillPayload() error {
	data, pts, has, err := r.ps.next()
	if err == io.EOF {
		r.eof = true
		return nil
	}
	if err != nil {
		r.err, r.eof = fmt.Errorf("reading %s: %w", r.name(), err), true
		return nil
	}
	if r.n+len(data) > len(r.buf) {
		if err := r.grow(r.n+len(data), len(data)); err != nil {
			return err
		}
	}
	if has {
		r.marks = append(r.marks, ptsMark{off: r.base + int64(r.n), pts: pts})
	}
	r.n += copy(r.buf[r.n:], data)
	return nil
}

// grow makes the buffer hold need bytes, doubling it up to the access unit
// being gathered (at most MaxAccessUnit) and one read of read bytes past
// it. The buffer holds nothing before that access unit (fill dropped it),
// so a need past the bound is an access unit longer than MaxAccessUnit.
func (r *Reader) grow(need, read int) error {
	limit := MaxAccessUnit + max(read, initialBuffer)
	if need > limit {
		return r.tooLong()
	}
	nb := make([]byte, min(max(2*len(r.buf), need), limit))
	copy(nb, r.buf[:r.n])
	r.buf = nb
	return nil
}

func (r *Reader) name() string {
	if r.path != "" {
		return r.path
	}
	return "the stream"
}
