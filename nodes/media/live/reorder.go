package live

// reorderWindow is how many RTP packets past a gap are kept waiting for
// the missing one before it is counted lost.
const reorderWindow = 32

// reorder puts RTP payloads back in sequence-number order. A packet that
// arrives after later ones but within the window is put back in its place
// (recovered); one older than what was already handed on is dropped; a
// gap still open when a packet reorderWindow past it arrives is counted
// lost and skipped.
type reorder struct {
	started bool
	next    uint16 // the sequence number handed on next
	highest uint16 // the highest sequence number seen
	slot    [reorderWindow][]byte
	have    [reorderWindow]bool

	lost, recovered, dropped int64
}

// push takes one packet and appends to out the payloads now in order.
func (r *reorder) push(seq uint16, payload []byte, out []byte) []byte {
	if !r.started {
		r.started, r.next, r.highest = true, seq, seq
	}
	d := int16(seq - r.next)
	if d < 0 { // already handed on past it: a duplicate or too late
		r.dropped++
		return out
	}
	if int(d) >= 2*reorderWindow { // a jump (a sender restarted, garbage): hand on what is held, count the rest lost
		for range reorderWindow {
			out = r.advance(out)
		}
		r.lost += int64(int16(seq-r.next)) - reorderWindow + 1
		r.next = seq - reorderWindow + 1
		d = reorderWindow - 1
	}
	for int(d) >= reorderWindow { // too far ahead: give up the oldest gap
		out = r.advance(out)
		d = int16(seq - r.next)
	}
	i := seq % reorderWindow
	if r.have[i] { // the same packet twice
		r.dropped++
		return out
	}
	if int16(seq-r.highest) < 0 {
		r.recovered++
	} else {
		r.highest = seq
	}
	r.slot[i] = append(r.slot[i][:0], payload...)
	r.have[i] = true
	for r.have[r.next%reorderWindow] {
		out = r.advance(out)
	}
	return out
}

// advance hands on the packet at next, or counts it lost, and moves on.
func (r *reorder) advance(out []byte) []byte {
	i := r.next % reorderWindow
	if r.have[i] {
		out = append(out, r.slot[i]...)
		r.have[i] = false
	} else {
		r.lost++
	}
	r.next++
	return out
}
