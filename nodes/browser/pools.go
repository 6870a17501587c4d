package browser

import "sync"

// MaxPools is how many frame pools (one per picture size, with or without
// an alpha plane) an importer keeps: the picture of the producer streaming
// and the one before it, whose frames may still be on show. A producer
// announces one size per connection, so sizes change only as producers
// come and go; a third size closes the pool used longest ago.
const MaxPools = 2

// PoolKey is what a picture's frames are pooled by: its size and whether
// they have an alpha plane.
type PoolKey struct {
	W, H  int
	Alpha bool
}

// Pools keeps an importer's frame pools, at most MaxPools, most recently
// used first kept: the CPU's frame.Pool and the GPU's FramePool alike. A
// pool it lets go is closed (its free frames freed, the frames still out
// freed as they come back), so the sizes a producer (or 80 of them) went
// through hold no memory once their frames are back.
//
// Safe for concurrent use.
type Pools[P any] struct {
	// New makes the pool of key k; Close lets go of one.
	New   func(k PoolKey) (P, error)
	Close func(P)

	mu   sync.Mutex
	kept []keptPool[P] // least recently used first
}

type keptPool[P any] struct {
	key  PoolKey
	pool P
}

// Get returns the pool of k, making it (and closing the least recently
// used beyond MaxPools) if it is not kept.
func (s *Pools[P]) Get(k PoolKey) (P, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.kept {
		if e.key == k {
			if i != len(s.kept)-1 {
				copy(s.kept[i:], s.kept[i+1:])
				s.kept[len(s.kept)-1] = e
			}
			return e.pool, nil
		}
	}
	p, err := s.New(k)
	if err != nil {
		return p, err
	}
	if len(s.kept) >= MaxPools {
		s.Close(s.kept[0].pool)
		copy(s.kept, s.kept[1:])
		s.kept = s.kept[:len(s.kept)-1]
	}
	s.kept = append(s.kept, keptPool[P]{k, p})
	return p, nil
}

// Len is how many pools are kept.
func (s *Pools[P]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.kept)
}

// CloseAll closes every pool kept.
func (s *Pools[P]) CloseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.kept {
		s.Close(e.pool)
	}
	s.kept = nil
}
