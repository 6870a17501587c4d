// compositor.h: the compositor's kernel arguments and its per-pixel code,
// written in the C that both nvcc (compositor.cu, for the GPU) and the C
// compiler behind cgo (for the tests that run the very same code on the
// CPU, where there is no GPU) accept.
//
// The code reproduces package cpu's compositor exactly: black canvas, then
// every layer in z order (the host sorts the table), each either copied
// sample for sample (1:1 and opaque) or scaled with the CPU scaler's
// fixed-point separable filter (12-bit coefficients, 6 fractional bits kept
// between the horizontal and the vertical pass, the same rounding), padded
// black where a contained picture leaves its rectangle, and blended with the
// CPU's integer alpha: (v*a + d*(256-a) + 128) >> 8 on sample values. A
// picture with an alpha plane is keyed instead (frame/keying.go says how):
// its alpha scaled with the luma filters, luma keyed per pixel, chroma per
// quad, padding left transparent.
//
// One thread does a 2x2 block of luma and the Cb,Cr pair under it, so every
// layer edge (all even) falls between threads, and walks the layer table.
#ifndef ONAIR_COMPOSITOR_H
#define ONAIR_COMPOSITOR_H

#ifdef __CUDACC__
#define ONAIR_FN static __device__ __forceinline__
#define ONAIR_LD8(p) ((int)__ldg((const unsigned char *)(p)))
#define ONAIR_LD16(p) ((int)__ldg((const unsigned short *)(p)))
#define ONAIR_LD32(p) (__ldg((const int *)(p)))
#define ONAIR_LDU32(p) (__ldg((const unsigned int *)(p)))
#define ONAIR_FUNNEL(lo, hi, sh) __funnelshift_r((lo), (hi), (sh))
#define ONAIR_UNROLL _Pragma("unroll")
#else
#define ONAIR_FN static inline
#define ONAIR_LD8(p) ((int)*(const unsigned char *)(p))
#define ONAIR_LD16(p) ((int)*(const unsigned short *)(p))
#define ONAIR_LD32(p) (*(const int *)(p))
#define ONAIR_LDU32(p) (*(const unsigned int *)(p))
#define ONAIR_FUNNEL(lo, hi, sh) ((unsigned int)((((unsigned long long)(hi) << 32) | (lo)) >> ((sh) & 31)))
#define ONAIR_UNROLL
#include <string.h>
#endif

typedef unsigned long long onair_u64;

// The canvas of one draw.
typedef struct {
	onair_u64 y, c;        // the planes: luma, interleaved CbCr (device addresses)
	int pitch;             // bytes per row of both planes
	int width, height;     // pixels, even
	int shift;             // 0 for NV12, 6 for P010: a stored sample is its value << shift
	int bps;               // bytes per sample: 1 NV12, 2 P010
	int black_y, black_c;  // limited-range black as stored samples
	int layers;            // entries of the layer table in use
} onair_canvas;

// One layer, its geometry already placed on the host (cpu.Place): all
// coordinates even, in luma pixels.
typedef struct {
	onair_u64 y, c;                      // the source planes
	onair_u64 filters;                   // the filter block of a scaled layer (see below), 0 for a copy
	int pitch;                           // source bytes per row, both planes
	int crop_x, crop_y;                  // top-left of the source window
	int dst_x0, dst_y0, dst_x1, dst_y1;  // where the window lands (may overhang the canvas)
	int pad_x0, pad_y0, pad_x1, pad_y1;  // the layer's rectangle: what is in it and not in dst is black
	int alpha;                           // 0..256, 256 opaque: the layer's opacity
	int copy;                            // 1: same size and opaque (samples copied as stored) or keyed (values keyed as they are)
	int wide;                            // 1: rows and planes 4-byte aligned: samples may be read a word at a time
	int key;                             // a keyed picture's alpha plane (at pitch), as a byte offset from c; 0: none
} onair_layer;

// The kernel argument of a draw: the canvas and a table of up to N layers.
// All variants share the layout of their prefix, so the host fills the
// largest and launches the smallest that holds the layers in use. The
// largest must stay within the 4352 bytes of kernel parameters PTX ISA 7.0
// allows (compositor.go checks it at build time): a layer has room for no
// more 64-bit addresses, which is why the alpha plane is an offset.
#define ONAIR_MAX_LAYERS 48
typedef struct { onair_canvas canvas; onair_layer layer[4]; } onair_draw4_args;
typedef struct { onair_canvas canvas; onair_layer layer[16]; } onair_draw16_args;
typedef struct { onair_canvas canvas; onair_layer layer[ONAIR_MAX_LAYERS]; } onair_draw48_args;

