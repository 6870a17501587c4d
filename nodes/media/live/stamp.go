package live

import (
	"container/heap"
	"encoding/binary"
	"io"
	"sync"
)

// Send-time stamps: `onair send` puts, before the first TS packet of each
// video PES, one TS packet of its own on StampPID, a PID no PMT lists (so
// ffmpeg and every other demuxer drops it), carrying stampMagic, that
// PES's PTS and the wall-clock time it was sent (Unix ns). A live source
// reads them back (the transports' TS readers see every packet) and its
// frames' on-air times less their send times are its end-to-end latency.

// StampPID is the PID send-time stamps travel on.
const StampPID = 0x1FF0

// stampMagic starts a stamp's payload: a packet on StampPID that does not
// start with it (another sender's use of the PID) is not a stamp.
var stampMagic = [8]byte{'O', 'N', 'A', 'I', 'R', 'S', 'T', 'S'}

// stampVersion is the layout below: magic (8), version (1), PTS (8, 33
// bits used), DTS (8, 33 bits used), send time (8, Unix ns, signed).
const stampVersion = 1

// Stamp is one video PES's send time.
type Stamp struct {
	PTS, DTS int64 // 90 kHz
	SentNs   int64 // wall clock, Unix ns
}

// Presented is when the frame is due on the sender's clock: its send
// time plus how far its decoding order put it ahead of its presentation
// (PTS less DTS: a B-frame stream's reordering, the encoder's delay and
// not the path's).
func (s Stamp) Presented() int64 {
	d := (s.PTS - s.DTS) & (1<<33 - 1)
	if d > 90000*10 { // a DTS after its PTS, or wrapped: no reordering to add
		d = 0
	}
	return s.SentNs + d*1e9/90000
}

// stampPacket writes the stamp packet for s into p (188 bytes), with
// continuity counter cc.
func stampPacket(p []byte, s Stamp, cc byte) {
	p[0], p[1], p[2], p[3] = 0x47, StampPID>>8, StampPID&0xff, 0x10|cc&0xf
	b := p[4:]
	copy(b, stampMagic[:])
	b[8] = stampVersion
	binary.BigEndian.PutUint64(b[9:], uint64(s.PTS))
	binary.BigEndian.PutUint64(b[17:], uint64(s.DTS))
	binary.BigEndian.PutUint64(b[25:], uint64(s.SentNs))
	for i := 33; i < len(b); i++ {
		b[i] = 0xff
	}
}

// ParseStamp reads a stamp from one TS packet p: false for a packet that
// is not one (any other PID, no payload, no magic, a version it does not
// know, too short).
func ParseStamp(p []byte) (Stamp, bool) {
	if len(p) < tsPacket || p[0] != 0x47 || int(p[1]&0x1f)<<8|int(p[2]) != StampPID {
		return Stamp{}, false
	}
	afc := p[3] >> 4 & 3
	if afc&1 == 0 {
		return Stamp{}, false
	}
	off := 4
	if afc&2 != 0 {
		off += 1 + int(p[4])
	}
	if off+33 > tsPacket {
		return Stamp{}, false
	}
	b := p[off:tsPacket]
	if [8]byte(b[:8]) != stampMagic || b[8] != stampVersion {
		return Stamp{}, false
	}
	const mask = 1<<33 - 1
	return Stamp{PTS: int64(binary.BigEndian.Uint64(b[9:]) & mask), DTS: int64(binary.BigEndian.Uint64(b[17:]) & mask), SentNs: int64(binary.BigEndian.Uint64(b[25:]))}, true
}

