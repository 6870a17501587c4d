package es

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

const tsPacket = 188

// tsSource is the video of a transport stream: the PES payloads of one
// PID, chosen as the first H.264 or HEVC stream the program map lists
// (the first of the wanted codec, when one is wanted).
//
// It is onair's own demultiplexer, linear in the stream: each packet's
// payload is appended once to one PES buffer, reused from PES to PES.
// What it does where a stream is damaged:
//   - A lost sync byte (bytes lost or inserted) is found again at the next
//     0x47 that another follows 188 bytes on (or that the stream's end
//     follows); the PES being gathered is dropped and every PID's
//     continuity counter forgotten.
//   - A packet whose continuity counter does not follow the last one's
//     drops the PES being gathered, and the packets after it up to the
//     next that starts a PES (a gap in a keyframe loses the picture: the
//     live UDP input renumbers its packets so that it does not). A
//     discontinuity_indicator starts the PID afresh. A packet that repeats
//     the last one's counter is a duplicate and is ignored. Packets with
//     transport_error_indicator set are ignored.
//   - A PES ends where its PES_packet_length says (when that is not 0), at
//     the next packet that starts one, or at the end of the stream. One
//     cut short (packets lost, the counters renumbered) is handed on as it
//     is, for the decoder to conceal; one whose header does not fit in it,
//     or that does not start with a start code prefix, is dropped.
//   - A PES longer than MaxAccessUnit is an error: nothing past it is read.
//   - PSI sections (the PAT, the program maps) have their CRC_32 checked; a
//     section that fails it, or that is not current yet
//     (current_next_indicator 0), is ignored.
type tsSource struct {
	f      io.Reader // an io.Seeker too, unless the stream is live
	live   bool      // read on from the program map: nothing is read twice
	want   Codec
	pid    uint16
	pmtPID uint16
	codec  Codec
	chosen bool
	audio  bool // the program map lists a stream that may be sound (audioTypes)

	// The bytes read and not yet taken as packets: buf[r:w].
	buf  []byte
	r, w int
	off  int64 // stream offset of buf[0]
	eof  bool
	err  error // a read error, returned once the packets before it are taken

	cc [8192]int8 // per PID: the last continuity counter, -1 when none

	// The PES being gathered from the video PID.
	pes    []byte
	gather bool  // a PES was started and is not complete or dropped
	pesAt  int64 // where its first packet starts in the stream
	pesLen int   // its PES_packet_length, once read; -1 before
	// A packet that starts the next PES, its header read and its counter
	// checked, taken at the next call.
	held       [tsPacket]byte
	heldHeader tsHeader
	heldAt     int64
	holding    bool

	// Before the program is chosen: the PSI sections being gathered.
	pmts map[uint16]bool // the program maps' PIDs the PATs list
	psi  map[uint16]*psiSection
}

// audioTypes are the stream types of a program map that carry sound, or
// may (0x06, private PES: DVB's AC-3, E-AC-3 and Opus; also subtitles
// and teletext, which the sound's decoder then finds are not).
var audioTypes = map[uint8]bool{
	0x03: true, 0x04: true, 0x0f: true, 0x11: true, 0x81: true, 0x87: true, 0x06: true,
}

// Stream types of a program map.
const (
	streamTypeH264 = 0x1b
	streamTypeHEVC = 0x24
)

// maxTSDataBeforePMT bounds the tables and payloads (packets that start a
// PES or a section) read before the program map: a file with none is not
// a transport stream with video.
const maxTSDataBeforePMT = 4096

// tsReadSize is how much is read from the stream at once (348 packets).
const tsReadSize = 348 * tsPacket

// maxPES bounds one PES packet of the video PID: a longer one is an error.
// It is MaxAccessUnit, the most the Reader takes as one access unit, as a
// PES holds one.
const maxPES = MaxAccessUnit

