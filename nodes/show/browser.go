package show

// What browser sources count (seed 003), kept in the show's state so that
// a restart of the source loses nothing, and exported in the summary,
// /status and /metrics.

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onairhq/onair/metrics"
	"github.com/onairhq/onair/nodes/media/ipc"
)

// BrowserState is what a browser source's receiver (ipc_dmabuf_source)
// and import (gpu_import) have done.
type BrowserState struct {
	// The receiver's counters: connections, frames, buffers given back,
	// returns_queued.
	ipc.Counters

	Imports   atomic.Uint64 // buffers imported (on the CPU: mapped)
	Live      atomic.Int64  // imports held now
	Expired   atomic.Uint64 // imports released after import_ttl_ms unused
	Purged    atomic.Uint64 // imports released by purge_idle before the show went on air
	Dead      atomic.Uint64 // imports released because the producer destroyed the buffer or its connection ended
	Stopped   atomic.Uint64 // imports released when the import stopped
	Converted atomic.Uint64 // frames converted to the canvas format

	// import_ttl_ms: the plan's, set by the first gpu_import node, then
	// only by SetImportTTL (onair apply), so a restarted node keeps it.
	ttlMu  sync.Mutex // Init and Set
	ttlSet atomic.Bool
	ttlMs  atomic.Int64
	Stale  atomic.Uint64 // frames whose connection was retired before the import took them
	// Early are frames smooth_timestamps dropped because they came before
	// their slot: the producer paints faster than the show's rate.
	Early atomic.Uint64
}

// Releases counts imports released, for every reason.
func (s *BrowserState) Releases() uint64 {
	return s.Expired.Load() + s.Purged.Load() + s.Dead.Load() + s.Stopped.Load()
}

// Browser is the source's browser counters, made on first use.
func (s *SourceState) Browser() *BrowserState {
	if b := s.browser.Load(); b != nil {
		return b
	}
	s.browser.CompareAndSwap(nil, &BrowserState{})
	return s.browser.Load()
}

// BrowserSummary is a browser source's counts in the summary and /status.
type BrowserSummary struct {
	Connections    uint64 `json:"connections"`
	Refused        uint64 `json:"refused"`
	Frames         uint64 `json:"frames"`
	Buffers        uint64 `json:"buffers"`
	Forgotten      uint64 `json:"forgotten"`
	Returned       uint64 `json:"returned"`
	ReturnsQueued  int64  `json:"returns_queued"`
	Drains         uint64 `json:"drains"`
	Dropped        uint64 `json:"dropped"`
	Unreturned     uint64 `json:"unreturned"`
	Imports        uint64 `json:"imports"`
	ImportsLive    int64  `json:"imports_live"`
	ImportReleases uint64 `json:"import_releases"`
	Expired        uint64 `json:"expired"`
	Purged         uint64 `json:"purged"`
	Dead           uint64 `json:"dead"`
	Converted      uint64 `json:"converted"`
	Stale          uint64 `json:"stale"`
	Early          uint64 `json:"early"`
}

func (s *SourceState) browserSummary() *BrowserSummary {
	b := s.browser.Load()
	if b == nil {
		return nil
	}
	return &BrowserSummary{
		Connections: b.Connections.Load(), Refused: b.Refused.Load(), Frames: b.Frames.Load(), Buffers: b.Buffers.Load(),
		Forgotten: b.Forgotten.Load(), Returned: b.Returned.Load(), ReturnsQueued: b.ReturnsQueued.Load(), Drains: b.Drains.Load(),
		Dropped: b.Dropped.Load(), Unreturned: b.Unreturned.Load(),
		Imports: b.Imports.Load(), ImportsLive: b.Live.Load(), ImportReleases: b.Releases(), Expired: b.Expired.Load(),
		Purged: b.Purged.Load(), Dead: b.Dead.Load(), Converted: b.Converted.Load(), Stale: b.Stale.Load(), Early: b.Early.Load(),
	}
}

