// Package live receives live inputs: MPEG-TS over SRT (libsrt, loaded at
// run time), over UDP unicast or multicast, plain or RTP-wrapped, anything
// ffmpeg reads remuxed to MPEG-TS on a pipe, and RTMP publishers
// (gortmplib), whose video and AAC sound are remuxed to MPEG-TS in Go
// (mediacommon's writer). Each Input hands out connections whose bytes are
// a transport stream, which nodes/media/es splits into access units for
// the decoders that exist (ffmpeg_decode on the CPU, NVDEC on the GPU),
// and whose sound media.LiveAudio decodes; each keeps its Stats (bytes, packets, lost,
// recovered and dropped packets, continuity errors, bitrate, state, and
// SRT's RTT and retransmits) for /status and /metrics.
//
// Host-side and backend-independent: it never imports a backend
// (nodes/cpu, nodes/cuda), the show runtime (nodes/show) or cuda/, and it
// needs no cgo.
package live

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Input is one live source's transport. Connect waits for the next
// connection (a listener's next caller, a caller's next successful dial,
// the first datagram on a UDP port) and returns its transport stream; a
// Read that finds nothing for the input's loss timeout returns ErrLost.
// Close ends the input: a Connect or Read waiting on it returns.
type Input interface {
	Connect() (io.ReadCloser, error)
	Stats() *Stats
	Close() error
}

// ErrLost is a connection that brought nothing for the loss timeout.
var ErrLost = errors.New("no data for the loss timeout")

// ErrClosed is returned by an Input that was closed.
var ErrClosed = errors.New("input closed")

// State is where an input's connection stands.
type State int32

const (
	Waiting    State = iota // listening, or not yet dialled
	Connecting              // a caller dialling (or backing off before its next dial)
	Live                    // bytes arriving
	Lost                    // a connection that went quiet or ended
)

func (s State) String() string {
	switch s {
	case Waiting:
		return "waiting"
	case Connecting:
		return "reconnecting"
	case Live:
		return "live"
	case Lost:
		return "lost"
	}
	return fmt.Sprintf("state(%d)", int32(s))
}

// Stats are one input's counters, safe for concurrent use: the receiving
// goroutine writes them, /status and /metrics read them.
type Stats struct {
	Bytes       atomic.Int64 // payload bytes received
	Packets     atomic.Int64 // datagrams (UDP, RTP, SRT), reads (a pipe) or messages (RTMP)
	Lost        atomic.Int64 // packets that never arrived (RTP sequence gaps, SRT's receiver losses)
	Recovered   atomic.Int64 // packets that arrived late and were put back in order (RTP), or retransmitted (SRT)
	Dropped     atomic.Int64 // packets given up: too late (SRT) or too far out of order (RTP)
	Continuity  atomic.Int64 // MPEG-TS continuity counter errors
	Retransmits atomic.Int64 // SRT: retransmitted packets received
	RTTMicros   atomic.Int64 // SRT: round-trip time
	Connections atomic.Int64 // connections taken (listener) or made (caller)
	Refused     atomic.Int64 // RTMP: publishers turned away (a wrong key, a key already taken)
	// Latency is the end-to-end latency of the stamped frames that went
	// on air (a sender's stamps: stamp.go).
	Latency Latency
	stamps  stampQueue   // this connection's stamps not yet matched to a frame
	bitrate atomic.Int64 // bits per second over the last whole second
	state   atomic.Int32

	mu      sync.Mutex
	winAt   time.Time
	winSize int64
	lastErr string
}

// State is the connection's state now.
func (s *Stats) State() State { return State(s.state.Load()) }

// SetState records the connection's state.
func (s *Stats) SetState(st State) { s.state.Store(int32(st)) }

// Await records that a listener waits for its sender: Waiting until a
// first connection came, Lost after one went away. An operator who saw a
// camera go must not see it read "waiting" as if it never came.
func (s *Stats) Await() {
	if s.State() != Lost {
		s.SetState(Waiting)
	}
}

