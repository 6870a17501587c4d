package media

import (
	"sync/atomic"

	"github.com/onairhq/onair/frame"
)

// Null is the null output: it counts the frames it is given and keeps none.
type Null struct {
	frames atomic.Int64
	last   atomic.Int64 // SourceFrame of the last frame
}

// Write counts f.
func (n *Null) Write(f *frame.Frame) error {
	n.frames.Add(1)
	n.last.Store(f.SourceFrame)
	return nil
}

// Frames is the number of frames written.
func (n *Null) Frames() int64 { return n.frames.Load() }

// LastSourceFrame is the source frame number of the last frame written.
func (n *Null) LastSourceFrame() int64 { return n.last.Load() }

// Close does nothing; Null has nothing to release.
func (n *Null) Close() error { return nil }