// videoTimes are the PTS and DTS (its PTS when it has none) of the video
// PES that TS packet p starts (stream id 0xE0 to 0xEF), if it starts one
// that carries a PTS.
func videoTimes(p []byte) (pts, dts int64, ok bool) {
	if len(p) < tsPacket || p[0] != 0x47 || p[1]&0x40 == 0 {
		return 0, 0, false
	}
	afc := p[3] >> 4 & 3
	if afc&1 == 0 {
		return 0, 0, false
	}
	off := 4
	if afc&2 != 0 {
		off += 1 + int(p[4])
	}
	if off+19 > tsPacket {
		return 0, 0, false
	}
	h := p[off:]
	if h[0] != 0 || h[1] != 0 || h[2] != 1 || h[3]&0xf0 != 0xe0 || h[7]&0x80 == 0 {
		return 0, 0, false
	}
	pts = timestamp(h[9:14])
	dts = pts
	if h[7]&0x40 != 0 {
		dts = timestamp(h[14:19])
	}
	return pts, dts, true
}

// timestamp reads a PES header's 33-bit PTS or DTS field.
func timestamp(t []byte) int64 {
	return int64(t[0]>>1&7)<<30 | int64(t[1])<<22 | int64(t[2]>>1)<<15 | int64(t[3])<<7 | int64(t[4]>>1)
}

// stamper is the stamps' continuity counter and packet.
type stamper struct {
	cc  byte
	pkt [tsPacket]byte
}

// frames writes chunk c to w, each packet of it that starts a video PES
// when its DTS is due (a write of its own from there), after its stamp
// (a write of its own, so that a datagram stays within seven packets)
// when p.Stamp, sent at that moment.
func (p *Pacer) frames(w io.Writer, c []byte) error {
	from := 0
	for i := 0; i+tsPacket <= len(c); i += tsPacket {
		pts, dts, ok := videoTimes(c[i : i+tsPacket])
		if !ok {
			continue
		}
		if i > from {
			if _, err := w.Write(c[from:i]); err != nil {
				return err
			}
			from = i
		}
		p.frameDue(dts)
		if !p.Stamp {
			continue
		}
		s := &p.stamper
		stampPacket(s.pkt[:], Stamp{PTS: pts, DTS: dts, SentNs: p.Now().UnixNano()}, s.cc)
		s.cc++
		if _, err := w.Write(s.pkt[:]); err != nil {
			return err
		}
	}
	if from < len(c) {
		_, err := w.Write(c[from:])
		return err
	}
	return nil
}

// stampQueue is a connection's stamps not yet matched to a decoded
// frame, by PTS: a decoder hands its pictures out in presentation order,
// so each picture is the stamp of the lowest PTS waiting. At most
// maxStamps wait (the oldest go): stamps of pictures a decoder never
// hands out (those before a connection's first keyframe) do not pile up.
//
// A PTS more than half a second behind the last one stamped (the sender
// looped its file or restarted, or the 33-bit PTS wrapped), or more than
// ten seconds ahead of it, starts a new run: the stamps of the run before
// are matched first.
type stampQueue struct {
	mu   sync.Mutex
	h    stampHeap
	run  int64
	last int64
	any  bool
}

const maxStamps = 256

type queued struct {
	Stamp
	run int64
}

type stampHeap []queued

func (h stampHeap) Len() int { return len(h) }
func (h stampHeap) Less(i, j int) bool {
	return h[i].run < h[j].run || h[i].run == h[j].run && h[i].PTS < h[j].PTS
}
func (h stampHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *stampHeap) Push(x any)   { *h = append(*h, x.(queued)) }
func (h *stampHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (q *stampQueue) add(s Stamp) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.any && (s.PTS < q.last-45000 || s.PTS > q.last+900000) {
		q.run++
	}
	q.last, q.any = s.PTS, true
	if len(q.h) >= maxStamps {
		// forget the earliest sent: the stamp of a picture never decoded
		oldest := 0
		for i := range q.h {
			if q.h[i].SentNs < q.h[oldest].SentNs {
				oldest = i
			}
		}
		heap.Remove(&q.h, oldest)
	}
	heap.Push(&q.h, queued{Stamp: s, run: q.run})
}

func (q *stampQueue) pop() (Stamp, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.h) == 0 {
		return Stamp{}, false
	}
	return heap.Pop(&q.h).(queued).Stamp, true
}

func (q *stampQueue) reset() {
	q.mu.Lock()
	q.h, q.any = q.h[:0], false
	q.mu.Unlock()
}
