package runtime

// ReadySet: which of many inputs got items, behind one signal.
//
// Invariants:
//   - Bit i is set by an attached edge's accepted Put before the set's one
//     Signal is notified; Take clears the bits it returns atomically (swap),
//     so every accepted Put is reported by exactly one Take that follows it.
//   - A reader consumes the set's signal (MultiWait, Signal.Wait or a loop
//     watch: read, clear), then calls Take: a bit set after the clear comes
//     with a Notify that writes again, so no input is ever missed.
//   - However many inputs and frames, the producers write the eventfd at
//     most once per read by the consumer: a compositor that looks every
//     8 ms costs at most 125 writes a second, where one signal per input
//     costs one write per frame.

import (
	"fmt"
	"math/bits"
	"sync/atomic"
)

// ReadySet tells a consumer with many inputs (a compositor) which inputs
// have items, so it takes frames only from the inputs that signalled.
type ReadySet struct {
	words []atomic.Uint64
	n     int
	sig   *Signal
}

// NewReadySet makes a set for inputs 0..n-1.
func NewReadySet(n int) (*ReadySet, error) {
	s, err := NewSignal()
	if err != nil {
		return nil, fmt.Errorf("ready set: %w", err)
	}
	return &ReadySet{words: make([]atomic.Uint64, (n+63)/64), n: n, sig: s}, nil
}

// Signal is notified when an input becomes ready: add it to a MultiWait.
func (r *ReadySet) Signal() *Signal { return r.sig }

// Len is the number of inputs it has room for.
func (r *ReadySet) Len() int { return r.n }

// Mark marks input i ready and notifies the signal.
func (r *ReadySet) Mark(i int) {
	w := &r.words[i>>6]
	bit := uint64(1) << (uint(i) & 63)
	if w.Load()&bit == 0 {
		w.Or(bit)
	}
	r.sig.Notify()
}

// Take appends to dst the inputs marked since the last Take, clears them,
// and returns dst.
func (r *ReadySet) Take(dst []int) []int {
	for wi := range r.words {
		if r.words[wi].Load() == 0 {
			continue
		}
		v := r.words[wi].Swap(0)
		for v != 0 {
			b := bits.TrailingZeros64(v)
			dst = append(dst, wi*64+b)
			v &^= 1 << uint(b)
		}
	}
	return dst
}

// Close frees the signal. Detach the edges first.
func (r *ReadySet) Close() error { return r.sig.Close() }

// readyLink is an edge's attachment to a ReadySet.
type readyLink struct {
	set *ReadySet
	i   int
}
