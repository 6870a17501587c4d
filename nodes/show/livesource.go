package show

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/nodes/media/live"
	"github.com/onairhq/onair/plan"
)

// LiveState is a live source's counters: its transport's (bytes,
// packets, losses, state, SRT's RTT) and the frame synchroniser's.
type LiveState struct {
	input atomic.Pointer[live.Stats]
	// SyncDrops are decoded frames dropped because the source ran ahead of
	// the show's clock (its pacer had not taken the one before); the
	// repeats of a source behind it are its underruns.
	SyncDrops atomic.Uint64
	// ErrorFrames are frames of its on_error picture shown while it was lost.
	ErrorFrames atomic.Uint64

	mu       sync.Mutex
	soundErr error  // why the stream's sound is not on air (SetSound)
	soundN   uint64 // SetSound's calls
}

// SetSound records why the connection's sound is not on air (a codec its
// transport does not carry, its decoder's failure), nil when it is or the
// stream carries none.
func (l *LiveState) SetSound(err error) {
	l.mu.Lock()
	l.soundErr = err
	l.soundN++
	l.mu.Unlock()
}

// Sound is what SetSound recorded last, and how many times it was called
// (a caller that reports it sees when it changed).
func (l *LiveState) Sound() (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.soundN, l.soundErr
}

// Live is the source's live counters, made on first use.
func (s *SourceState) Live() *LiveState {
	if l := s.live.Load(); l != nil {
		return l
	}
	s.live.CompareAndSwap(nil, &LiveState{})
	return s.live.Load()
}

// OnAir records that a frame its sender stamped sent at sentNs (Unix ns)
// went on air at air: the source's end-to-end latency.
func (l *LiveState) OnAir(sentNs int64, air time.Time) {
	if in := l.input.Load(); in != nil {
		in.Latency.Observe(time.Unix(0, sentNs), air)
	}
}

// SetInput names the transport whose counters the source reports.
func (l *LiveState) SetInput(st *live.Stats) { l.input.Store(st) }

// LiveSummary is a live source's counts in the summary and /status.
type LiveSummary struct {
	live.Snapshot
	SyncDrops   uint64 `json:"frame_sync_drops"`
	ErrorFrames uint64 `json:"error_frames"`
	// SoundError is why the connection's sound is not on air; absent
	// while it is, or when its stream carries none.
	SoundError string `json:"sound_error,omitempty"`
}

func (s *SourceState) liveSummary() *LiveSummary {
	l := s.live.Load()
	if l == nil {
		return nil
	}
	sum := &LiveSummary{SyncDrops: l.SyncDrops.Load(), ErrorFrames: l.ErrorFrames.Load()}
	if _, err := l.Sound(); err != nil {
		sum.SoundError = err.Error()
	}
	if in := l.input.Load(); in != nil {
		sum.Snapshot = in.Snapshot()
	}
	return sum
}

// text is the summary's line for a person.
func (l *LiveSummary) text() string {
	if l == nil {
		return ""
	}
	s := fmt.Sprintf("; live: %s, %d connections, %d packets, %d lost, %d recovered, %d continuity errors, %d frame-sync drops, %d on_error frames, %d refused",
		l.State, l.Connections, l.Packets, l.Lost, l.Recovered, l.Continuity, l.SyncDrops, l.ErrorFrames, l.Refused)
	if l.SoundError != "" {
		s += "; no sound: " + l.SoundError
	}
	if lat := l.Latency; lat != nil {
		s += fmt.Sprintf("; latency %.1f ms now, p50 %.1f, p99 %.1f, max %.1f ms over %d frames", lat.CurrentMs, lat.P50Ms, lat.P99Ms, lat.MaxMs, lat.Frames)
		if lat.ClockSkew > 0 {
			s += fmt.Sprintf(", %d clock skew (sent after on air: the hosts' clocks differ)", lat.ClockSkew)
		}
	}
	return s
}

