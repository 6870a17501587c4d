//go:build amd64 && !purego

#include "textflag.h"

// truePeakOf's interpolator, four windows a step with AVX2: lane k is
// window i+k (its inputs w[j] are buf[i+k+j]). The same multiplications
// and additions in the same order as truePeakOf's loop (no FMA), so the
// same values, bit for bit. n is a multiple of 4.

// func tpPeak4AVX2(w *float64, n int, coef *[tpCoefs]float64, out *[4]float64)
TEXT ·tpPeak4AVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ coef+16(FP), DX
	MOVQ out+24(FP), DI
	VBROADCASTSD 144(DX), Y10 // the magnitude mask
	VXORPD Y9, Y9, Y9
tploop:
	CMPQ CX, $0
	JLE  tpdone
	VMOVUPD 0(SI), Y3
	VMOVUPD 88(SI), Y4
	VADDPD Y4, Y3, Y5 // s0
	VSUBPD Y4, Y3, Y6 // d0
	VBROADCASTSD 0(DX), Y7
	VMULPD Y5, Y7, Y0
	VBROADCASTSD 48(DX), Y7
	VMULPD Y6, Y7, Y1
	VBROADCASTSD 96(DX), Y7
	VMULPD Y5, Y7, Y2
	VMOVUPD 8(SI), Y3
	VMOVUPD 80(SI), Y4
	VADDPD Y4, Y3, Y5 // s1
	VSUBPD Y4, Y3, Y6 // d1
	VBROADCASTSD 8(DX), Y7
	VMULPD Y5, Y7, Y8
	VADDPD Y8, Y0, Y0
	VBROADCASTSD 56(DX), Y7
	VMULPD Y6, Y7, Y8
	VADDPD Y8, Y1, Y1
	VBROADCASTSD 104(DX), Y7
	VMULPD Y5, Y7, Y8
	VADDPD Y8, Y2, Y2
	VMOVUPD 16(SI), Y3
	VMOVUPD 72(SI), Y4
	VADDPD Y4, Y3, Y5 // s2
	VSUBPD Y4, Y3, Y6 // d2
	VBROADCASTSD 16(DX), Y7
	VMULPD Y5, Y7, Y8
	VADDPD Y8, Y0, Y0
	VBROADCASTSD 64(DX), Y7
	VMULPD Y6, Y7, Y8
	VADDPD Y8, Y1, Y1
	VBROADCASTSD 112(DX), Y7
	VMULPD Y5, Y7, Y8
	VADDPD Y8, Y2, Y2
	VMOVUPD 24(SI), Y3
	VMOVUPD 64(SI), Y4
	VADDPD Y4, Y3, Y5 // s3
	VSUBPD Y4, Y3, Y6 // d3
	VBROADCASTSD 24(DX), Y7
	VMULPD Y5, Y7, Y8
	VADDPD Y8, Y0, Y0
	VBROADCASTSD 72(DX), Y7
	VMULPD Y6, Y7, Y8
	VADDPD Y8, Y1, Y1
	VBROADCASTSD 120(DX), Y7
	VMULPD Y5, Y7, Y8
	VADDPD Y8, Y2, Y2
	VMOVUPD 32(SI), Y3
	VMOVUPD 56(SI), Y4
	VADDPD Y4, Y3, Y5 // s4
	VSUBPD Y4, Y3, Y6 // d4
	VBROADCASTSD 32(DX), Y7
	VMULPD Y5, Y7, Y8
	VADDPD Y8, Y0, Y0
	VBROADCASTSD 80(DX), Y7
	VMULPD Y6, Y7, Y8
	VADDPD Y8, Y1, Y1
	VBROADCASTSD 128(DX), Y7
	VMULPD Y5, Y7, Y8
	VADDPD Y8, Y2, Y2
	VMOVUPD 40(SI), Y3
	VMOVUPD 48(SI), Y4
	VADDPD Y4, Y3, Y5 // s5
	VSUBPD Y4, Y3, Y6 // d5
	VBROADCASTSD 40(DX), Y7
	VMULPD Y5, Y7, Y8
	VADDPD Y8, Y0, Y0
	VBROADCASTSD 88(DX), Y7
	VMULPD Y6, Y7, Y8
	VADDPD Y8, Y1, Y1
	VBROADCASTSD 136(DX), Y7
	VMULPD Y5, Y7, Y8
	VADDPD Y8, Y2, Y2
	VANDPD Y10, Y0, Y0 // |a|
	VANDPD Y10, Y1, Y1 // |b|
	VADDPD Y1, Y0, Y0 // p = |a|+|b|
	VANDPD Y10, Y2, Y2 // |mid|
	VMAXPD Y0, Y2, Y0 // p = |mid| > p ? |mid| : p
	VMAXPD Y9, Y0, Y9 // peak = p > peak ? p : peak
	ADDQ $32, SI
	SUBQ $4, CX
	JMP  tploop
