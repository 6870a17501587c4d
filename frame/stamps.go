package frame

import "fmt"

// StampKey names a moment in a frame's life a show may ask its frames to
// carry (canvas frame_metadata): when its packet was read, demuxed, when it
// was decoded, and so on.
type StampKey uint8

// The stamp keys, in the order of StampKeys.
const (
	InputRecTime StampKey = iota
	DemuxTime
	DecodeTime
	UploadTime
	PaceTime
	CompositeTime
	OutputTime
	PTSWallclock
	numStamps
)

// StampKeys are the keys' names, as the show language spells them (the
// language's frame_metadata enum lists the same names; a test holds the two
// together).
var StampKeys = [numStamps]string{"input_rec_time", "demux_time", "decode_time", "upload_time", "pace_time", "composite_time", "output_time", "pts_wallclock"}

func (k StampKey) String() string {
	if k < numStamps {
		return StampKeys[k]
	}
	return fmt.Sprintf("StampKey(%d)", uint8(k))
}

// StampSet is a set of stamp keys: what a node stamps.
type StampSet uint16

// StampSetOf reads a node's timestamp_keys.
func StampSetOf(keys []string) (StampSet, error) {
	var s StampSet
	for _, name := range keys {
		found := false
		for k, n := range StampKeys {
			if n == name {
				s |= 1 << k
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown timestamp key %q: the keys are %v", name, StampKeys)
		}
	}
	return s, nil
}

// Has reports whether k is in the set.
func (s StampSet) Has(k StampKey) bool { return s&(1<<k) != 0 }

// Stamps are the moments a frame carries: wall-clock nanoseconds (Unix
// time) by key, only the keys set.
type Stamps struct {
	Set StampSet
	At  [numStamps]int64
}

// Stamp records key k at ns.
func (s *Stamps) Stamp(k StampKey, ns int64) {
	s.Set |= 1 << k
	s.At[k] = ns
}

// Get returns key k's moment, if stamped.
func (s *Stamps) Get(k StampKey) (int64, bool) { return s.At[k], s.Set.Has(k) }

// Each calls fn for every key stamped, in key order.
func (s *Stamps) Each(fn func(k StampKey, ns int64)) {
	for k := StampKey(0); k < numStamps; k++ {
		if s.Set.Has(k) {
			fn(k, s.At[k])
		}
	}
}