// A filter block is an array of 32-bit words: the four 1-D filters of one
// scaling geometry (luma x, luma y, chroma x, chroma y). Words 0-3 are their
// tap counts, 4-7 the offsets (in words, from the block's start) of their
// start arrays (one source position per destination position), 8-11 of
// their coefficient arrays (taps per destination position, each group
// summing to 4096).
enum { ONAIR_FX_L = 0, ONAIR_FY_L = 1, ONAIR_FX_C = 2, ONAIR_FY_C = 3 };

// The transition argument: fade (mode 1) mixes from and to with to's weight
// alpha (1..255); wipe (mode 2) shows to left of edge, from right of it.
typedef struct {
	onair_u64 dst_y, dst_c, from_y, from_c, to_y, to_c;
	int dst_pitch, from_pitch, to_pitch;
	int width, height, shift, bps;
	int mode, alpha, edge;
} onair_transition_args;

ONAIR_FN const unsigned char *onair_addr(onair_u64 p) { return (const unsigned char *)p; }

ONAIR_FN int onair_ld(const unsigned char *p, int bps) { return bps == 2 ? ONAIR_LD16(p) : ONAIR_LD8(p); }

ONAIR_FN void onair_st2(unsigned char *p, int bps, int a, int b) {
	if (bps == 2) {
		*(unsigned int *)p = (unsigned int)a | ((unsigned int)b << 16);
	} else {
		*(unsigned short *)p = (unsigned short)(a | (b << 8));
	}
}

// onair_blend is the CPU's blend of value v (not shifted) over the stored
// sample d with alpha a, returned as a stored sample.
ONAIR_FN int onair_blend(int v, int d, int a, int shift) {
	if (a >= 256) return v << shift;
	return ((v * a + (d >> shift) * (256 - a) + 128) >> 8) << shift;
}

// Keying, frame/keying.go's arithmetic (KeyAlpha, QuadAlpha, Key): a
// keyed picture's colour is premultiplied over black; o is the layer's
// opacity (0..256), a a pixel's alpha (0..255).
ONAIR_FN int onair_key_alpha(int o, int a) { return (o * a + 127) / 255; }
ONAIR_FN int onair_quad_alpha(int a0, int a1, int a2, int a3) { return (a0 + a1 + a2 + a3 + 2) >> 2; }
ONAIR_FN int onair_key(int v, int d, int black, int o, int e, int maxv) {
	const int x = (v * o + d * (256 - e) + black * (e - o) + 128) >> 8;
	return x < 0 ? 0 : (x > maxv ? maxv : x);
}

// onair_hpass is one horizontal filter tap sum: samples st.. st+taps-1 of
// a row (step samples apart: 1 luma, 2 interleaved chroma), each taken as a
// value, rounded to the 6 fractional bits the vertical pass gets.
ONAIR_FN int onair_hpass(const unsigned char *row, int st, const int *cf, int taps, int step, int bps, int shift) {
	int s = 0;
	for (int k = 0; k < taps; k++) s += ONAIR_LD32(cf + k) * (onair_ld(row + (st + k) * step * bps, bps) >> shift);
	return (s + 32) >> 6;
}

// ONAIR_FAST_TAPS: filters up to this wide (every shrink down to 4:1) keep
// their coefficients in registers; onair_hpass8 is onair_hpass over them.
#define ONAIR_FAST_TAPS 8

ONAIR_FN void onair_coefs8(int c[ONAIR_FAST_TAPS], const int *cf, int taps) {
	ONAIR_UNROLL
	for (int k = 0; k < ONAIR_FAST_TAPS; k++) c[k] = k < taps ? ONAIR_LD32(cf + k) : 0;
}

ONAIR_FN int onair_hpass8(const unsigned char *row, int st, const int c[ONAIR_FAST_TAPS], int taps, int step, int bps,
                          int shift) {
	int s = 0;
	ONAIR_UNROLL
	for (int k = 0; k < ONAIR_FAST_TAPS; k++)
		if (k < taps) s += c[k] * (onair_ld(row + (st + k) * step * bps, bps) >> shift);
	return (s + 32) >> 6;
}

// The wide path reads a row's samples a 32-bit word at a time instead of
// one by one: a window of up to 16 samples (32 bytes of P010) starting
// anywhere, as 8 words realigned to its start. Only words holding wanted
// bytes are read, so nothing outside the row is touched (rows and planes
// are 4-byte aligned when a layer is wide).
#define ONAIR_WIN 16