func newTSSource(f io.Reader, live bool, want Codec) (*tsSource, Codec, error) {
	t := &tsSource{f: f, live: live, want: want, buf: make([]byte, tsReadSize)}
	t.reset()
	var found []string
	type stream struct {
		pid uint16 // of the program map that lists it
		typ uint8
	}
	var others []stream // the program map's streams that are no video onair decodes
	t.pmts = map[uint16]bool{}
	t.psi = map[uint16]*psiSection{}
	defer func() { t.pmts, t.psi = nil, nil }()
	var sections [][]byte
	for units := 0; units < maxTSDataBeforePMT; {
		p, err := t.packet()
		if err != nil {
			return nil, 0, fmt.Errorf("transport stream: %w", err)
		}
		if p == nil {
			break
		}
		h, ok := parseTSHeader(p)
		if !ok {
			continue
		}
		if h.pusi {
			units++
		}
		if h.pid != 0 && !t.pmts[h.pid] {
			continue
		}
		s := t.psi[h.pid]
		if s == nil {
			s = &psiSection{}
			t.psi[h.pid] = s
		}
		if !t.continuous(&h) {
			s.drop()
		}
		if h.dup {
			continue
		}
		sections = s.add(p[h.payload:], h.pusi, sections[:0])
		for _, sec := range sections {
			if h.pid == 0 {
				t.readPAT(sec)
				continue
			}
			pmt, ok := parsePMT(sec)
			if !ok {
				continue
			}
			if len(found) > 0 || len(others) > 0 && h.pid == others[0].pid {
				goto end // the program map again: the wanted codec is not in it
			}
			for _, s := range pmt {
				var c Codec
				switch s.typ {
				case streamTypeH264:
					c = H264
				case streamTypeHEVC:
					c = HEVC
				default:
					others = append(others, stream{h.pid, s.typ})
					continue
				}
				found = append(found, c.String())
				if want == 0 || c == want {
					t.pid, t.pmtPID, t.codec, t.chosen = s.pid, h.pid, c, true
					for _, a := range pmt {
						t.audio = t.audio || audioTypes[a.typ]
					}
					if live {
						return t, c, nil
					}
					if err := t.rewind(); err != nil {
						return nil, 0, err
					}
					return t, c, nil
				}
			}
		}
	}
end:
	if len(found) > 0 {
		return nil, 0, fmt.Errorf("transport stream carries %v video, no %s: %w", found, want, ErrNoStream)
	}
	if len(others) > 0 {
		types := make([]string, len(others))
		for i, o := range others {
			types[i] = fmt.Sprintf("0x%02x", o.typ)
		}
		return nil, 0, fmt.Errorf("transport stream whose program map lists no H.264 or HEVC stream, only stream types %s (audio, data or a video codec onair does not decode): %w", strings.Join(types, ", "), ErrNoStream)
	}
	return nil, 0, fmt.Errorf("transport stream with no H.264 or HEVC stream in a program map: %w", ErrNoStream)
}

// reset forgets what was read: the stream starts again at its next byte.
func (t *tsSource) reset() {
	t.r, t.w, t.off, t.eof, t.err = 0, 0, 0, false, nil
	for i := range t.cc {
		t.cc[i] = -1
	}
	t.pes, t.gather, t.holding = t.pes[:0], false, false
}

func (t *tsSource) rewind() error {
	s, ok := t.f.(io.Seeker)
	if !ok || t.live {
		return errors.New("a live transport stream cannot be rewound")
	}
	if _, err := s.Seek(0, io.SeekStart); err != nil {
		return err
	}
	t.reset()
	return nil
}