// ResetStamps forgets the stamps of the connection before: called as a
// connection is awaited.
func (s *Stats) ResetStamps() { s.stamps.reset() }

// NextStamp is the stamp of the next picture a decoder hands out (the
// lowest PTS waiting), if one came.
func (s *Stats) NextStamp() (Stamp, bool) { return s.stamps.pop() }

// Bitrate is the bits per second received over the last whole second.
func (s *Stats) Bitrate() int64 { return s.bitrate.Load() }

// Err is the last error the input met ("" when none).
func (s *Stats) Err() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// SetErr records why the input is not live ("" once it is again).
func (s *Stats) SetErr(err error) {
	s.mu.Lock()
	if err == nil {
		s.lastErr = ""
	} else {
		s.lastErr = err.Error()
	}
	s.mu.Unlock()
}

// received counts one packet of n bytes arriving at now.
func (s *Stats) received(n int, now time.Time) {
	s.Bytes.Add(int64(n))
	s.Packets.Add(1)
	s.mu.Lock()
	if s.winAt.IsZero() {
		s.winAt = now
	}
	s.winSize += int64(n)
	if d := now.Sub(s.winAt); d >= time.Second {
		s.bitrate.Store(s.winSize * 8 * int64(time.Second) / int64(d))
		s.winAt, s.winSize = now, 0
	}
	s.mu.Unlock()
}

// Snapshot is the counters at one moment, for /status.
type Snapshot struct {
	State       string  `json:"state"`
	Error       string  `json:"error,omitempty"`
	Bytes       int64   `json:"bytes"`
	Packets     int64   `json:"packets"`
	Lost        int64   `json:"lost_packets"`
	Recovered   int64   `json:"recovered_packets"`
	Dropped     int64   `json:"dropped_packets"`
	Continuity  int64   `json:"continuity_errors"`
	Retransmits int64   `json:"retransmits,omitempty"`
	RTTMs       float64 `json:"rtt_ms,omitempty"`
	Bitrate     int64   `json:"bitrate"`
	Connections int64   `json:"connections"`
	Refused     int64   `json:"refused_connections,omitempty"`
	// Latency: end-to-end, from the sender's stamps; absent when none came.
	Latency *LatencySnapshot `json:"latency,omitempty"`
}

// Snapshot reads every counter.
func (s *Stats) Snapshot() Snapshot {
	return Snapshot{State: s.State().String(), Error: s.Err(), Bytes: s.Bytes.Load(), Packets: s.Packets.Load(),
		Lost: s.Lost.Load(), Recovered: s.Recovered.Load(), Dropped: s.Dropped.Load(), Continuity: s.Continuity.Load(),
		Retransmits: s.Retransmits.Load(), RTTMs: float64(s.RTTMicros.Load()) / 1000, Bitrate: s.Bitrate(), Connections: s.Connections.Load(), Refused: s.Refused.Load(), Latency: s.Latency.Snapshot()}
}

// Config is what every input takes.
type Config struct {
	// Address and Port: where a listener binds (Address "" is loopback:
	// nothing answers off this machine unless the show says so) or where
	// a caller dials.
	Address string
	Port    int
	// LossTimeout is how long a connection may bring nothing before a
	// Read returns ErrLost; 0 is one second.
	LossTimeout time.Duration
}

func (c Config) lossTimeout() time.Duration {
	if c.LossTimeout <= 0 {
		return time.Second
	}
	return c.LossTimeout
}

// listenAddr is the address a listener binds: loopback unless one is given.
func (c Config) listenAddr() string {
	host := c.Address
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, fmt.Sprint(c.Port))
}

// closeCurrent closes the connection an input holds now, if any (*cur,
// guarded by mu): read under the lock, closed outside it, as a
// connection's Close may wait on what holds the lock.
func closeCurrent[C interface {
	comparable
	io.Closer
}](mu *sync.Mutex, cur *C) {
	mu.Lock()
	c := *cur
	mu.Unlock()
	var none C
	if c != none {
		c.Close()
	}
}
