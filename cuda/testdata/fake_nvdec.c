// A stand-in for libnvcuvid.so.1 and the CUDA driver calls decoding into
// frames makes, for testing the decode loop's logic on machines without a
// GPU (nvdec_fake_test.go builds it into fake_cuda.c's stand-in for
// libcuda.so.1, which is then both libraries). "Device memory" is host
// memory, and the "parser" reads a toy bitstream instead of H.264 or HEVC:
//
//   00 00 01 'S' w_hi w_lo h_hi h_lo depth   a sequence header
//   00 00 01 'P' n                           a picture, numbered n
//
// It calls the sequence callback at each 'S' whose format differs from the
// last, the decode callback for each picture (into the next surface, round
// robin), and the display callback in order once more than the display
// delay are waiting, as NVIDIA's parser does. A decoded picture's luma
// sample at (x, y) of the coded surface is (n + x + 2y) mod 256 (times 64
// at 10 bits), its chroma (n + 7 + x + y) mod 256.
//
// cuvidDecodePicture takes the common part of the picture parameters
// (CUVIDPICPARAMS): a toy picture's bitstream is its 'P' n; any other (an
// HEVC picture from onair's own parser, decoded without the parser here)
// is numbered by the pictures decoded before it, so a test can tell which
// picture a surface shows. It refuses a surface out of range and slices
// that do not start with a start code.
//
// Its module has the decode loops' copy kernels (onair_copy8,
// onair_copy128) and a handle for every other kernel the compositor looks
// up (launching one fails): a copy kernel's launch runs compositor.h's code for every thread of
// the grid it is given, on the argument bytes the kernel takes (copy8's
// 8 entries only, as the driver copies no more), so the loop's table, the
// grid and the kernel's code are all checked by what the frames hold.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../compositor.h"

typedef int res;

typedef struct {
	size_t src_x_bytes, src_y;
	int src_memory_type;
	const void *src_host;
	unsigned long long src_device;
	void *src_array;
	size_t src_pitch;
	size_t dst_x_bytes, dst_y;
	int dst_memory_type;
	void *dst_host;
	unsigned long long dst_device;
	void *dst_array;
	size_t dst_pitch;
	size_t width_bytes, height;
} memcpy2d;

typedef struct {
	int codec;
	unsigned int rate_num, rate_den;
	unsigned char progressive, depth_luma_minus8, depth_chroma_minus8, min_surfaces;
	unsigned int coded_width, coded_height;
	int left, top, right, bottom;
	int chroma_format;
	unsigned int bitrate;
	int aspect_x, aspect_y;
	unsigned char signal[4];
	unsigned int seqhdr_length;
} format;

typedef struct {
	int picture_index, progressive_frame, top_field_first, repeat_first_field;
	long long timestamp;
} dispinfo;

typedef struct {
	unsigned long flags, payload_size;
	const unsigned char *payload;
	long long timestamp;
} packet;

typedef struct {
	int codec;
	unsigned int max_surfaces, clock_rate, error_threshold, max_display_delay, flags_bits, reserved1[4];
	void *user;
	int (*on_sequence)(void *, format *);
	int (*on_decode)(void *, void *);
	int (*on_display)(void *, dispinfo *);
	void *on_operating_point, *reserved2[6], *ext;
} parser_params;

typedef struct {
	int codec, chroma_format;
	unsigned int depth_minus8, reserved1[3];
	unsigned char supported, engines;
	unsigned short output_formats;
	unsigned int max_width, max_height, max_mb_count;
	unsigned short min_width, min_height;
	unsigned char h1, h2;
	unsigned short h3;
	unsigned int reserved3[10];
} caps;

typedef struct { short left, top, right, bottom; } rect16;

typedef struct {
	unsigned long width, height, num_decode_surfaces;
	int codec, chroma_format;
	unsigned long creation_flags, depth_minus8, intra_decode_only, max_width, max_height, reserved1;
	rect16 display_area;
	int output_format, deinterlace_mode;
	unsigned long target_width, target_height, num_output_surfaces;
	void *vid_lock;
	rect16 target_rect;
	unsigned long enable_histogram, reserved2[4];
} create_info;

typedef struct { int status; unsigned int reserved[31]; void *p[8]; } decode_status;

// The picture parameters' common part (CUVIDPICPARAMS), padded to its
// size.
typedef struct {
	int w_mbs, h_mbs, index, field_pic, bottom_field, second_field;
	unsigned int len;
	const unsigned char *data;
	unsigned int slices;
	const unsigned int *offsets;
	int ref_pic, intra_pic;
	unsigned int reserved[30];
	unsigned int codec[1024];
} picparams;

typedef struct { int index; int n; } pic;

