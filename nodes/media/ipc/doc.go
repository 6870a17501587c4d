// Package ipc is the producer protocol of browser and graphics sources:
// pictures handed to onair as shared buffers over a Unix socket, and handed
// back, one per arriving frame, from a return queue (docs/PRODUCER-PROTOCOL.md
// is the protocol's reference; seed 003 is why it returns buffers that way).
//
// Both sides live here: the Receiver (onair's side: it listens on the
// socket, takes each buffer's file descriptor once, hands frames on and
// sends finished buffers back through its ReturnQueue, everything that still
// waits before the drain marker when a connection is retired) and the
// Producer (the other side: a library that owns a pool of memfd buffers,
// used by tests and by onair's own producers). The wire format (wire.go) is
// plain fixed-size little-endian messages, fuzzed.
//
// The buffers are sealed memfds here; on a GPU machine they are DMA-BUFs
// imported by CUDA. The protocol is the same: what a buffer's file
// descriptor is, and how a backend imports it, is the business of the
// importer (nodes/browser), not of this package.
//
// ipc must never import runtime/, lang/, compiler/, nodes/show, nodes/cpu,
// nodes/cuda, cuda/ or control/: it is host-side I/O, like the rest of
// nodes/media.
package ipc
