package live

// tsPacket is the size of one MPEG-TS packet.
const tsPacket = 188

// continuity counts MPEG-TS continuity counter errors in a byte stream
// cut anywhere (datagrams hold whole packets, a pipe's reads do not): per
// PID, each packet with a payload must carry the counter after the last
// one's, or repeat it once (a duplicate). A packet whose adaptation field
// sets the discontinuity indicator starts its PID afresh, and so does the
// first packet after the sync byte was lost. The null PID is not counted.
type continuity struct {
	last    [8192]int8 // per PID: the last counter + 1, or 0 when none yet
	dup     [8192]bool // the last packet of the PID repeated the one before
	carry   [tsPacket]byte
	carried int
	errors  int64
	// renumber rewrites, in place, each counted packet's counter to run on
	// from the one before it, so that a reader downstream (es's, which
	// throws away a PES with a gap in its counters: for a keyframe,
	// a whole GOP) gets a damaged picture for the decoder to conceal
	// rather than none. Only packets fed whole are rewritten (a datagram
	// holds whole packets).
	renumber bool
	handed   [8192]bool // per PID: a packet was handed on
	next     [8192]byte // per PID: the counter handed on next
	// stamps, when set, takes the send-time stamps (StampPID) the
	// packets carry.
	stamps *stampQueue
}

// feed checks the packets in b (and the part of one left from the last
// call) and returns how many continuity errors they held.
func (c *continuity) feed(b []byte) int64 {
	before := c.errors
	if c.carried > 0 {
		n := copy(c.carry[c.carried:], b)
		c.carried += n
		b = b[n:]
		if c.carried < tsPacket {
			return 0
		}
		c.carried = 0
		if c.carry[0] == 0x47 {
			c.packet(c.carry[:])
		}
	}
	for len(b) > 0 {
		if b[0] != 0x47 { // out of sync: find the next sync byte and forget every PID's counter
			i := 1
			for i < len(b) && b[i] != 0x47 {
				i++
			}
			b = b[i:]
			c.last = [8192]int8{}
			continue
		}
		if len(b) < tsPacket {
			c.carried = copy(c.carry[:], b)
			break
		}
		c.packet(b[:tsPacket])
		b = b[tsPacket:]
	}
	return c.errors - before
}

func (c *continuity) packet(p []byte) {
	pid := int(p[1]&0x1f)<<8 | int(p[2])
	afc := p[3] >> 4 & 3
	cc := int8(p[3] & 0xf)
	if pid == StampPID && c.stamps != nil {
		if s, ok := ParseStamp(p); ok {
			c.stamps.add(s)
		}
	}
	if pid == 0x1fff || afc&1 == 0 { // the null PID; no payload: the counter does not advance
		return
	}
	if afc&2 != 0 && p[4] > 0 && p[5]&0x80 != 0 { // discontinuity_indicator
		c.last[pid] = 0
	}
	want := c.last[pid]
	c.last[pid] = (cc+1)&0xf + 1
	switch {
	case want == 0:
	case cc == want-1:
	case cc == (want-2)&0xf && !c.dup[pid]: // (want-1) - 1: the packet again
		c.dup[pid] = true
		c.last[pid] = want
		if c.renumber && c.handed[pid] {
			p[3] = p[3]&0xf0 | (c.next[pid]-1)&0xf // the one handed on before, again: a reader drops it
		}
		return
	default:
		c.errors++
	}
	c.dup[pid] = false
	if c.renumber {
		if c.handed[pid] {
			p[3] = p[3]&0xf0 | c.next[pid]
		}
		c.handed[pid], c.next[pid] = true, (p[3]+1)&0xf
	}
}