// collectLive emits a live source's metrics.
func collectLive(emit func(metrics.Sample), src SourceSummary) {
	l := src.Live
	if l == nil {
		return
	}
	ls := [][2]string{{"source", src.Address}}
	sample := func(kind metrics.Kind, name, help string, v float64) {
		emit(metrics.Sample{Name: name, Help: help, Kind: kind, Labels: ls, Value: v})
	}
	sample(metrics.Counter, "onair_live_bytes_total", "Bytes a live source received.", float64(l.Bytes))
	sample(metrics.Counter, "onair_live_packets_total", "Datagrams (or reads of a pipe) a live source received.", float64(l.Packets))
	sample(metrics.Counter, "onair_live_lost_packets_total", "Packets that never arrived (RTP sequence gaps, SRT's receiver losses).", float64(l.Lost))
	sample(metrics.Counter, "onair_live_recovered_packets_total", "Packets put back in order (RTP) or retransmitted (SRT).", float64(l.Recovered))
	sample(metrics.Counter, "onair_live_dropped_packets_total", "Packets given up: too late, out of the window, or not the stream.", float64(l.Dropped))
	sample(metrics.Counter, "onair_live_continuity_errors_total", "MPEG-TS continuity counter errors.", float64(l.Continuity))
	sample(metrics.Counter, "onair_live_connections_total", "Connections a live source took or made.", float64(l.Connections))
	sample(metrics.Counter, "onair_live_refused_total", "Publishers an RTMP source turned away (a wrong stream key, or its key taken).", float64(l.Refused))
	sample(metrics.Counter, "onair_live_frame_sync_drops_total", "Frames dropped because the source ran ahead of the show's clock.", float64(l.SyncDrops))
	sample(metrics.Counter, "onair_live_error_frames_total", "Frames of the on_error picture shown while the source was lost.", float64(l.ErrorFrames))
	sample(metrics.Gauge, "onair_live_bitrate_bits", "Bits per second a live source received over the last second.", float64(l.Bitrate))
	sample(metrics.Gauge, "onair_live_rtt_seconds", "SRT's round-trip time.", l.RTTMs/1000)
	if lat := l.Latency; lat != nil && len(lat.Buckets) == len(live.LatencyBuckets) {
		b := make(map[float64]uint64, len(lat.Buckets))
		for i, bound := range live.LatencyBuckets {
			b[bound] = uint64(lat.Buckets[i])
		}
		emit(metrics.Sample{Name: "onair_live_latency_seconds", Help: "End-to-end latency of a live source's stamped frames (onair send's stamps): on air less sent, wall clocks.",
			Kind: metrics.Histogram, Labels: ls, Buckets: b, Sum: lat.SumSeconds, Count: uint64(lat.Frames)})
		sample(metrics.Counter, "onair_live_latency_clock_skew_total", "Stamped frames that went on air before their send time: the sender's and onair's clocks differ.", float64(lat.ClockSkew))
	}
	up := 0.0
	if l.State == live.Live.String() {
		up = 1
	}
	sample(metrics.Gauge, "onair_live_up", "1 while the source's stream arrives, 0 while it is lost or reconnecting.", up)
}

// LiveTransport is a live source's transport as its node's params give
// it (live_decode, live_nvdec): What names it in logs and errors (never
// with its passphrase), Open makes the input, Loss is its loss timeout.
type LiveTransport struct {
	What string
	Open func() (live.Input, error)
	Loss time.Duration
}

// LiveTransportOf reads the transport params of node n. An SRT
// passphrase comes from the environment variable passphrase_env names,
// read now.
func LiveTransportOf(n *plan.Node) (LiveTransport, error) {
	prm, err := Params[struct {
		Transport  string `param:"transport"`
		Mode       string `param:"mode"`
		Address    string `param:"address"`
		Port       int    `param:"port"`
		LatencyMs  int    `param:"latency_ms"`
		Passphrase string `param:"passphrase_env"`
		StreamID   string `param:"stream_id"`
		Interface  string `param:"interface"`
		RTP        bool   `param:"rtp"`
		URL        string `param:"url"`
		Key        string `param:"key"`
		LossMs     int    `param:"loss_timeout_ms"`
	}](n)
	if err != nil {
		return LiveTransport{}, err
	}
	t := LiveTransport{Loss: time.Duration(prm.LossMs) * time.Millisecond}
	common := live.Config{Address: prm.Address, Port: prm.Port, LossTimeout: t.Loss}
	switch prm.Transport {
	case "srt":
		cfg := live.SRTConfig{Config: common, Listener: prm.Mode != "caller", LatencyMs: prm.LatencyMs, StreamID: prm.StreamID}
		if prm.Passphrase != "" {
			if cfg.Passphrase = os.Getenv(prm.Passphrase); cfg.Passphrase == "" {
				return LiveTransport{}, fmt.Errorf("node %s: passphrase_env names %s, which is not set: export it before onair runs", n.ID, prm.Passphrase)
			}
		}
		t.What, t.Open = cfg.String(), func() (live.Input, error) { return live.NewSRT(cfg) }
	case "udp":
		cfg := live.UDPConfig{Config: common, Interface: prm.Interface, RTP: prm.RTP}
		t.What, t.Open = fmt.Sprintf("udp %s:%d", prm.Address, prm.Port), func() (live.Input, error) { return live.NewUDP(cfg) }
	case "stream":
		cfg := live.StreamConfig{Config: common, URL: prm.URL}
		t.What, t.Open = "stream "+prm.URL, func() (live.Input, error) { return live.NewStream(cfg) }
	case "rtmp":
		cfg := live.RTMPConfig{Config: common, Key: prm.Key}
		t.What, t.Open = cfg.String(), func() (live.Input, error) { return live.NewRTMP(cfg) }
	default:
		return LiveTransport{}, fmt.Errorf("node %s: transport %q", n.ID, prm.Transport)
	}
	return t, nil
}
