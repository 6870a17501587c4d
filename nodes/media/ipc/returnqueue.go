package ipc

// ReturnQueue decides when a finished buffer goes back to its producer.
//
// A browser's buffer pool keeps at most two idle buffers and destroys the
// rest (seed 003). Frames that go back in bunches, as the mixer happens to
// finish them, leave it more than two idle: it destroys the surplus and
// allocates new buffers for the frames after, and every new buffer is a new
// import. So a finished frame waits here, and each arriving frame sends the
// oldest waiting one back: the pool sees one buffer come back for each one
// it hands out, however unevenly the mixer finishes with them.
//
// Invariants:
//   - Limit 0: every finished frame goes back at once (Finished returns it).
//   - Limit N > 0: at most N frames wait; a finished frame beyond N sends
//     the oldest back at once; Arrived sends at most one, the oldest.
//   - Frames go back in the order they finished, each exactly once, and
//     Retire sends every one still waiting.
//
// It holds no lock: its connection's mutex guards it.
type ReturnQueue struct {
	limit int
	q     []Release // oldest first
}

// MaxReturnQueue is the longest return queue a source may ask for.
const MaxReturnQueue = 64

// NewReturnQueue makes a queue holding up to limit finished frames
// (0..MaxReturnQueue; out of range is clamped).
func NewReturnQueue(limit int) *ReturnQueue {
	limit = max(0, min(limit, MaxReturnQueue))
	return &ReturnQueue{limit: limit, q: make([]Release, 0, limit+1)}
}

// Limit is the most frames the queue holds.
func (q *ReturnQueue) Limit() int { return q.limit }

// Len is the number of finished frames waiting: returns_queued.
func (q *ReturnQueue) Len() int { return len(q.q) }

// Finished queues a finished frame and appends what must go back now to
// send: the frame itself with limit 0, the oldest when more than limit
// wait, nothing otherwise.
func (q *ReturnQueue) Finished(r Release, send []Release) []Release {
	q.q = append(q.q, r)
	if len(q.q) > q.limit {
		send = append(send, q.q[0])
		q.pop()
	}
	return send
}

// Arrived is called for each arriving frame: it appends the oldest waiting
// frame, if any, to send.
func (q *ReturnQueue) Arrived(send []Release) []Release {
	if len(q.q) == 0 {
		return send
	}
	send = append(send, q.q[0])
	q.pop()
	return send
}

// Retire appends every waiting frame, oldest first, to send and empties
// the queue.
func (q *ReturnQueue) Retire(send []Release) []Release {
	send = append(send, q.q...)
	q.q = q.q[:0]
	return send
}

func (q *ReturnQueue) pop() {
	copy(q.q, q.q[1:])
	q.q = q.q[:len(q.q)-1]
}
