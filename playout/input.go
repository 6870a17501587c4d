package playout

// Input holds what one input of a bus has delivered and a tick may still
// show. Frames arrive in timestamp order (a source stamps them so); a tick
// takes the newest frame at or before it. Frames passed over by a newer one
// are released at once; the frame on show is kept until a newer one replaces
// it, so an input with nothing new repeats its last frame.
//
// An Input is owned by one compositor and is not safe for concurrent use.
type Input[F any] struct {
	pending []entry[F] // ascending pts, not yet shown
	current entry[F]
	has     bool
	release func(F) // called once for every frame the input lets go

	Stats InputStats
}

type entry[F any] struct {
	f   F
	pts int64
}

// InputStats counts what became of an input's frames.
type InputStats struct {
	Offered uint64 // frames delivered
	Shown   uint64 // frames shown by at least one tick
	Skipped uint64 // frames replaced by a newer one before any tick showed them
	Repeats uint64 // ticks that showed the previous tick's frame again
	Empty   uint64 // ticks with no frame at all yet (drawn black)
}

// NewInput returns an input that calls release for every frame it drops.
// release may be nil.
func NewInput[F any](release func(F)) *Input[F] {
	return &Input[F]{release: release}
}

// Offer hands the input a frame presented at pts (nanoseconds on the bus's
// clock). A frame older than one already waiting is put in its place, so a
// source that restarts its timestamps does not block newer frames.
func (in *Input[F]) Offer(f F, pts int64) {
	in.Stats.Offered++
	i := len(in.pending)
	for i > 0 && in.pending[i-1].pts > pts {
		i--
	}
	in.pending = append(in.pending, entry[F]{})
	copy(in.pending[i+1:], in.pending[i:])
	in.pending[i] = entry[F]{f, pts}
}

// Pick returns the frame tick time t shows: the newest waiting frame at or
// before t, else the frame shown last (a repeat). ok is false when the input
// has never had a frame. fresh is true when the frame was not shown before.
func (in *Input[F]) Pick(t int64) (f F, ok, fresh bool) {
	n := 0
	for n < len(in.pending) && in.pending[n].pts <= t {
		n++
	}
	if n == 0 {
		if !in.has {
			in.Stats.Empty++
			return f, false, false
		}
		in.Stats.Repeats++
		return in.current.f, true, false
	}
	// Frames before the newest due one were never shown.
	for _, e := range in.pending[:n-1] {
		in.Stats.Skipped++
		in.drop(e.f)
	}
	if in.has {
		in.drop(in.current.f)
	}
	in.current, in.has = in.pending[n-1], true
	rest := copy(in.pending, in.pending[n:])
	clear(in.pending[rest:])
	in.pending = in.pending[:rest]
	in.Stats.Shown++
	return in.current.f, true, true
}

// Ready reports whether a tick at time t would show a frame: one was shown
// already, or one waiting is due at or before t.
func (in *Input[F]) Ready(t int64) bool {
	return in.has || len(in.pending) > 0 && in.pending[0].pts <= t
}

// Waiting is the number of frames delivered and not yet shown.
func (in *Input[F]) Waiting() int { return len(in.pending) }

// Close releases every frame the input holds.
func (in *Input[F]) Close() {
	for _, e := range in.pending {
		in.drop(e.f)
	}
	clear(in.pending)
	in.pending = in.pending[:0]
	if in.has {
		in.drop(in.current.f)
		in.has = false
	}
}

func (in *Input[F]) drop(f F) {
	if in.release != nil {
		in.release(f)
	}
}
