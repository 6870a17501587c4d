package live

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/pion/rtp"
)

// UDPConfig is an MPEG-TS over UDP input.
type UDPConfig struct {
	Config
	// Interface is the network interface a multicast group is joined on
	// ("" lets the system choose).
	Interface string
	// RTP reads each datagram as an RTP packet (RFC 3550) carrying
	// MPEG-TS (RFC 2250), put back in sequence-number order.
	RTP bool
}

// udpInput receives on one socket for its whole life: a loss ends a
// connection, not the socket, and the next Connect waits for the next
// datagram on it.
type udpInput struct {
	cfg   UDPConfig
	conn  *net.UDPConn
	stats Stats
	buf   []byte

	mu     sync.Mutex
	closed bool
	cur    *udpConn
}

// NewUDP binds the input's socket: a multicast group (joined on the
// configured interface), or a unicast address, loopback when none is
// given.
func NewUDP(cfg UDPConfig) (Input, error) {
	addr, err := net.ResolveUDPAddr("udp", cfg.listenAddr())
	if err != nil {
		return nil, fmt.Errorf("udp input: %w", err)
	}
	var conn *net.UDPConn
	if addr.IP.IsMulticast() {
		var ifi *net.Interface
		if cfg.Interface != "" {
			if ifi, err = net.InterfaceByName(cfg.Interface); err != nil {
				return nil, fmt.Errorf("udp input: interface %q: %w (see `ip link` for the names here)", cfg.Interface, err)
			}
		}
		conn, err = net.ListenMulticastUDP("udp", ifi, addr)
	} else {
		conn, err = net.ListenUDP("udp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("udp input on %s: %w", addr, err)
	}
	conn.SetReadBuffer(8 << 20) // a burst of a high-rate stream outruns the default
	return &udpInput{cfg: cfg, conn: conn, buf: make([]byte, 65536)}, nil
}

// Addr is where the socket is bound (the port the system chose for 0).
func (u *udpInput) Addr() net.Addr { return u.conn.LocalAddr() }

func (u *udpInput) Stats() *Stats { return &u.stats }

func (u *udpInput) Connect() (io.ReadCloser, error) {
	u.stats.Await()
	u.conn.SetReadDeadline(time.Time{})
	c := &udpConn{in: u, ro: &reorder{}, cc: continuity{renumber: true, stamps: &u.stats.stamps}}
	if err := c.receive(); err != nil { // the first datagram
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil, ErrClosed
	}
	u.cur = c
	u.stats.Connections.Add(1)
	u.stats.SetState(Live)
	// The error stays: a datagram is not yet a stream (the next may be
	// garbage again, or hold no video); the source clears it when frames
	// come.
	return c, nil
}

func (u *udpInput) Close() error {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	return u.conn.Close()
}

// udpConn is the stream since the first datagram after a loss.
type udpConn struct {
	in      *udpInput
	ro      *reorder
	pending []byte
	off     int
	cc      continuity
	rtp     rtp.Packet
	ssrc    uint32 // the sender's RTP synchronisation source
	ended   bool
}

// receive reads one datagram and appends its transport stream bytes (for
// RTP, those now in order) to pending.
func (c *udpConn) receive() error {
	u := c.in
	n, _, err := u.conn.ReadFromUDP(u.buf)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		u.stats.SetState(Lost)
		return ErrLost
	case errors.Is(err, net.ErrClosed):
		return ErrClosed
	case err != nil:
		return fmt.Errorf("udp input: %w", err)
	}
	now := time.Now()
	u.stats.received(n, now)
	d := u.buf[:n]
	start := len(c.pending)
	if u.cfg.RTP {
		if err := c.rtp.Unmarshal(d); err != nil {
			u.stats.Dropped.Add(1)
			u.stats.SetErr(fmt.Errorf("a datagram that is no RTP packet (%v): is the sender plain UDP? then set rtp = false", err))
			return nil
		}
		if c.ro.started && c.rtp.SSRC != c.ssrc { // another sender (one restarted): its own sequence numbers
			c.ro = &reorder{}
		}
		c.ssrc = c.rtp.SSRC
		l, r, dr := c.ro.lost, c.ro.recovered, c.ro.dropped
		c.pending = c.ro.push(c.rtp.SequenceNumber, c.rtp.Payload, c.pending)
		u.stats.Lost.Add(c.ro.lost - l)
		u.stats.Recovered.Add(c.ro.recovered - r)
		u.stats.Dropped.Add(c.ro.dropped - dr)
	} else {
		if n > 0 && d[0] != 0x47 {
			u.stats.Dropped.Add(1)
			u.stats.SetErr(errors.New("a datagram that does not start with an MPEG-TS sync byte: is the sender RTP? then set rtp = true"))
			return nil
		}
		c.pending = append(c.pending, d...)
	}
	u.stats.Continuity.Add(c.cc.feed(c.pending[start:]))
	return nil
}

func (c *udpConn) Read(p []byte) (int, error) {
	if c.ended {
		return 0, io.EOF
	}
	for c.off == len(c.pending) {
		c.pending, c.off = c.pending[:0], 0
		c.in.conn.SetReadDeadline(time.Now().Add(c.in.cfg.lossTimeout()))
		if err := c.receive(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.pending[c.off:])
	c.off += n
	return n, nil
}

// Close ends the connection; the socket stays for the next.
func (c *udpConn) Close() error {
	c.ended = true
	return nil
}