// onair_window loads the n bytes at p into w: w[i] holds bytes p+4i..p+4i+3.
ONAIR_FN void onair_window(unsigned int w[8], const unsigned char *p, int n, const int bps) {
	const int off = (int)((unsigned long long)p & 3);
	const unsigned char *q = p - off;
	const int last = (off + n - 1) >> 2;  // the last word with a wanted byte
	const int words = bps == 2 ? 9 : 5;   // enough for ONAIR_WIN samples and the misalignment
	unsigned int raw[9];
	ONAIR_UNROLL
	for (int i = 0; i < 9; i++) raw[i] = (i < words && i <= last) ? ONAIR_LDU32(q + 4 * i) : 0;
	ONAIR_UNROLL
	for (int i = 0; i < 8; i++) w[i] = ONAIR_FUNNEL(raw[i], raw[i + 1], off * 8);
}

// onair_wsample is sample k of a window, as stored.
ONAIR_FN int onair_wsample(const unsigned int w[8], int k, const int bps) {
	return bps == 2 ? (int)((w[k >> 1] >> ((k & 1) * 16)) & 0xffff) : (int)((w[k >> 2] >> ((k & 3) * 8)) & 0xff);
}

ONAIR_FN int onair_final(int acc, int maxv) {
	int v = acc >> 18;
	return v > maxv ? maxv : (v < 0 ? 0 : v);
}

// onair_luma4 filters the 2x2 block at (i, j) of a scaled layer's
// rectangle from a full-resolution plane (luma, or the alpha plane with
// bps 1 and shift 0) whose window starts at base: the rows both output rows
// reach, each filtered horizontally once for both output columns, then
// weighted into the four sums acc (onair_final makes them values).
ONAIR_FN void onair_luma4(const int *f, const unsigned char *base, int pitch, int wide, int i, int j, const int bps,
                          const int shift, int acc[4]) {
	const int tx = ONAIR_LD32(f + ONAIR_FX_L), ty = ONAIR_LD32(f + ONAIR_FY_L);
	const int *sx = f + ONAIR_LD32(f + 4 + ONAIR_FX_L), *sy = f + ONAIR_LD32(f + 4 + ONAIR_FY_L);
	const int *cx = f + ONAIR_LD32(f + 8 + ONAIR_FX_L), *cy = f + ONAIR_LD32(f + 8 + ONAIR_FY_L);
	const int sxa = ONAIR_LD32(sx + i), sxb = ONAIR_LD32(sx + i + 1);
	const int sya = ONAIR_LD32(sy + j), syb = ONAIR_LD32(sy + j + 1);
	const int *cxa = cx + i * tx, *cxb = cxa + tx, *cya = cy + j * ty, *cyb = cya + ty;
	const int rlo = sya < syb ? sya : syb;
	int rhi = (sya > syb ? sya : syb) + ty;
	int a0 = 1 << 17, a1 = 1 << 17, a2 = 1 << 17, a3 = 1 << 17;
	// The wide path: both columns' taps in one window of span
	// samples from sxa; wa16/wb16 are their coefficients by window
	// position.
	const int d = sxb - sxa, span = d + tx;
	if (wide && tx <= ONAIR_FAST_TAPS && d >= 0 && span <= ONAIR_WIN) {
		int wa16[ONAIR_WIN], wb16[ONAIR_WIN];
		ONAIR_UNROLL
		for (int k = 0; k < ONAIR_WIN; k++) {
			wa16[k] = k < tx ? ONAIR_LD32(cxa + k) : 0;
			wb16[k] = (k >= d && k < span) ? ONAIR_LD32(cxb + (k - d)) : 0;
		}
		for (int r = rlo; r < rhi; r++) {
			const int ka = r - sya, kb = r - syb;
			const int wa = (ka >= 0 && ka < ty) ? ONAIR_LD32(cya + ka) : 0;
			const int wb = (kb >= 0 && kb < ty) ? ONAIR_LD32(cyb + kb) : 0;
			if (wa == 0 && wb == 0) continue;
			unsigned int w[8];
			onair_window(w, base + (long long)r * pitch + sxa * bps, span * bps, bps);
			int h0 = 0, h1 = 0;
			ONAIR_UNROLL
			for (int k = 0; k < ONAIR_WIN; k++) {
				if (k < span) {
					const int v = onair_wsample(w, k, bps) >> shift;
					h0 += wa16[k] * v;
					h1 += wb16[k] * v;
				}
			}
			h0 = (h0 + 32) >> 6;
			h1 = (h1 + 32) >> 6;
			a0 += wa * h0;
			a1 += wa * h1;
			a2 += wb * h0;
			a3 += wb * h1;
		}
		rhi = rlo;  // done: skip the sample-by-sample loop
	}
	int ka8[ONAIR_FAST_TAPS], kb8[ONAIR_FAST_TAPS];
	const int fast = rhi > rlo && tx <= ONAIR_FAST_TAPS;
	if (fast) {
		onair_coefs8(ka8, cxa, tx);
		onair_coefs8(kb8, cxb, tx);
	}
	for (int r = rlo; r < rhi; r++) {
		const int ka = r - sya, kb = r - syb;
		const int wa = (ka >= 0 && ka < ty) ? ONAIR_LD32(cya + ka) : 0;
		const int wb = (kb >= 0 && kb < ty) ? ONAIR_LD32(cyb + kb) : 0;
		if (wa == 0 && wb == 0) continue;
		const unsigned char *row = base + (long long)r * pitch;
		int h0, h1;
		if (fast) {
			h0 = onair_hpass8(row, sxa, ka8, tx, 1, bps, shift);
			h1 = onair_hpass8(row, sxb, kb8, tx, 1, bps, shift);
		} else {
			h0 = onair_hpass(row, sxa, cxa, tx, 1, bps, shift);
			h1 = onair_hpass(row, sxb, cxb, tx, 1, bps, shift);
		}
		a0 += wa * h0;
		a1 += wa * h1;
		a2 += wb * h0;
		a3 += wb * h1;
	}
	acc[0] = a0;
	acc[1] = a1;
	acc[2] = a2;
	acc[3] = a3;
}