typedef struct {
	unsigned char *mem;
	size_t pitch;
	int w, h, bps, surfaces, mapped;
	int count; // pictures decoded
} decoder;

typedef struct {
	parser_params p;
	format fmt;
	int have_fmt, surfaces, next_surface;
	pic held[64];
	long long ts[64];
	int nheld;
} parser;

int fake_mapped_max; // the most frames mapped at once, for the test

res cuMemAllocPitch_v2(unsigned long long *p, size_t *pitch, size_t w, size_t h, unsigned int e) {
	*pitch = (w + 255) & ~(size_t)255;
	*p = (unsigned long long)(uintptr_t)calloc(*pitch, h);
	return *p ? 0 : 2;
}
res cuMemFree_v2(unsigned long long p) { free((void *)(uintptr_t)p); return 0; }
// Static: a call from one exported function to
// another would bind to the first such symbol in the process, the real
// driver's where a test has loaded it (on the GPU machine).
static res copy2d(const memcpy2d *c) {
	const unsigned char *s = c->src_memory_type == 1 ? c->src_host : (const unsigned char *)(uintptr_t)c->src_device;
	unsigned char *d = c->dst_memory_type == 1 ? c->dst_host : (unsigned char *)(uintptr_t)c->dst_device;
	for (size_t r = 0; r < c->height; r++) memcpy(d + r * c->dst_pitch, s + r * c->src_pitch, c->width_bytes);
	return 0;
}
res cuMemcpy2DAsync_v2(const memcpy2d *c, void *s) { return copy2d(c); }
res cuStreamCreate(void **s, unsigned int f) { *s = malloc(1); return 0; }
res cuStreamSynchronize(void *s) { return 0; }
res cuStreamDestroy_v2(void *s) { free(s); return 0; }

static int fake_module, fake_copy8, fake_copy128, fake_other;
int fake_launches; // copy kernel launches, for the test

res cuModuleLoadDataEx(void **m, const void *image, unsigned int n, int *opts, void **vals) { *m = &fake_module; return 0; }
res cuModuleUnload(void *m) { return m == &fake_module ? 0 : 400; }
res cuModuleGetFunction(void **f, void *m, const char *name) {
	if (m != &fake_module) return 400;
	if (!strcmp(name, "onair_copy8")) *f = &fake_copy8;
	else if (!strcmp(name, "onair_copy128")) *f = &fake_copy128;
	else *f = &fake_other; // the compositor's kernels: never launched here
	return 0;
}
res cuLaunchKernel(void *f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz,
		   unsigned int shmem, void *stream, void **params, void **extra) {
	if (f != &fake_copy8 && f != &fake_copy128) return 400; // CUDA_ERROR_INVALID_HANDLE
	if (gx < 1 || gy < 1 || gz != 1 || bx != ONAIR_COPY_BX || by != ONAIR_COPY_BY || bz != 1 || !params || extra) return 1;
	static onair_copy128_args a; // what the kernel sees of its argument
	memset(&a, 0, sizeof a);
	memcpy(&a, params[0], f == &fake_copy8 ? sizeof(onair_copy8_args) : sizeof(onair_copy128_args));
	for (unsigned int y = 0; y < gy; y++)
		for (unsigned int x = 0; x < gx; x++)
			for (unsigned int ty = 0; ty < by; ty++)
				for (unsigned int tx = 0; tx < bx; tx++)
					if ((int)y < a.entries) onair_copy_thread(&a.e[y], x, tx, ty);
	fake_launches++;
	return 0;
}

res cuvidGetDecoderCaps(caps *c) {
	c->supported = 1;
	c->engines = 7;
	c->output_formats = 3;
	c->max_width = c->max_height = 8192;
	c->min_width = c->min_height = 48;
	c->max_mb_count = 8192 * 8192 / 256;
	return 0;
}
res cuvidCtxLockCreate(void **l, void *c) { *l = malloc(1); return 0; }
res cuvidCtxLockDestroy(void *l) { free(l); return 0; }

