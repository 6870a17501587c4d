// Package cuda is onair's GPU library: what the CUDA backend's nodes
// (uploads, NVDEC, the compositor) are built from. It reaches the NVIDIA
// driver through dlopen, so onair builds, tests and runs on machines
// without CUDA: there only Probe answers, saying why no GPU is usable.
//
// What is here:
//
//   - One loader (driver.go, driver.h): libcuda.so.1 opened once, every
//     driver call onair makes looked up by its _v2 name where the API has
//     one, cuInit and a version check; a missing symbol or an old driver is
//     a clear error. Failed calls are *Error values that name the call and
//     the driver's error: "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of
//     memory)".
//   - Probe, for `onair run -backend auto`.
//   - Context (the device's primary context, with its Sched: spin or
//     blocking sync), Stream, Event, DeviceMemory (plain and pitched),
//     HostMemory (page-locked, portable or write-combined), 2D copies
//     between host and device memory, memsets. Each call makes the context
//     current on the thread it runs on, inside its cgo call.
//   - Frame and FramePool: NV12/P010 pictures in pitched device memory
//     with frame.Frame's metadata, reference counted back to a capped pool,
//     and ordered by events (written / read) rather than by blocking.
//   - NVDEC (nvdec_lib.go, nvdec_decoder.go, nvdec_loop.go, nvdec.h):
//     libnvcuvid's cuvid entry points only, opened on a Context, decoding
//     into Frames of a FramePool; its CUDA calls go through the loader.
//   - Uploader: a page-locked block, a private stream and an ordering
//     event; the primitives of the raw sources' four upload modes.
//   - Compositor: package cpu's compositor, fades and wipes on the GPU, one
//     kernel launch per draw, byte for byte the CPU's output. The kernels
//     are CUDA C in kernels/compositor.cu and compositor.h, compiled to PTX
//     by `make ptx` and embedded; the driver compiles the PTX for the GPU
//     it finds. The tests also run compositor.h's code on the CPU, so the
//     arithmetic is checked against package cpu on every machine.
//
// cuda may import frame; it must never import runtime/, lang/, compiler/
// (nor cpu or nodes: the backend that uses both places layers with
// frame.Place and hands cuda the geometry).
package cuda