// onair_key_quad keys a layer's 2x2 block of values v and chroma pair vb,
// vr, with the pixels' alphas k, over the stored samples beneath (frame.Key):
// luma with each pixel's alpha, the chroma pair with the quad's.
ONAIR_FN void onair_key_quad(const onair_canvas *cv, int o, const int v[4], int vb, int vr, const int k[4], int *y0, int *y1,
                             int *y2, int *y3, int *cb, int *cr, const int shift) {
	const int maxv = shift ? 1023 : 255;
	const int by = cv->black_y >> shift, bc = cv->black_c >> shift;
	*y0 = onair_key(v[0], *y0 >> shift, by, o, onair_key_alpha(o, k[0]), maxv) << shift;
	*y1 = onair_key(v[1], *y1 >> shift, by, o, onair_key_alpha(o, k[1]), maxv) << shift;
	*y2 = onair_key(v[2], *y2 >> shift, by, o, onair_key_alpha(o, k[2]), maxv) << shift;
	*y3 = onair_key(v[3], *y3 >> shift, by, o, onair_key_alpha(o, k[3]), maxv) << shift;
	const int e = onair_key_alpha(o, onair_quad_alpha(k[0], k[1], k[2], k[3]));
	*cb = onair_key(vb, *cb >> shift, bc, o, e, maxv) << shift;
	*cr = onair_key(vr, *cr >> shift, bc, o, e, maxv) << shift;
}

