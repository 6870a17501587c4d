// A stand-in for libcuda.so.1 with no GPU behind it, for the tests of what
// onair does around the driver (pagelocked_fake_test.go). Page-locked host
// memory is malloc'd; a request of FAKE_OOM bytes fails as the driver does
// when RLIMIT_MEMLOCK or RAM runs out. The test appends a stub returning
// CUDA_SUCCESS for every other entry point the loader looks up
// (driver.h's onair_syms), so a new entry point needs nothing here.
#include <stdlib.h>
#include <stddef.h>

#define FAKE_OOM 12345

static int fake_ctx;

int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDeviceGet(int *d, int i) { *d = i; return 0; }
int cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &fake_ctx; return 0; }
int cuDevicePrimaryCtxGetState(int d, unsigned *f, int *a) { (void)d; *f = 0; *a = 0; return 0; }
int cuGetErrorName(int r, const char **s) { *s = r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_FAKE"; return 0; }
int cuGetErrorString(int r, const char **s) { *s = r == 2 ? "out of memory" : "fake"; return 0; }
int cuMemHostAlloc(void **p, size_t n, unsigned flags) {
	(void)flags;
	if (n == FAKE_OOM) return 2;
	*p = malloc(n);
	return *p ? 0 : 2;
}
int cuMemFreeHost(void *p) { free(p); return 0; }
