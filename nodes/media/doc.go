// Package media makes and takes frames in host memory, for every backend:
// test patterns stamped with their source id and frame number, raw NV12/P010
// files read with pread (loop arithmetic, rewritten and truncated files), Y4M
// files read and recorded (a frame counts once the whole of it is in the
// file; a recording is continued after its last whole frame), an external
// ffmpeg process fed raw frames. What tests share (pattern pictures and
// clips, a disk that fills up) is in mediatest. The CPU backend uses them
// directly; the CUDA backend feeds its
// uploads from them and its outputs download into them.
//
// Everything here is plain, synchronous types that a node drives; none of
// them starts a goroutine except the FFmpeg output, which must supervise its
// process, and the Decoder, which feeds its ffmpeg and reads its stderr.
// Per-frame work allocates nothing once buffers are warm.
//
// media may import frame/, media/es and the standard library; it must never
// import runtime/, lang/, compiler/, nodes/ or any backend.
package media

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
	_ Output = (*FFmpeg)(nil)
)
