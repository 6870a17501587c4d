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