// onair_draw_quad renders the 2x2 luma block at (2px, 2py) and the chroma
// pair (px, py) of the canvas. bps and shift are the canvas's; the kernels
// pass them as constants, so each format gets code without format tests.
// keyed, a constant too, is 0 for a table without keyed layers: the key's
// code is left out of that kernel (it cost the scaled draws registers).
ONAIR_FN void onair_draw_quad(const onair_canvas *cv, const onair_layer *layers, int px, int py, const int bps,
                              const int shift, const int keyed) {
	const int X = 2 * px, Y = 2 * py;
	if (X >= cv->width || Y >= cv->height) return;
	const int maxv = shift ? 1023 : 255;
	int y0 = cv->black_y, y1 = y0, y2 = y0, y3 = y0;  // (X,Y) (X+1,Y) (X,Y+1) (X+1,Y+1)
	int cb = cv->black_c, cr = cb;
	const int n = cv->layers;
	for (int l = 0; l < n; l++) {
		const onair_layer *L = &layers[l];
		if (X < L->pad_x0 || X >= L->pad_x1 || Y < L->pad_y0 || Y >= L->pad_y1) continue;
		const int a = L->alpha;
		if (X < L->dst_x0 || X >= L->dst_x1 || Y < L->dst_y0 || Y >= L->dst_y1) {
			if (keyed && L->key) continue;  // a keyed picture's padding is transparent
			// Black padding around a contained picture.
			const int vy = cv->black_y >> shift, vc = cv->black_c >> shift;
			y0 = onair_blend(vy, y0, a, shift);
			y1 = onair_blend(vy, y1, a, shift);
			y2 = onair_blend(vy, y2, a, shift);
			y3 = onair_blend(vy, y3, a, shift);
			cb = onair_blend(vc, cb, a, shift);
			cr = onair_blend(vc, cr, a, shift);
			continue;
		}
		const int pitch = L->pitch;
		const int i = X - L->dst_x0, j = Y - L->dst_y0;  // luma position in the window's rectangle
		const int ic = i >> 1, jc = j >> 1;
		if (L->copy) {
			const unsigned char *s = onair_addr(L->y) + (long long)(L->crop_y + j) * pitch + (L->crop_x + i) * bps;
			const unsigned char *t = onair_addr(L->c) + (long long)((L->crop_y >> 1) + jc) * pitch + ((L->crop_x >> 1) + ic) * 2 * bps;
			if (keyed && L->key) {
				// 1:1 and keyed: the samples' values and the pixels' alphas
				// as they are (what the identity filter gives).
				const unsigned char *q = onair_addr(L->c) + L->key + (long long)(L->crop_y + j) * pitch + L->crop_x + i;
				int v[4] = {onair_ld(s, bps) >> shift, onair_ld(s + bps, bps) >> shift, onair_ld(s + pitch, bps) >> shift,
				            onair_ld(s + pitch + bps, bps) >> shift};
				int k[4] = {ONAIR_LD8(q), ONAIR_LD8(q + 1), ONAIR_LD8(q + pitch), ONAIR_LD8(q + pitch + 1)};
				onair_key_quad(cv, a, v, onair_ld(t, bps) >> shift, onair_ld(t + bps, bps) >> shift, k, &y0, &y1, &y2, &y3, &cb, &cr,
				               shift);
				continue;
			}
			y0 = onair_ld(s, bps);
			y1 = onair_ld(s + bps, bps);
			y2 = onair_ld(s + pitch, bps);
			y3 = onair_ld(s + pitch + bps, bps);
			cb = onair_ld(t, bps);
			cr = onair_ld(t + bps, bps);
			continue;
		}
		const int *f = (const int *)onair_addr(L->filters);
		// Luma: the four sums of the block (onair_luma4).
		int v[4];
		onair_luma4(f, onair_addr(L->y) + (long long)L->crop_y * pitch + L->crop_x * bps, pitch, L->wide, i, j, bps, shift, v);
		// Chroma: one pair, Cb and Cr filtered alike.
		int vb, vr;
		{
			const int tx = ONAIR_LD32(f + ONAIR_FX_C), ty = ONAIR_LD32(f + ONAIR_FY_C);
			const int st = ONAIR_LD32(f + ONAIR_LD32(f + 4 + ONAIR_FX_C) + ic);
			const int sr = ONAIR_LD32(f + ONAIR_LD32(f + 4 + ONAIR_FY_C) + jc);
			const int *cx = f + ONAIR_LD32(f + 8 + ONAIR_FX_C) + ic * tx;
			const int *cy = f + ONAIR_LD32(f + 8 + ONAIR_FY_C) + jc * ty;
			const unsigned char *base = onair_addr(L->c) + (long long)((L->crop_y >> 1) + sr) * pitch + (L->crop_x >> 1) * 2 * bps;
			int ab = 1 << 17, ar = 1 << 17;
			if (L->wide && tx <= ONAIR_FAST_TAPS) {
				// The wide path: the tx pairs as one window of 2*tx samples.
				int c8[ONAIR_FAST_TAPS];
				onair_coefs8(c8, cx, tx);
				for (int k = 0; k < ty; k++) {
					const int w = ONAIR_LD32(cy + k);
					if (w == 0) continue;
					unsigned int win[8];
					onair_window(win, base + (long long)k * pitch + st * 2 * bps, 2 * tx * bps, bps);
					int hb = 0, hr = 0;
					ONAIR_UNROLL
					for (int j = 0; j < ONAIR_FAST_TAPS; j++) {
						if (j < tx) {
							hb += c8[j] * (onair_wsample(win, 2 * j, bps) >> shift);
							hr += c8[j] * (onair_wsample(win, 2 * j + 1, bps) >> shift);
						}
					}
					ab += w * ((hb + 32) >> 6);
					ar += w * ((hr + 32) >> 6);
				}
			} else if (tx <= ONAIR_FAST_TAPS) {
				int c8[ONAIR_FAST_TAPS];
				onair_coefs8(c8, cx, tx);
				for (int k = 0; k < ty; k++) {
					const int w = ONAIR_LD32(cy + k);
					if (w == 0) continue;
					const unsigned char *row = base + (long long)k * pitch;
					ab += w * onair_hpass8(row, st, c8, tx, 2, bps, shift);
					ar += w * onair_hpass8(row + bps, st, c8, tx, 2, bps, shift);
				}
			} else {
				for (int k = 0; k < ty; k++) {
					const int w = ONAIR_LD32(cy + k);
					if (w == 0) continue;
					const unsigned char *row = base + (long long)k * pitch;
					ab += w * onair_hpass(row, st, cx, tx, 2, bps, shift);
					ar += w * onair_hpass(row + bps, st, cx, tx, 2, bps, shift);
				}
			}
			vb = onair_final(ab, maxv);
			vr = onair_final(ar, maxv);
		}
		if (keyed && L->key) {
			// Keyed: the alpha plane scaled as luma is.
			int k[4];
			onair_luma4(f, onair_addr(L->c) + L->key + (long long)L->crop_y * pitch + L->crop_x, pitch, L->wide, i, j, 1, 0, k);
			ONAIR_UNROLL
			for (int q = 0; q < 4; q++) {
				k[q] = onair_final(k[q], 255);
				v[q] = onair_final(v[q], maxv);
			}
			onair_key_quad(cv, a, v, vb, vr, k, &y0, &y1, &y2, &y3, &cb, &cr, shift);
			continue;
		}
		y0 = onair_blend(onair_final(v[0], maxv), y0, a, shift);
		y1 = onair_blend(onair_final(v[1], maxv), y1, a, shift);
		y2 = onair_blend(onair_final(v[2], maxv), y2, a, shift);
		y3 = onair_blend(onair_final(v[3], maxv), y3, a, shift);
		cb = onair_blend(vb, cb, a, shift);
		cr = onair_blend(vr, cr, a, shift);
	}
	unsigned char *dy = (unsigned char *)onair_addr(cv->y) + (long long)Y * cv->pitch + X * bps;
	onair_st2(dy, bps, y0, y1);
	onair_st2(dy + cv->pitch, bps, y2, y3);
	onair_st2((unsigned char *)onair_addr(cv->c) + (long long)py * cv->pitch + X * bps, bps, cb, cr);
}

