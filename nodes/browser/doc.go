// Package browser runs browser and graphics sources on any backend: the
// node kinds ipc_dmabuf_source (a producer's frames received over a Unix
// socket, nodes/media/ipc) and gpu_import (each buffer imported once and
// kept while in use, the pictures converted to the canvas format), generic
// over the backend's frame type.
//
// A backend plugs in with a Backend: a token frame of its type, which
// carries a received frame's handle across the edge from the source to its
// import, and an Importer, which maps a buffer into the backend's memory
// and converts its pictures. The CPU backend's importer is here (Host):
// "import" is mmap of a sealed memfd, conversion is BGRA/RGBA/NV12 to
// NV12/P010 in Go. The CUDA backend's Importer (nodes/cuda/browser.go) copies a
// memfd picture to the device, or maps CUDA memory the producer exported
// (cuMemImportFromShareableHandle), and converts it with a kernel
// (docs/PRODUCER-PROTOCOL.md says what a producer's buffers must be).
//
// What the seeds measured shapes the import: imports are keyed by buffer
// and kept until unused for import_ttl_ms (10 s: a still page paints
// rarely, and a re-import costs a CUDA lock every draw waits on); releases
// run on a thread of their own; purge_idle releases, as the show goes on
// air, what start-up went through and left unused for 500 ms.
//
// Every source is bounded whatever its producer does. Its rate:
// smooth_timestamps (nodes/show) retimes frames against the show's clock,
// so a producer faster than the show loses frames (counted as early)
// instead of running ahead. Its size: a picture larger than the source's
// declared size is refused at HELLO (ERROR, format), not scaled down.
// Refusing costs nothing and bounds all that follows (the buffers mapped,
// every conversion, the pools) by what the show declared; scaling would
// still map and read every full-size buffer (an 8192x8192 BGRA buffer is
// 256 MiB, and a producer may send 64) and resample each frame, the whole
// of a CPU source's budget, to hide a mistake the producer should be told
// of. Its pools: at most MaxPools sizes, each at most PoolFrames frames,
// a pool let go closed.
//
// browser must never import lang/, compiler/, nodes/cpu,
// nodes/cuda or cuda/: backends import it, not the other way round.
package browser