// next returns the payload of the next PES packet of the video PID and its
// PTS (90 kHz). The payload is a slice of the source's buffer, good until
// the next call.
func (t *tsSource) next() ([]byte, int64, bool, error) {
	for {
		if t.holding {
			t.holding = false
			if err := t.video(t.held[:], t.heldHeader, t.heldAt); err != nil {
				return nil, 0, false, err
			}
		} else {
			p, err := t.packet()
			if err != nil {
				return nil, 0, false, err
			}
			if p == nil {
				if t.gather {
					t.gather = false
					if data, pts, has, ok := t.payload(); ok {
						return data, pts, has, nil
					}
				}
				return nil, 0, false, io.EOF
			}
			if pid := uint16(p[1]&0x1f)<<8 | uint16(p[2]); pid != t.pid {
				continue
			}
			h, ok := parseTSHeader(p)
			if !ok {
				continue
			}
			if !t.continuous(&h) {
				t.gather = false
			}
			if h.dup {
				continue
			}
			at := t.off + int64(t.r) - tsPacket
			if h.pusi && t.gather {
				// It starts the next PES, which ends this one: taken at
				// the next call, once this one's payload is handed on.
				copy(t.held[:], p)
				t.holding, t.heldHeader, t.heldAt = true, h, at
				t.gather = false
				if data, pts, has, ok := t.payload(); ok {
					return data, pts, has, nil
				}
				continue
			}
			if err := t.video(p, h, at); err != nil {
				return nil, 0, false, err
			}
		}
		if data, pts, has, ok := t.complete(); ok {
			return data, pts, has, nil
		}
	}
}

// video takes a packet of the video PID (its header read and its counter
// checked) into the PES being gathered; at is where it starts in the
// stream.
func (t *tsSource) video(p []byte, h tsHeader, at int64) error {
	if h.pusi {
		t.pes, t.gather, t.pesLen, t.pesAt = t.pes[:0], true, -1, at
	}
	if !t.gather {
		return nil
	}
	data := p[h.payload:]
	if len(t.pes)+len(data) > maxPES {
		t.gather = false
		return fmt.Errorf("the PES packet of PID %d that starts at byte %d runs past %d MiB, the most one may hold: is it a transport stream of video?", t.pid, t.pesAt, maxPES>>20)
	}
	if len(t.pes)+len(data) > cap(t.pes) { // grown here, so that it never holds more than maxPES
		nb := make([]byte, len(t.pes), min(max(2*cap(t.pes), len(t.pes)+len(data), 64<<10), maxPES))
		copy(nb, t.pes)
		t.pes = nb
	}
	t.pes = append(t.pes, data...)
	if t.pesLen < 0 && len(t.pes) >= 6 {
		if t.pes[0] != 0 || t.pes[1] != 0 || t.pes[2] != 1 {
			t.gather = false // no PES
			return nil
		}
		t.pesLen = int(t.pes[4])<<8 | int(t.pes[5])
	}
	return nil
}

// complete hands on the PES being gathered once it holds the
// PES_packet_length its header says.
func (t *tsSource) complete() ([]byte, int64, bool, bool) {
	if !t.gather || t.pesLen <= 0 || len(t.pes) < 6+t.pesLen {
		return nil, 0, false, false
	}
	t.gather = false
	return t.payload()
}

// payload parses the PES in t.pes: its payload after the header, and its
// PTS. ok is false for one that holds no payload, or is not a PES.
func (t *tsSource) payload() (data []byte, pts int64, has, ok bool) {
	b := t.pes
	if len(b) < 6 || b[0] != 0 || b[1] != 0 || b[2] != 1 {
		return nil, 0, false, false
	}
	end := len(b)
	if n := int(b[4])<<8 | int(b[5]); n > 0 && 6+n < end {
		end = 6 + n
	}
	start := 6
	switch sid := b[3]; sid {
	case 0xbe: // padding_stream
		return nil, 0, false, false
	case 0xbc, 0xbf, 0xf0, 0xf1, 0xf2, 0xf8, 0xff: // no optional header
	default:
		if end < 9 {
			return nil, 0, false, false
		}
		hl := int(b[8])
		start = 9 + hl
		if start > end {
			return nil, 0, false, false
		}
		if flags := b[7] >> 6; flags&2 != 0 && hl >= 5 {
			p := b[9:14]
			pts = int64(p[0]>>1&7)<<30 | int64(p[1])<<22 | int64(p[2]>>1)<<15 | int64(p[3])<<7 | int64(p[4]>>1)
			has = true
		}
	}
	if start == end {
		return nil, 0, false, false
	}
	return b[start:end], pts, has, true
}