// onair_transition_quad does one 2x2 luma block and its chroma pair of a
// fade or a wipe (the CPU's mix and wipe, sample for sample).
ONAIR_FN void onair_transition_quad(const onair_transition_args *t, int px, int py, const int bps, const int shift) {
	const int X = 2 * px, Y = 2 * py;
	if (X >= t->width || Y >= t->height) return;
	const long long off = (long long)X * bps;
	const unsigned char *rows[2][3];
	unsigned char *d[3];
	d[0] = (unsigned char *)onair_addr(t->dst_y) + (long long)Y * t->dst_pitch + off;
	d[1] = d[0] + t->dst_pitch;
	d[2] = (unsigned char *)onair_addr(t->dst_c) + (long long)py * t->dst_pitch + off;
	rows[0][0] = onair_addr(t->from_y) + (long long)Y * t->from_pitch + off;
	rows[0][1] = rows[0][0] + t->from_pitch;
	rows[0][2] = onair_addr(t->from_c) + (long long)py * t->from_pitch + off;
	rows[1][0] = onair_addr(t->to_y) + (long long)Y * t->to_pitch + off;
	rows[1][1] = rows[1][0] + t->to_pitch;
	rows[1][2] = onair_addr(t->to_c) + (long long)py * t->to_pitch + off;
	ONAIR_UNROLL
	for (int r = 0; r < 3; r++) {
		const int f0 = onair_ld(rows[0][r], bps), f1 = onair_ld(rows[0][r] + bps, bps);
		const int g0 = onair_ld(rows[1][r], bps), g1 = onair_ld(rows[1][r] + bps, bps);
		int o0, o1;
		if (t->mode == 2) {
			const int left = X < t->edge;
			o0 = left ? g0 : f0;
			o1 = left ? g1 : f1;
		} else {
			const int a = t->alpha, na = 256 - a;
			o0 = (((f0 >> shift) * na + (g0 >> shift) * a + 128) >> 8) << shift;
			o1 = (((f1 >> shift) * na + (g1 >> shift) * a + 128) >> 8) << shift;
		}
		onair_st2(d[r], bps, o0, o1);
	}
}

// ---- Browser pictures to the canvas format ----
//
// nodes/browser's ToCanvas on the GPU, the same arithmetic: four-byte
// pixels (opaque, straight or premultiplied alpha) to limited-range Y'CbCr
// with the converter's fixed-point BT.709 coefficients (16 fractional bits;
// chroma from the sum of each 2x2 block, two more), straight alpha first
// made colour over black, (c*a + 127) / 255; or an NV12 picture copied, or
// widened to P010 (an 8-bit v stored as v << 8). Into a frame with an alpha
// plane, each pixel's alpha goes there (255 where the picture has none):
// the colour stays premultiplied over black, as frame/keying.go declares.
// One thread per 2x2 block.

// The converter's coefficients for the canvas's bit depth (nodes/browser
// computes them; the host fills this from there).
typedef struct {
	int yr, yg, yb, ur, ug, ub, vr, vg, vb;
	int yoff, coff;  // offsets with rounding, in the fixed point of each
} onair_picture_coeffs;