tpdone:
	VMOVUPD Y9, (DI)
	VZEROUPPER
	RET

// kWeight's two filters, the left channel in the low lane and the right in
// the high, one sample of both a step (AVX, 128-bit, and FMA): the same
// operations in the same order as its loop, each of its math.FMA a fused
// multiply-add here (2·y1 as y1+y1, which is exact), so the same values.
// Each output waits on the one before it for one fused multiply-add.
// c holds each coefficient twice: b0 b1 b2 a2 a1 c2 c1, then the mask
// that clears a sign. The energy is summed a lane (a channel) each.

// It reads the samples interleaved as float32 (src) and writes nothing
// but the state and out: the true peak's copies of them, where it needs
// them, are made apart (storing them here cost an eighth more).

// func kWeightAVX(k *[Channels]kWeighting, src *float32, n int, c *[16]float64, out *[3]float64)
TEXT ·kWeightAVX(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), SI
	MOVQ src+8(FP), AX
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), DX
	MOVQ out+32(FP), DI
	VMOVSD 0(SI), X1
	VMOVHPD 48(SI), X1, X1
	VMOVSD 8(SI), X2
	VMOVHPD 56(SI), X2, X2
	VMOVSD 16(SI), X3
	VMOVHPD 64(SI), X3, X3
	VMOVSD 24(SI), X4
	VMOVHPD 72(SI), X4, X4
	VMOVSD 32(SI), X5
	VMOVHPD 80(SI), X5, X5
	VMOVSD 40(SI), X6
	VMOVHPD 88(SI), X6, X6
	VXORPD X12, X12, X12 // energy
	VXORPD X14, X14, X14 // peak
kwloop:
	CMPQ CX, $0
	JLE  kwdone
	VCVTPS2PD (AX), X0       // (left, right) as float64
	VMULPD 0(DX), X0, X8          // b0·x
	VFMADD231PD 16(DX), X1, X8    // + b1·x1
	VFMADD231PD 32(DX), X2, X8    // + b2·x2
	VFNMADD231PD 48(DX), X4, X8   // − a2·y2
	VFNMADD231PD 64(DX), X3, X8   // − a1·y1: y
	VADDPD X3, X3, X9             // 2·y1
	VSUBPD X9, X8, X10
	VADDPD X4, X10, X10           // + y2
	VFNMADD231PD 80(DX), X6, X10  // − c2·z2
	VFNMADD231PD 96(DX), X5, X10  // − c1·z1: z
	VMOVAPD X1, X2
	VMOVAPD X0, X1
	VMOVAPD X3, X4
	VMOVAPD X8, X3
	VMOVAPD X5, X6
	VMOVAPD X10, X5
	VMULPD X10, X10, X11
	VADDPD X11, X12, X12          // the energy, a channel a lane
	VANDPD 112(DX), X0, X13  // |x|, |u|
	VMAXPD X14, X13, X14
	ADDQ $8, AX
	DECQ CX
	JMP  kwloop
kwdone:
	VMOVLPD X1, 0(SI)
	VMOVHPD X1, 48(SI)
	VMOVLPD X2, 8(SI)
	VMOVHPD X2, 56(SI)
	VMOVLPD X3, 16(SI)
	VMOVHPD X3, 64(SI)
	VMOVLPD X4, 24(SI)
	VMOVHPD X4, 72(SI)
	VMOVLPD X5, 32(SI)
	VMOVHPD X5, 80(SI)
	VMOVLPD X6, 40(SI)
	VMOVHPD X6, 88(SI)
	VHADDPD X12, X12, X12         // left's plus right's
	VMOVSD X12, 0(DI)
	VMOVUPD X14, 8(DI)
	RET

// The largest magnitude of n float64s (n a multiple of 4), four a step;
// c is the sign mask (tpCoef's last). Exact: a maximum is one of them.

// func absMaxAVX2(p *float64, n int, c *float64) float64
TEXT ·absMaxAVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ c+16(FP), DX
	VBROADCASTSD (DX), Y10
	VXORPD Y9, Y9, Y9
amloop:
	CMPQ CX, $0
	JLE  amdone
	VANDPD (SI), Y10, Y0
	VMAXPD Y9, Y0, Y9
	ADDQ $32, SI
	SUBQ $4, CX
	JMP  amloop
amdone:
	VEXTRACTF128 $1, Y9, X1
	VMAXPD X1, X9, X9
	VPERMILPD $1, X9, X1
	VMAXSD X1, X9, X9
	VMOVSD X9, ret+24(FP)
	VZEROUPPER
	RET