// tsHeader is what a packet's header says.
type tsHeader struct {
	pid     uint16
	pusi    bool
	payload int  // index of the payload in the packet
	dup     bool // the packet repeats the last one's counter (set by continuous)
	cc      int8
	disc    bool // discontinuity_indicator
}

// parseTSHeader reads a packet's header and adaptation field. ok is false
// for a packet to ignore: transport_error_indicator set, no payload, an
// adaptation field longer than the packet.
func parseTSHeader(p []byte) (h tsHeader, ok bool) {
	if p[1]&0x80 != 0 {
		return h, false
	}
	h.pid = uint16(p[1]&0x1f)<<8 | uint16(p[2])
	h.pusi = p[1]&0x40 != 0
	h.cc = int8(p[3] & 0xf)
	afc := p[3] >> 4 & 3
	if afc&1 == 0 {
		return h, false
	}
	h.payload = 4
	if afc&2 != 0 {
		n := int(p[4])
		if n > tsPacket-5 {
			return h, false
		}
		h.disc = n > 0 && p[5]&0x80 != 0
		h.payload = 5 + n
	}
	return h, true
}

// continuous checks a packet's continuity counter against the last one of
// its PID (and keeps it): false for a gap. A packet that repeats the last
// counter is a duplicate (h.dup): continuous, to be ignored.
func (t *tsSource) continuous(h *tsHeader) bool {
	last := t.cc[h.pid]
	t.cc[h.pid] = h.cc
	switch {
	case h.disc || last < 0:
		return true
	case h.cc == last:
		h.dup = true
		return true
	}
	return h.cc == (last+1)&0xf
}

// packet returns the next packet of the stream, a slice of the buffer good
// until the next call, or nil at its end. A partial packet at the end is
// no packet.
func (t *tsSource) packet() ([]byte, error) {
	for {
		if !t.fill(tsPacket) {
			if t.err != nil {
				err := t.err
				t.err = nil
				return nil, err
			}
			return nil, nil
		}
		if t.buf[t.r] == 0x47 {
			p := t.buf[t.r : t.r+tsPacket]
			t.r += tsPacket
			return p, nil
		}
		t.resync()
	}
}

// resync skips to the next sync byte that another follows a packet on (or
// the stream's end does), forgetting every PID's counter and the PES being
// gathered.
func (t *tsSource) resync() {
	for i := range t.cc {
		t.cc[i] = -1
	}
	t.gather = false
	for psi := range t.psi {
		t.psi[psi].drop()
	}
	t.r++
	for {
		i := t.r
		for i < t.w && t.buf[i] != 0x47 {
			i++
		}
		t.r = i
		if i == t.w {
			if !t.fill(1) {
				return
			}
			continue
		}
		if !t.fill(tsPacket+1) || t.buf[t.r+tsPacket] == 0x47 {
			return
		}
		t.r++
	}
}

// fill reads until buf[r:] holds n bytes: false at the stream's end (or a
// read error, kept in t.err) before it does.
func (t *tsSource) fill(n int) bool {
	for t.w-t.r < n {
		if t.eof {
			return false
		}
		if len(t.buf)-t.r < n || t.w == len(t.buf) {
			m := copy(t.buf, t.buf[t.r:t.w])
			t.off += int64(t.r)
			t.r, t.w = 0, m
		}
		var m int
		var err error
		for tries := 0; m == 0 && err == nil; tries++ {
			if tries == 100 {
				err = io.ErrNoProgress
				break
			}
			m, err = t.f.Read(t.buf[t.w:])
		}
		t.w += m
		if err != nil {
			t.eof = true
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				t.err = err
			}
		}
	}
	return true
}

