// Package cpu is onair's embedded CPU backend for pictures: the sources that
// make frames (test_pattern, raw_file, Y4M files), the compositor that scales
// and blends layers onto a canvas, the transitions between two scenes'
// renders, and the outputs that take a bus's frames (Y4M record, null, an
// external ffmpeg process).
//
// Everything here is plain, synchronous Go types that the runtime drives from
// its own event loops; none of them starts a goroutine except the FFmpeg
// output, which must supervise its process. Per-frame work allocates nothing
// once scratch buffers are warm.
//
// cpu may import frame/ and the standard library; it must never import
// runtime/, lang/, compiler/ or any cgo/CUDA package, so that the runtime can
// depend on it and not the other way round.
package cpu

import "github.com/onairhq/onair/frame"

// Source is what every CPU source offers: the format and size of its frames
// and Next, which fills a frame (from a pool of that format and size) with
// the next picture, its timestamp, colour tags and source identity. Next
// returns io.EOF when a source that does not loop has ended.
type Source interface {
	Format() frame.Format
	Width() int
	Height() int
	Next(dst *frame.Frame) error
}

// Output is what every CPU output accepts. Write must not keep f after it
// returns unless it Retains it (and Releases it later).
type Output interface {
	Write(f *frame.Frame) error
	Close() error
}

var (
	_ Source = (*TestPattern)(nil)
	_ Source = (*RawFile)(nil)
	_ Source = (*Y4MReader)(nil)
	_ Output = (*Record)(nil)
	_ Output = (*Null)(nil)
	_ Output = (*FFmpeg)(nil)
)