res cuvidCreateDecoder(void **out, create_info *ci) {
	if (ci->target_width != ci->width || ci->target_height != ci->height || ci->num_output_surfaces < 1) return 1;
	decoder *d = calloc(1, sizeof *d);
	d->w = ci->width;
	d->h = ci->height;
	d->bps = ci->output_format == 1 ? 2 : 1;
	d->surfaces = ci->num_decode_surfaces;
	d->pitch = ((size_t)d->w * d->bps + 511) & ~(size_t)511;
	d->mem = calloc((size_t)d->surfaces, d->pitch * d->h * 3 / 2);
	*out = d;
	return 0;
}
res cuvidDestroyDecoder(void *p) {
	decoder *d = p;
	free(d->mem);
	free(d);
	return 0;
}
res cuvidDecodePicture(void *p, void *pp) {
	decoder *d = p;
	picparams *q = pp;
	if (q->index < 0 || q->index >= d->surfaces || !q->data || q->slices < 1) return 1;
	for (unsigned int i = 0; i < q->slices; i++) {
		unsigned int o = q->offsets[i];
		if (o + 4 > q->len || q->data[o] || q->data[o + 1] || (q->data[o + 2] != 1 && (q->data[o + 2] || q->data[o + 3] != 1))) return 1;
	}
	int n = d->count++;
	if (q->len == 5 && q->data[3] == 'P') n = q->data[4];
	unsigned char *s = d->mem + (size_t)q->index * d->pitch * d->h * 3 / 2;
	for (int y = 0; y < d->h * 3 / 2; y++)
		for (int x = 0; x < d->w; x++) {
			int v = y < d->h ? (n + x + 2 * y) & 255 : (n + 7 + x + (y - d->h)) & 255;
			if (d->bps == 1) s[y * d->pitch + x] = v;
			else ((uint16_t *)(s + y * d->pitch))[x] = v << 6;
		}
	return 0;
}
res cuvidGetDecodeStatus(void *p, int i, decode_status *st) { st->status = 2; return 0; }
res cuvidMapVideoFrame64(void *p, int i, unsigned long long *ptr, unsigned int *pitch, void *vpp) {
	decoder *d = p;
	if (i < 0 || i >= d->surfaces) return 1;
	*ptr = (unsigned long long)(uintptr_t)(d->mem + (size_t)i * d->pitch * d->h * 3 / 2);
	*pitch = d->pitch;
	if (++d->mapped > fake_mapped_max) fake_mapped_max = d->mapped;
	return 0;
}
res cuvidUnmapVideoFrame64(void *p, unsigned long long ptr) {
	((decoder *)p)->mapped--;
	return 0;
}

res cuvidCreateVideoParser(void **out, parser_params *pp) {
	parser *p = calloc(1, sizeof *p);
	p->p = *pp;
	*out = p;
	return 0;
}
res cuvidDestroyVideoParser(void *p) { free(p); return 0; }

static int display(parser *p, int keep) {
	while (p->nheld > keep) {
		dispinfo di = {p->held[0].index, 1, 0, 0, p->ts[0]};
		memmove(p->held, p->held + 1, sizeof p->held[0] * (p->nheld - 1));
		memmove(p->ts, p->ts + 1, sizeof p->ts[0] * (p->nheld - 1));
		p->nheld--;
		if (!p->p.on_display(p->p.user, &di)) return 0;
	}
	return 1;
}

res cuvidParseVideoData(void *pv, packet *pkt) {
	parser *p = pv;
	const unsigned char *b = pkt->payload;
	size_t n = pkt->payload_size;
	for (size_t i = 0; i + 4 < n; i++) {
		if (b[i] || b[i + 1] || b[i + 2] != 1) continue;
		if (b[i + 3] == 'S' && i + 8 < n) {
			format f;
			memset(&f, 0, sizeof f);
			f.codec = p->p.codec;
			f.progressive = 1;
			f.depth_luma_minus8 = f.depth_chroma_minus8 = b[i + 8] - 8;
			f.min_surfaces = 4;
			f.right = b[i + 4] << 8 | b[i + 5];
			f.bottom = b[i + 6] << 8 | b[i + 7];
			f.coded_width = (f.right + 15) & ~15;
			f.coded_height = (f.bottom + 15) & ~15;
			f.chroma_format = 1;
			if (!p->have_fmt || memcmp(&f, &p->fmt, sizeof f)) {
				int r = p->p.on_sequence(p->p.user, &f);
				if (!r) return 999;
				p->surfaces = r > 1 ? r : f.min_surfaces;
				p->fmt = f;
				p->have_fmt = 1;
			}
		} else if (b[i + 3] == 'P' && p->have_fmt) {
			if (p->nheld == 64) return 998;
			pic q = {p->next_surface, b[i + 4]};
			p->next_surface = (p->next_surface + 1) % p->surfaces;
			static const unsigned int zero = 0;
			picparams pp;
			memset(&pp, 0, sizeof pp);
			pp.index = q.index;
			pp.data = b + i;
			pp.len = 5;
			pp.slices = 1;
			pp.offsets = &zero;
			if (!p->p.on_decode(p->p.user, &pp)) return 997;
			p->held[p->nheld] = q;
			p->ts[p->nheld++] = pkt->timestamp;
			if (!display(p, p->p.max_display_delay)) return 996;
		}
	}
	if (pkt->flags & 1) { // end of stream
		if (!display(p, 0)) return 996;
		if (pkt->flags & 16) p->p.on_display(p->p.user, NULL);
	}
	return 0;
}