typedef struct {
	onair_u64 src;              // the picture (device address)
	onair_u64 y, c;             // the canvas-format frame's planes
	int src_pitch, src_offset1; // bytes per row of the picture; NV12: where its CbCr plane starts
	int dst_pitch;              // bytes per row of both planes of the frame
	int width, height;          // pixels, even
	int r, g, b;                // byte of red, green and blue in a four-byte pixel (alpha is byte 3)
	int straight;               // 1: colours not multiplied by alpha: composite over black first
	int nv12;                   // 1: the picture is NV12 (already limited range)
	int has_alpha;              // 1: byte 3 of a four-byte pixel is alpha (straight or premultiplied)
	onair_u64 alpha;            // the frame's alpha plane (at dst_pitch); 0: none
	int bps, shift;             // the frame's bytes per sample and shift: 1, 0 NV12; 2, 6 P010
	onair_picture_coeffs k;
} onair_picture_args;

// onair_over_black is straight colour c at alpha a over black.
ONAIR_FN int onair_over_black(int c, int a) { return (c * a + 127) / 255; }

ONAIR_FN void onair_picture_quad(const onair_picture_args *a, int px, int py, int bps, int shift) {
	if (px >= a->width / 2 || py >= a->height / 2) return;
	const int X = px * 2, Y = py * 2;
	unsigned char *d0 = (unsigned char *)onair_addr(a->y) + (long long)Y * a->dst_pitch + X * bps;
	unsigned char *d1 = d0 + a->dst_pitch;
	unsigned char *dc = (unsigned char *)onair_addr(a->c) + (long long)py * a->dst_pitch + X * bps;
	const unsigned char *s0, *s1;
	if (a->nv12) {
		const int w = bps == 2 ? 8 : 0;
		s0 = onair_addr(a->src) + (long long)Y * a->src_pitch + X;
		s1 = s0 + a->src_pitch;
		const unsigned char *sc = onair_addr(a->src) + a->src_offset1 + (long long)py * a->src_pitch + X;
		onair_st2(d0, bps, ONAIR_LD8(s0) << w, ONAIR_LD8(s0 + 1) << w);
		onair_st2(d1, bps, ONAIR_LD8(s1) << w, ONAIR_LD8(s1 + 1) << w);
		onair_st2(dc, bps, ONAIR_LD8(sc) << w, ONAIR_LD8(sc + 1) << w);
		if (a->alpha) {
			unsigned char *k = (unsigned char *)onair_addr(a->alpha) + (long long)Y * a->dst_pitch + X;
			*(unsigned short *)k = 0xffff;
			*(unsigned short *)(k + a->dst_pitch) = 0xffff;
		}
		return;
	}
	s0 = onair_addr(a->src) + (long long)Y * a->src_pitch + X * 4;
	s1 = s0 + a->src_pitch;
	int r[4], g[4], b[4], al4[4];
	ONAIR_UNROLL
	for (int i = 0; i < 4; i++) {
		const unsigned char *p = (i < 2 ? s0 : s1) + (i & 1) * 4;
		r[i] = ONAIR_LD8(p + a->r);
		g[i] = ONAIR_LD8(p + a->g);
		b[i] = ONAIR_LD8(p + a->b);
		al4[i] = a->has_alpha ? ONAIR_LD8(p + 3) : 255;
		if (a->straight) {
			const int al = al4[i];
			r[i] = onair_over_black(r[i], al);
			g[i] = onair_over_black(g[i], al);
			b[i] = onair_over_black(b[i], al);
		}
	}
	const onair_picture_coeffs *k = &a->k;
	int l[4];
	ONAIR_UNROLL
	for (int i = 0; i < 4; i++) l[i] = (k->yr * r[i] + k->yg * g[i] + k->yb * b[i] + k->yoff) >> 16;
	const int sr = r[0] + r[1] + r[2] + r[3], sg = g[0] + g[1] + g[2] + g[3], sb = b[0] + b[1] + b[2] + b[3];
	const int cb = (k->ur * sr + k->ug * sg + k->ub * sb + k->coff) >> 18;
	const int cr = (k->vr * sr + k->vg * sg + k->vb * sb + k->coff) >> 18;
	onair_st2(d0, bps, l[0] << shift, l[1] << shift);
	onair_st2(d1, bps, l[2] << shift, l[3] << shift);
	onair_st2(dc, bps, cb << shift, cr << shift);
	if (a->alpha) {
		unsigned char *k = (unsigned char *)onair_addr(a->alpha) + (long long)Y * a->dst_pitch + X;
		*(unsigned short *)k = (unsigned short)(al4[0] | (al4[1] << 8));
		*(unsigned short *)(k + a->dst_pitch) = (unsigned short)(al4[2] | (al4[3] << 8));
	}
}

