// compositor.cu: onair's GPU kernels. `make ptx` (on a machine with nvcc)
// compiles this file to compositor.ptx for compute_75, which the driver
// JIT-compiles for whatever GPU it finds (T4, L4, H200, ...); onair embeds
// the PTX, so a user's machine needs only the NVIDIA driver. The per-pixel
// code is in compositor.h, shared with the CPU-side tests.
#include "../compositor.h"

// ONAIR_MIN_BLOCKS: the blocks of 256 threads the draw kernels are compiled
// to fit on one multiprocessor at once (more blocks: fewer registers each).
// The Makefile's ptx target sets it; measured in cuda/BENCHMARKS.md.
#ifndef ONAIR_MIN_BLOCKS
#define ONAIR_MIN_BLOCKS 1
#endif

// One draw: a thread per 2x2 luma block, the code specialised per format.
// Three sizes of layer table, so a small draw does not pass a 4 KB
// argument; each in two kinds, onair_drawN for tables without keyed
// layers and onair_drawkN with the key's code.
#define ONAIR_DRAW_KERNEL(NAME, N, KEYED)                                      \
	extern "C" __global__ void __launch_bounds__(256, ONAIR_MIN_BLOCKS)        \
	    NAME(const onair_draw##N##_args a) {                                   \
		const int px = blockIdx.x * blockDim.x + threadIdx.x;                  \
		const int py = blockIdx.y * blockDim.y + threadIdx.y;                  \
		if (a.canvas.bps == 2)                                                 \
			onair_draw_quad(&a.canvas, a.layer, px, py, 2, 6, KEYED);          \
		else                                                                   \
			onair_draw_quad(&a.canvas, a.layer, px, py, 1, 0, KEYED);          \
	}
ONAIR_DRAW_KERNEL(onair_draw4, 4, 0)
ONAIR_DRAW_KERNEL(onair_draw16, 16, 0)
ONAIR_DRAW_KERNEL(onair_draw48, 48, 0)
ONAIR_DRAW_KERNEL(onair_drawk4, 4, 1)
ONAIR_DRAW_KERNEL(onair_drawk16, 16, 1)
ONAIR_DRAW_KERNEL(onair_drawk48, 48, 1)

extern "C" __global__ void onair_transition(const onair_transition_args a) {
	const int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
	if (a.bps == 2)
		onair_transition_quad(&a, px, py, 2, 6);
	else
		onair_transition_quad(&a, px, py, 1, 0);
}

// onair_picture converts a browser source's picture to the canvas format.
extern "C" __global__ void onair_picture(const onair_picture_args a) {
	const int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
	if (a.bps == 2)
		onair_picture_quad(&a, px, py, 2, 6);
	else
		onair_picture_quad(&a, px, py, 1, 0);
}

// onair_busy keeps one thread busy for ns nanoseconds of the GPU's global
// timer: the benchmarks' stand-in for work to wait on.
extern "C" __global__ void onair_busy(unsigned long long ns) {
	unsigned long long start, now;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	} while (now - start < ns);
}

// onair_copyN copies a decode loop's round of pictures out of the decoder's
// surfaces into their frames (compositor.h, onair_copy_thread): grid (row
// blocks, entries), blocks of ONAIR_COPY_BX x ONAIR_COPY_BY threads.
#define ONAIR_COPY_KERNEL(NAME, N)                                                  \
	extern "C" __global__ void __launch_bounds__(ONAIR_COPY_BX * ONAIR_COPY_BY)     \
	    NAME(const onair_copy##N##_args a) {                                        \
		if ((int)blockIdx.y < a.entries)                                            \
			onair_copy_thread(&a.e[blockIdx.y], blockIdx.x, threadIdx.x, threadIdx.y); \
	}
ONAIR_COPY_KERNEL(onair_copy8, 8)
ONAIR_COPY_KERNEL(onair_copy128, 128)
