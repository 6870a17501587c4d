package live

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"
	"unsafe"

	"github.com/pion/rtp"
)

// chunk is what one datagram or SRT message carries: seven TS packets,
// the size that fits an Ethernet frame (and libsrt's live default).
const chunk = 7 * tsPacket

// pcr is the program clock reference a TS packet carries, in 90 kHz units
// (its 33-bit base), if it carries one.
func pcr(p []byte) (int64, bool) {
	if len(p) < 12 || p[0] != 0x47 || p[3]&0x20 == 0 || p[4] < 7 || p[5]&0x10 == 0 {
		return 0, false
	}
	return int64(p[6])<<25 | int64(p[7])<<17 | int64(p[8])<<9 | int64(p[9])<<1 | int64(p[10])>>7, true
}

// Pacer sends a transport stream at its own rate: each chunk no sooner
// than its program clock reference says, from the first one it reads,
// and each video frame (the packet that starts its PES) no sooner than
// its decoding time stamp says, on the same clock (its DTS less how far
// ahead of the PCR the first frame's DTS stood): a camera's encoder sends
// each frame as it is made, where a file's PCR alone, every 100 ms, would
// send frames in bursts. A PCR that goes back or jumps more than a second
// ahead (a loop, a discontinuity) starts the clock again there.
type Pacer struct {
	Sleep func(time.Duration) // time.Sleep; tests give their own
	Now   func() time.Time
	// Speed scales the stream's clock: 1.001 sends 0.1 % fast, 0.999
	// 0.1 % slow, as a sender whose clock is not the show's; 0 is 1.
	Speed float64
	// Stamp puts a send-time stamp before each video PES (stamp.go): a
	// TS packet on a PID no PMT lists, which other receivers drop, from
	// which an onair source measures its end-to-end latency.
	Stamp bool

	stamper stamper
	started bool
	start   time.Time
	first   int64
	last    int64
	// dtsOff is the first frame's DTS less the PCR before it, once known
	// (anchored) since the clock started.
	dtsOff   int64
	anchored bool
}

func (p *Pacer) speed() float64 {
	if p.Speed <= 0 {
		return 1
	}
	return p.Speed
}

// sleepUntil sleeps until v, a time on the stream's 90 kHz clock, is due.
func (p *Pacer) sleepUntil(v int64) {
	due := p.start.Add(time.Duration(float64(v-p.first) * float64(time.Second) / 90000 / p.speed()))
	if d := due.Sub(p.Now()); d > 0 {
		p.Sleep(d)
	}
}

// frameDue sleeps until a video frame of decoding time dts is due.
func (p *Pacer) frameDue(dts int64) {
	if !p.started {
		return
	}
	if !p.anchored {
		p.dtsOff, p.anchored = dts-p.last, true
	}
	if v := dts - p.dtsOff; v >= p.last && v-p.last <= 90000 { // within a second of the clock: a DTS far off is not paced on
		p.sleepUntil(v)
	}
}

// wait sleeps until the chunk c is due.
func (p *Pacer) wait(c []byte) {
	for i := 0; i+tsPacket <= len(c); i += tsPacket {
		v, ok := pcr(c[i : i+tsPacket])
		if !ok {
			continue
		}
		if !p.started || v < p.last || v-p.last > 90000 {
			p.started, p.start, p.first, p.anchored = true, p.Now(), v, false
		}
		p.last = v
		p.sleepUntil(v)
		return
	}
}

// Send copies the transport stream r to w in chunks of seven packets,
// paced by its clock. It ends at r's end (nil) or at an error.
func (p *Pacer) Send(w io.Writer, r io.Reader) error {
	buf := make([]byte, chunk)
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if buf[0] != 0x47 {
				return errors.New("not an MPEG-TS: no sync byte where a packet starts (send a .ts file; onair media -kind ts makes one)")
			}
			p.wait(buf[:n])
			if werr := p.frames(w, buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// DialUDP is a UDP destination (unicast or a multicast group) for Send;
// with rtp, each chunk goes in an RTP packet (payload type 33, MPEG-TS).
func DialUDP(addr string, withRTP bool) (io.WriteCloser, error) {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("udp to %s: %w", addr, err)
	}
	if !withRTP {
		return c, nil
	}
	return &rtpWriter{c: c, pkt: rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 33, SSRC: uint32(time.Now().UnixNano())}}, t0: time.Now()}, nil
}

type rtpWriter struct {
	c   net.Conn
	pkt rtp.Packet
	t0  time.Time
	buf []byte
}

func (w *rtpWriter) Write(p []byte) (int, error) {
	w.pkt.Payload = p
	w.pkt.Timestamp = uint32(time.Since(w.t0) * 90000 / time.Second)
	b, err := w.pkt.Marshal()
	if err != nil {
		return 0, err
	}
	w.pkt.SequenceNumber++
	if _, err := w.c.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *rtpWriter) Close() error { return w.c.Close() }

// OpenSRT is an SRT destination for Send: a caller dials a listener (again
// with backoff until it answers); a listener waits for one caller.
func OpenSRT(cfg SRTConfig) (io.WriteCloser, error) {
	in, err := NewSRT(cfg)
	if err != nil {
		return nil, err
	}
	c, err := in.Connect()
	if err != nil {
		in.Close()
		return nil, err
	}
	return &srtWriter{in: in, c: c.(*srtConn)}, nil
}

type srtWriter struct {
	in Input
	c  *srtConn
}

func (w *srtWriter) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += chunk {
		m := p[off:min(len(p), off+chunk)]
		if libsrt.sendmsg(w.c.sock, unsafe.Pointer(&m[0]), int32(len(m)), -1, 0) < 0 {
			return off, fmt.Errorf("%v: sending: %s", w.in.(*srtInput).cfg, libsrt.lastErrorStr())
		}
	}
	return len(p), nil
}

// Close waits (up to three seconds) for the receiver to acknowledge what
// was sent, and then for its latency, in which it delivers what it holds:
// a receiver drops what it has not delivered when its peer closes.
func (w *srtWriter) Close() error {
	for range 300 {
		var queued int32
		n := int32(4)
		if libsrt.getsockflag(w.c.sock, srtoSndData, unsafe.Pointer(&queued), &n) < 0 || queued == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Duration(max(w.in.(*srtInput).cfg.LatencyMs, 120))*time.Millisecond + 100*time.Millisecond)
	w.c.Close()
	return w.in.Close()
}