// ---- the decode loops' plane copies ----------------------------------
//
// One launch copies every picture a decode loop mapped in a round out of
// the decoder's surfaces into its frames: a table of pitched regions, row r
// of entry e being width bytes from src + r*src_pitch to dst +
// r*dst_pitch (a picture's luma and chroma rows as one entry where the
// chroma follows the luma in both, as two otherwise). The grid is (row
// blocks, entries): block (x, e) copies rows x*ONAIR_COPY_ROWS on of entry
// e, ONAIR_COPY_BY rows at once, ONAIR_COPY_BX threads along each row, with
// the widest accesses the entry's addresses, pitches and width allow (16
// bytes for frames and surfaces, whose pitches are multiples of 256; down
// to single bytes for anything else). A plain copy: byte for byte.
typedef struct {
	onair_u64 src, dst;                 // the first row of each (device addresses)
	unsigned int src_pitch, dst_pitch;  // bytes from a row to the next
	unsigned int width, rows;           // bytes a row, rows
} onair_copy_entry;

#define ONAIR_COPY_BX 32
#define ONAIR_COPY_BY 8
#define ONAIR_COPY_ROWS 32
#define ONAIR_MAX_COPIES 128

// The kernel argument: the table, in two sizes sharing their prefix (the
// host fills the largest and launches the smallest that holds the entries
// in use); the largest within the 4352 bytes of kernel parameters.
typedef struct { int entries, reserved[3]; onair_copy_entry e[8]; } onair_copy8_args;
typedef struct { int entries, reserved[3]; onair_copy_entry e[ONAIR_MAX_COPIES]; } onair_copy128_args;

#ifdef __CUDACC__
#define ONAIR_CP(T, d, s) (*(T *)(d) = *(const T *)(s))
#define ONAIR_CP16(d, s) ONAIR_CP(uint4, d, s)
#define ONAIR_CP8(d, s) ONAIR_CP(uint2, d, s)
#define ONAIR_CP4(d, s) ONAIR_CP(unsigned int, d, s)
#define ONAIR_CP2(d, s) ONAIR_CP(unsigned short, d, s)
#else
#define ONAIR_CP16(d, s) memcpy((d), (s), 16)
#define ONAIR_CP8(d, s) memcpy((d), (s), 8)
#define ONAIR_CP4(d, s) memcpy((d), (s), 4)
#define ONAIR_CP2(d, s) memcpy((d), (s), 2)
#endif

// onair_copy_shift is log2 of the widest access (16 bytes at most) that
// every row of e allows: the largest power of two dividing both addresses,
// both pitches and the width.
ONAIR_FN int onair_copy_shift(const onair_copy_entry *e) {
	const unsigned int a = (unsigned int)(e->src | e->dst) | e->src_pitch | e->dst_pitch | e->width;
	return (a & 15) == 0 ? 4 : (a & 7) == 0 ? 3 : (a & 3) == 0 ? 2 : (a & 1) == 0 ? 1 : 0;
}

// onair_copy_thread is thread (tx, ty)'s share of row block bx of entry e:
// rows bx*ONAIR_COPY_ROWS + ty + k*ONAIR_COPY_BY, and in each row the
// accesses tx + j*ONAIR_COPY_BX.
ONAIR_FN void onair_copy_thread(const onair_copy_entry *e, int bx, int tx, int ty) {
	const int sh = onair_copy_shift(e);
	const int n = (int)(e->width >> sh);
	const int r0 = bx * ONAIR_COPY_ROWS;
	const int r1 = r0 + ONAIR_COPY_ROWS < (int)e->rows ? r0 + ONAIR_COPY_ROWS : (int)e->rows;
	for (int r = r0 + ty; r < r1; r += ONAIR_COPY_BY) {
		const unsigned char *s = onair_addr(e->src + (onair_u64)r * e->src_pitch);
		unsigned char *d = (unsigned char *)onair_addr(e->dst + (onair_u64)r * e->dst_pitch);
		switch (sh) {
		case 4:
			for (int i = tx; i < n; i += ONAIR_COPY_BX) ONAIR_CP16(d + 16 * i, s + 16 * i);
			break;
		case 3:
			for (int i = tx; i < n; i += ONAIR_COPY_BX) ONAIR_CP8(d + 8 * i, s + 8 * i);
			break;
		case 2:
			for (int i = tx; i < n; i += ONAIR_COPY_BX) ONAIR_CP4(d + 4 * i, s + 4 * i);
			break;
		case 1:
			for (int i = tx; i < n; i += ONAIR_COPY_BX) ONAIR_CP2(d + 2 * i, s + 2 * i);
			break;
		default:
			for (int i = tx; i < n; i += ONAIR_COPY_BX) d[i] = s[i];
		}
	}
}

// onair_copy_blocks is the grid's x dimension for n entries: row blocks
// enough for the tallest.
ONAIR_FN unsigned int onair_copy_blocks(const onair_copy_entry *e, int n) {
	unsigned int rows = 0;
	for (int i = 0; i < n; i++) rows = e[i].rows > rows ? e[i].rows : rows;
	return (rows + ONAIR_COPY_ROWS - 1) / ONAIR_COPY_ROWS;
}

#endif