// text is the summary's line for a person.
func (b *BrowserSummary) text() string {
	if b == nil {
		return ""
	}
	early := ""
	if b.Early > 0 {
		early = fmt.Sprintf(", %d early (the producer paints faster than the show)", b.Early)
	}
	return fmt.Sprintf("; browser: %d frames, %d buffers, %d returned, %d queued, %d imports (%d live, %d released)%s",
		b.Frames, b.Buffers, b.Returned, b.ReturnsQueued, b.Imports, b.ImportsLive, b.ImportReleases, early)
}

// collectBrowser emits a browser source's metrics.
func collectBrowser(emit func(metrics.Sample), src SourceSummary) {
	b := src.Browser
	if b == nil {
		return
	}
	ls := [][2]string{{"source", src.Address}}
	counter := func(name, help string, v uint64) {
		emit(metrics.Sample{Name: name, Help: help, Kind: metrics.Counter, Labels: ls, Value: float64(v)})
	}
	gauge := func(name, help string, v int64) {
		emit(metrics.Sample{Name: name, Help: help, Kind: metrics.Gauge, Labels: ls, Value: float64(v)})
	}
	counter("onair_browser_connections_total", "Producer connections welcomed on a browser source's socket.", b.Connections)
	counter("onair_browser_refused_total", "Producer connections refused (another protocol version, a malformed or illegal message).", b.Refused)
	counter("onair_browser_frames_total", "Frames that arrived from the producer.", b.Frames)
	counter("onair_browser_buffers_total", "Buffers received with their file descriptor: a steady page settles on a fixed set.", b.Buffers)
	counter("onair_browser_returns_total", "Buffers given back to the producer.", b.Returned)
	gauge("onair_browser_returns_queued", "Finished frames waiting in the return queue (returns_queued).", b.ReturnsQueued)
	counter("onair_browser_drains_total", "Connections retired with a drain marker.", b.Drains)
	counter("onair_browser_dropped_total", "Frames the source could not hand on, given back at once.", b.Dropped)
	counter("onair_browser_early_total", "Frames dropped because they came before their slot: the producer paints faster than the show's rate.", b.Early)
	counter("onair_browser_imports_total", "Buffers imported (mapped on the CPU, imported into CUDA on the GPU).", b.Imports)
	gauge("onair_browser_imports_live", "Imports held now.", b.ImportsLive)
	for _, r := range []struct {
		reason string
		n      uint64
	}{{"ttl", b.Expired}, {"purge_idle", b.Purged}, {"dead", b.Dead}, {"stop", b.ImportReleases - b.Expired - b.Purged - b.Dead}} {
		emit(metrics.Sample{Name: "onair_browser_import_releases_total", Help: "Imports released, by reason: unused for import_ttl_ms, purged before going on air, buffer destroyed or connection ended, import stopped.",
			Kind: metrics.Counter, Labels: [][2]string{{"source", src.Address}, {"reason", r.reason}}, Value: float64(r.n)})
	}
}

// Clock reads the show's monotonic clock, in nanoseconds (Options.Clock).
func (b *State) Clock() int64 { return b.opts.Clock() }

// OnAir returns when the show went on air: when every group had started
// and was ready (Start returned). ok is false during start-up.
func (b *State) OnAir() (at int64, ok bool) {
	at = b.onAir.Load()
	return at, at != 0
}

// InitImportTTL records the plan's import_ttl_ms unless the show already
// holds one (a change on air, or an earlier start of the node).
func (b *BrowserState) InitImportTTL(ms int) {
	b.ttlMu.Lock()
	defer b.ttlMu.Unlock()
	if !b.ttlSet.Load() {
		b.ttlMs.Store(int64(ms))
		b.ttlSet.Store(true)
	}
}

// SetImportTTL changes import_ttl_ms on air: the import's next sweep
// releases what has been unused for ms.
func (b *BrowserState) SetImportTTL(ms int) {
	b.ttlMu.Lock()
	defer b.ttlMu.Unlock()
	b.ttlMs.Store(int64(ms))
	b.ttlSet.Store(true)
}

// ImportTTL is import_ttl_ms as the show holds it; false before any was
// recorded.
func (b *BrowserState) ImportTTL() (time.Duration, bool) {
	if !b.ttlSet.Load() {
		return 0, false
	}
	return time.Duration(b.ttlMs.Load()) * time.Millisecond, true
}