// readPAT takes the program map PIDs a PAT section lists.
func (t *tsSource) readPAT(sec []byte) {
	if sec[0] != 0x00 {
		return
	}
	for i := 8; i+4 <= len(sec)-4; i += 4 {
		program := int(sec[i])<<8 | int(sec[i+1])
		pid := uint16(sec[i+2]&0x1f)<<8 | uint16(sec[i+3])
		if program != 0 && pid != 0 { // program 0 is the network information table's
			t.pmts[pid] = true
		}
	}
}

// pmtStream is a stream a program map lists.
type pmtStream struct {
	typ uint8
	pid uint16
}

// parsePMT reads a program map section's streams: ok is false for a
// section that is no program map.
func parsePMT(sec []byte) ([]pmtStream, bool) {
	if sec[0] != 0x02 || len(sec) < 16 {
		return nil, false
	}
	end := len(sec) - 4
	i := 12 + (int(sec[10]&0x0f)<<8 | int(sec[11])) // after program_info_length's descriptors
	var streams []pmtStream
	for i+5 <= end {
		streams = append(streams, pmtStream{typ: sec[i], pid: uint16(sec[i+1]&0x1f)<<8 | uint16(sec[i+2])})
		i += 5 + (int(sec[i+3]&0x0f)<<8 | int(sec[i+4]))
	}
	return streams, true
}

// psiSection gathers the sections of one PID's PSI.
type psiSection struct {
	buf    []byte
	gather bool // a packet with payload_unit_start_indicator came, and no gap since
}

func (s *psiSection) drop() { s.buf, s.gather = s.buf[:0], false }

// maxSection is the most a PSI section may hold: its 3-byte header and a
// section_length of at most 1021 (ISO/IEC 13818-1 2.4.4.11).
const maxSection = 3 + 1021

// add takes a packet's payload and appends to out the sections it
// completes that are whole, current and pass their CRC_32.
func (s *psiSection) add(p []byte, pusi bool, out [][]byte) [][]byte {
	if pusi {
		if len(p) == 0 {
			s.drop()
			return out
		}
		ptr := int(p[0])
		p = p[1:]
		if ptr > len(p) {
			s.drop()
			return out
		}
		if s.gather {
			s.buf = append(s.buf, p[:ptr]...)
			out = s.sections(out)
		}
		s.buf, s.gather = append(s.buf[:0], p[ptr:]...), true
		return s.sections(out)
	}
	if !s.gather {
		return out
	}
	s.buf = append(s.buf, p...)
	return s.sections(out)
}

// sections cuts the whole sections off s.buf. The sections returned are
// copies: the buffer moves on.
func (s *psiSection) sections(out [][]byte) [][]byte {
	for s.gather && len(s.buf) >= 3 {
		if s.buf[0] == 0xff { // stuffing: no section follows in this payload
			s.drop()
			break
		}
		n := 3 + (int(s.buf[1]&0x0f)<<8 | int(s.buf[2]))
		if n > maxSection {
			s.drop()
			break
		}
		if len(s.buf) < n {
			if len(s.buf) > maxSection {
				s.drop()
			}
			break
		}
		sec := s.buf[:n]
		// section_syntax_indicator, current_next_indicator, and the
		// CRC_32 (over the section, CRC included, a CRC of 0).
		if n >= 12 && sec[1]&0x80 != 0 && sec[5]&1 != 0 && crc32MPEG(sec) == 0 {
			out = append(out, append([]byte(nil), sec...))
		}
		s.buf = append(s.buf[:0], s.buf[n:]...)
	}
	return out
}

// crc32MPEG is MPEG-2's CRC-32 (polynomial 0x04c11db7, initial value all
// ones, not reflected, no final inversion).
func crc32MPEG(b []byte) uint32 {
	c := uint32(0xffffffff)
	for _, x := range b {
		c = c<<8 ^ crcTable[byte(c>>24)^x]
	}
	return c
}

var crcTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04c11db7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
