package ipc

// Feed keeps one producer connected to a receiver's socket across the
// receiver's restarts: what a long-running producer (onair producer, with
// Chromium or a test pattern) paints through.
//
// Invariants:
//   - A Feed is used from one goroutine.
//   - Acquire connects when no connection is up, and drops a connection
//     that ended (onair stopped) before connecting again; a receiver that
//     refuses the producer ends the feed with a *RefusedError.
//   - While nobody listens, Acquire returns ErrNotConnected at once (after
//     at most DialWait): the caller drops that frame and paints the next.

import (
	"errors"
	"sync/atomic"
	"time"
)

// ErrNotConnected is returned by Feed.Acquire while no receiver listens on
// the socket: the frame is dropped.
var ErrNotConnected = errors.New("producer: no receiver listens on the socket yet")

// Feed is a producer that connects, and connects again, as the receiver
// comes and goes.
type Feed struct {
	// Config is the producer's configuration (Socket, Picture, Name...).
	Config ProducerConfig
	// DialWait bounds one attempt to connect; 0 is 100 ms.
	DialWait time.Duration
	// OnConnect, when set, is called with each new connection; OnLost with
	// why a connection ended.
	OnConnect func(*Producer)
	OnLost    func(error)

	p *Producer
}

// Acquire returns a buffer of the current connection to paint into,
// connecting first if need be; it waits up to wait for a buffer to come
// back when every one is out (ErrNoBuffer).
func (f *Feed) Acquire(wait time.Duration) (*ProducerBuffer, error) {
	if f.p != nil {
		select {
		case <-f.p.Done():
			if f.OnLost != nil {
				f.OnLost(f.p.Err())
			}
			f.p.Close()
			f.p = nil
		default:
		}
	}
	if f.p == nil {
		dw := f.DialWait
		if dw <= 0 {
			dw = 100 * time.Millisecond
		}
		p, err := DialWait(f.Config, dw)
		if err != nil {
			var refused *RefusedError
			if errors.As(err, &refused) {
				return nil, err
			}
			return nil, ErrNotConnected
		}
		f.p = p
		if f.OnConnect != nil {
			f.OnConnect(p)
		}
	}
	return f.p.Acquire(wait)
}

// Send hands b, painted, to the receiver (Producer.Send).
func (f *Feed) Send(b *ProducerBuffer, seq uint64, ts int64) error {
	if f.p == nil {
		return ErrNotConnected
	}
	return f.p.Send(b, seq, ts)
}

// Close ends the current connection, if any.
func (f *Feed) Close() {
	if f.p != nil {
		f.p.Close()
		f.p = nil
	}
}

// FeedStats counts what a long-running producer did.
type FeedStats struct {
	Painted     atomic.Uint64 // frames painted (by the browser, or the pattern)
	Sent        atomic.Uint64 // frames handed to onair
	Dropped     atomic.Uint64 // frames dropped: no connection, or no buffer came back in time
	Connections atomic.Uint64 // connections to onair
}
