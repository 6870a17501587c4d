package browser

import (
	"sort"
	"time"

	"github.com/onairhq/onair/nodes/media/ipc"
)

// Imports keeps a source's imports, keyed by buffer, and decides when each
// goes: it is the seed's import policy, on a clock the caller passes in.
//
// Invariants:
//   - A buffer is imported at most once while it is kept: Get finds it.
//   - An import goes when its buffer is dead (at the next sweep), when it
//     has been unused for the TTL, when purge finds it unused for the idle
//     time, or when the node stops (All); never while it is in use (the
//     node's thread converts and sweeps, one after the other).
//   - What Sweep, Purge and All return has left the set: the caller
//     releases each exactly once.
//
// Not safe for concurrent use: the node's thread owns it.
type Imports struct {
	entries map[*ipc.Buffer]*importEntry
}

type importEntry struct {
	m        Mapping
	buffer   *ipc.Buffer
	imported int64 // ns
	lastUse  int64 // ns
	uses     uint64
}

// Reason says why an import was released.
type Reason int

const (
	ReasonTTL   Reason = iota // unused for import_ttl_ms
	ReasonPurge               // purge_idle: left idle by start-up
	ReasonDead                // its buffer was destroyed, or its connection ended
	ReasonStop                // the import stopped
)

func (r Reason) String() string {
	return [...]string{"ttl", "purge_idle", "dead", "stop"}[r]
}

// Released is one import to release.
type Released struct {
	Mapping Mapping
	Buffer  *ipc.Buffer
	Reason  Reason
}

// PurgeIdleAfter is how long an import must have been unused for
// purge_idle to release it (the seeds' 500 ms).
const PurgeIdleAfter = 500 * time.Millisecond

// NewImports makes an empty set.
func NewImports() *Imports { return &Imports{entries: map[*ipc.Buffer]*importEntry{}} }

// Len is the number of imports kept.
func (s *Imports) Len() int { return len(s.entries) }

// Get returns b's import, marking it used at now.
func (s *Imports) Get(b *ipc.Buffer, now int64) (Mapping, bool) {
	e, ok := s.entries[b]
	if !ok {
		return nil, false
	}
	e.lastUse = now
	e.uses++
	return e.m, true
}

// Put keeps m as b's import, used at now.
func (s *Imports) Put(b *ipc.Buffer, m Mapping, now int64) {
	s.entries[b] = &importEntry{m: m, buffer: b, imported: now, lastUse: now, uses: 1}
}

// Sweep removes and returns the imports to release at now: those of dead
// buffers, and those unused for ttl.
func (s *Imports) Sweep(now int64, ttl time.Duration) []Released {
	return s.take(func(e *importEntry) (Reason, bool) {
		switch {
		case e.buffer.Dead():
			return ReasonDead, true
		case now-e.lastUse >= int64(ttl):
			return ReasonTTL, true
		}
		return 0, false
	})
}

// Purge removes and returns the imports unused for idle at now: what
// start-up went through and left behind (purge_idle, once, as the show
// goes on air).
func (s *Imports) Purge(now int64, idle time.Duration) []Released {
	return s.take(func(e *importEntry) (Reason, bool) {
		if now-e.lastUse >= int64(idle) {
			return ReasonPurge, true
		}
		return 0, false
	})
}

// All removes and returns every import (the node stops).
func (s *Imports) All() []Released {
	return s.take(func(*importEntry) (Reason, bool) { return ReasonStop, true })
}

// take removes the entries pick selects, oldest use first, so releases
// happen in a stable order.
func (s *Imports) take(pick func(*importEntry) (Reason, bool)) []Released {
	var out []Released
	var picked []*importEntry
	for _, e := range s.entries {
		if _, ok := pick(e); ok {
			picked = append(picked, e)
		}
	}
	sort.Slice(picked, func(i, j int) bool {
		if picked[i].lastUse != picked[j].lastUse {
			return picked[i].lastUse < picked[j].lastUse
		}
		return picked[i].buffer.ID < picked[j].buffer.ID
	})
	for _, e := range picked {
		r, _ := pick(e)
		delete(s.entries, e.buffer)
		out = append(out, Released{Mapping: e.m, Buffer: e.buffer, Reason: r})
	}
	return out
}
