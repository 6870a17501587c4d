package frame

// Keying: pictures with alpha (a browser source's lower third) drawn over
// the scene beneath them. This file is the one declaration of the alpha
// plane and of the arithmetic every compositor keys with: package cpu
// calls these functions, and the GPU kernel (cuda/compositor.h,
// onair_key_alpha, onair_quad_alpha and onair_key) is the same integer
// code, so the two draw the same bytes.
//
// The alpha plane. A frame from a pool that asks for one (NewAlphaPool;
// cuda.NewAlphaFramePool on the GPU) has, besides its colour planes, an
// alpha plane of Height rows of Width bytes, one per luma pixel: 0
// transparent, 255 (Opaque) opaque. On the host it is Frame.Alpha, tightly
// packed (Width bytes a row); in device memory it follows the chroma plane
// in the frame's one allocation, at the frame's pitch (cuda.Frame.Alpha).
// Frames of every other source have none and cost nothing for it.
//
// The colour of a frame with alpha is premultiplied over black: a pixel of
// straight colour C and alpha a stores B + a·(C − B) in each of Y', Cb and
// Cr, B being the format's limited-range black (16 and 128 in 8 bits).
// That is exactly the picture composited over black, which is what such a
// frame shows wherever nothing keys it (a recording of the source, a bus
// that shows it alone, a source with key = "none"). Premultiplied rather
// than straight colour because:
//   - the scaler filters colour and alpha with the same tables, and only
//     premultiplied colour filters right: a transparent pixel's straight
//     colour means nothing (a browser sends black) and would bleed into
//     the edge of every scaled graphic as a dark fringe;
//   - a chroma sample is the mean of a 2x2 quad's premultiplied colour,
//     which is what the converter computes anyway, so the 4:2:0 chroma of
//     a graphic's edge is keyed with the mean alpha of the same four
//     pixels (QuadAlpha) and lands where a full-resolution key would put
//     its average;
//   - an opaque pixel keys as the ordinary opacity blend, byte for byte,
//     and a transparent one leaves the scene's sample exactly as it was.
//
// The blend (Key) is "premultiplied over": for a layer of opacity o and a
// pixel of alpha a, with e = o·a (KeyAlpha), a sample d beneath becomes
//
//	d + o·(v − B) − e·(d − B)  =  (o·v + (256 − e)·d + (e − o)·B + 128) >> 8
//
// in 256ths, v the stored (premultiplied) value. Luma keys with each
// pixel's alpha; each chroma pair with QuadAlpha of the four pixels it
// covers. A scaled layer scales its alpha plane with the luma filters
// (Filter) first, so the quad alpha is the mean of the four scaled alphas
// the quad's luma keys with.

// Opaque is the alpha of an opaque pixel.
const Opaque = 255

// AlphaSize is the bytes of a w×h frame's alpha plane: one per pixel.
func AlphaSize(w, h int) int { return w * h }

// KeyAlpha is the weight (0..256) a pixel of alpha a (0..255) in a layer
// of opacity o (0..256) replaces the scene with: o·a/255, rounded. An
// opaque pixel's is o itself.
func KeyAlpha(o, a int32) int32 { return (o*a + 127) / 255 }

// QuadAlpha is the alpha a 2x2 quad's chroma pair is keyed with: the
// rounded mean of its four pixels' alphas.
func QuadAlpha(a0, a1, a2, a3 int32) int32 { return (a0 + a1 + a2 + a3 + 2) >> 2 }

// Key blends the premultiplied value v of a layer of opacity o (0..256)
// over the value d beneath, e being KeyAlpha(o, the pixel's alpha) and
// black the value of the format's black in this plane; the result is
// clamped to 0..maxv. Values are samples' values (a P010 sample shifted
// down by 6).
func Key(v, d, black, o, e, maxv int32) int32 {
	x := (v*o + d*(256-e) + black*(e-o) + 128) >> 8
	if x < 0 {
		return 0
	}
	if x > maxv {
		return maxv
	}
	return x
}
