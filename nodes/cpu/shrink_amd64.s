//go:build amd64 && !purego

#include "textflag.h"

// The exact shrinks' row sums over bytes (NV12), 8 samples a step with
// AVX2: each byte widened to an int32 (VPMOVZXBD), the weights by shifts
// and adds. Integer sums, so the same values as shrink.go's loops. n is
// a multiple of 8.

// func head2AVX2(c *int32, r0, r1 *uint8, n int)
TEXT ·head2AVX2(SB), NOSPLIT, $0-32
	MOVQ c+0(FP), DI
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX
head2loop:
	CMPQ AX, CX
	JGE  head2done
	VPMOVZXBD (SI)(AX*1), Y0
	VPMOVZXBD (DX)(AX*1), Y1
	VPADDD    Y1, Y0, Y0     // a + b
	VPADDD    Y1, Y1, Y1     // 2b
	VPADDD    Y1, Y0, Y0     // a + 3b
	VMOVDQU   Y0, (DI)(AX*4)
	ADDQ      $8, AX
	JMP       head2loop
head2done:
	VZEROUPPER
	RET

// func tail2AVX2(v, c *int32, r2, r3 *uint8, n int)
TEXT ·tail2AVX2(SB), NOSPLIT, $0-40
	MOVQ v+0(FP), DI
	MOVQ c+8(FP), BX
	MOVQ r2+16(FP), SI
	MOVQ r3+24(FP), DX
	MOVQ n+32(FP), CX
	XORQ AX, AX
tail2loop:
	CMPQ AX, CX
	JGE  tail2done
	VPMOVZXBD (SI)(AX*1), Y0 // a
	VPMOVZXBD (DX)(AX*1), Y1 // b
	VPADDD    Y1, Y0, Y2     // a + b
	VPADDD    Y0, Y0, Y3     // 2a
	VPADDD    Y2, Y3, Y3     // t = 3a + b
	VPSLLD    $2, Y2, Y2     // 4(a + b)
	VPSUBD    Y3, Y2, Y2     // 4(a + b) - t
	VMOVDQU   (BX)(AX*4), Y4
	VPADDD    Y3, Y4, Y4     // c + t
	VMOVDQU   Y4, (DI)(AX*4)
	VMOVDQU   Y2, (BX)(AX*4)
	ADDQ      $8, AX
	JMP       tail2loop
tail2done:
	VZEROUPPER
	RET

// func sum4AVX2(v *int32, r0, r1, r2, r3 *uint8, n int)
TEXT ·sum4AVX2(SB), NOSPLIT, $0-48
	MOVQ v+0(FP), DI
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ r2+24(FP), R8
	MOVQ r3+32(FP), R9
	MOVQ n+40(FP), CX
	XORQ AX, AX
sum4loop:
	CMPQ AX, CX
	JGE  sum4done
	VPMOVZXBD (SI)(AX*1), Y0 // a
	VPMOVZXBD (DX)(AX*1), Y1 // b
	VPMOVZXBD (R8)(AX*1), Y2 // d
	VPMOVZXBD (R9)(AX*1), Y3 // f
	// a + 3b + 5d + 7f = (a + b + d + f) + 2(b + 2d + 3f)
	VPADDD    Y1, Y0, Y4
	VPADDD    Y2, Y4, Y4
	VPADDD    Y3, Y4, Y4     // s
	VPADDD    Y3, Y2, Y5     // d + f
	VPADDD    Y5, Y5, Y5     // 2(d + f)
	VPADDD    Y1, Y5, Y5     // b + 2d + 2f
	VPADDD    Y3, Y5, Y5     // b + 2d + 3f
	VPADDD    Y5, Y5, Y5
	VPADDD    Y5, Y4, Y4
	VMOVDQU   Y4, (DI)(AX*4)
	ADDQ      $8, AX
	JMP       sum4loop
sum4done:
	VZEROUPPER
	RET

// func tail4AVX2(v, c *int32, r4, r5, r6, r7 *uint8, n int)
TEXT ·tail4AVX2(SB), NOSPLIT, $0-56
	MOVQ v+0(FP), DI
	MOVQ c+8(FP), BX
	MOVQ r4+16(FP), SI
	MOVQ r5+24(FP), DX
	MOVQ r6+32(FP), R8
	MOVQ r7+40(FP), R9
	MOVQ n+48(FP), CX
	XORQ AX, AX
tail4loop:
	CMPQ AX, CX
	JGE  tail4done
	VPMOVZXBD (SI)(AX*1), Y0 // a
	VPMOVZXBD (DX)(AX*1), Y1 // b
	VPMOVZXBD (R8)(AX*1), Y2 // d
	VPMOVZXBD (R9)(AX*1), Y3 // f
	// t = 7a + 5b + 3d + f = s + 4(a + b) + 2(a + d), s = a + b + d + f
	VPADDD    Y1, Y0, Y4     // a + b
	VPADDD    Y2, Y0, Y5     // a + d
	VPADDD    Y3, Y2, Y6     // d + f
	VPADDD    Y4, Y6, Y6     // s
	VPSLLD    $2, Y4, Y4
	VPADDD    Y5, Y5, Y5
	VPADDD    Y4, Y5, Y5
	VPADDD    Y6, Y5, Y5     // t
	VPSLLD    $3, Y6, Y6     // 8s
	VPSUBD    Y5, Y6, Y6     // 8s - t
	VMOVDQU   (BX)(AX*4), Y7
	VPADDD    Y5, Y7, Y7     // c + t
	VMOVDQU   Y7, (DI)(AX*4)
	VMOVDQU   Y6, (BX)(AX*4)
	ADDQ      $8, AX
	JMP       tail4loop
tail4done:
	VZEROUPPER
	RET

// The 2:1 shrink's across pass into opaque bytes: out[i] = (w[2i] +
// 3w[2i+1] + 3w[2i+2] + w[2i+3] + 32) >> 6 over units of one int32
// (luma) or of two (a chroma pair), 8 bytes out a step. The evens and
// odds of the units from w and from w two units on are split apart
// (their order within a register permuted alike), summed, rounded,
// put back in order (VPERMQ) and packed to bytes. n (bytes out) is a
// multiple of 8; w holds 2n+2 (luma) or 2n+4 (chroma) values.

// SUM2 sums the split units (Y4 w[2k], Y5 w[2k+1], Y6 w[2k+2], Y7
// w[2k+3]) with weights 1 3 3 1, rounds (Y15 holds 32), restores the
// order and stores the 8 bytes at DI.
#define SUM2 \
	VPADDD       Y6, Y5, Y8 \
	VPADDD       Y8, Y8, Y9 \
	VPADDD       Y9, Y8, Y8 \
	VPADDD       Y4, Y8, Y8 \
	VPADDD       Y7, Y8, Y8 \
	VPADDD       Y15, Y8, Y8 \
	VPSRAD       $6, Y8, Y8 \
	VPERMQ       $0xD8, Y8, Y8 \
	VEXTRACTI128 $1, Y8, X9 \
	VPACKUSDW    X9, X8, X8 \
	VPACKUSWB    X8, X8, X8 \
	MOVQ         X8, (DI)

// func across2AVX2(d *uint8, w *int32, n int)
TEXT ·across2AVX2(SB), NOSPLIT, $0-24
	MOVQ         d+0(FP), DI
	MOVQ         w+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVL         $32, AX
	MOVD         AX, X15
	VPBROADCASTD X15, Y15
	XORQ         AX, AX
across2loop:
	CMPQ    AX, CX
	JGE     across2done
	VMOVDQU (SI), Y0          // w[2i ..]
	VMOVDQU 32(SI), Y1        // w[2i+8 ..]
	VMOVDQU 8(SI), Y2         // w[2i+2 ..]
	VMOVDQU 40(SI), Y3        // w[2i+10 ..]
	VSHUFPS $0x88, Y1, Y0, Y4 // the evens, k = 0 1 4 5 | 2 3 6 7
	VSHUFPS $0xDD, Y1, Y0, Y5 // the odds
	VSHUFPS $0x88, Y3, Y2, Y6
	VSHUFPS $0xDD, Y3, Y2, Y7
	SUM2
	ADDQ    $64, SI
	ADDQ    $8, DI
	ADDQ    $8, AX
	JMP     across2loop
across2done:
	VZEROUPPER
	RET

// func across2PairsAVX2(d *uint8, w *int32, n int)
TEXT ·across2PairsAVX2(SB), NOSPLIT, $0-24
	MOVQ         d+0(FP), DI
	MOVQ         w+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVL         $32, AX
	MOVD         AX, X15
	VPBROADCASTD X15, Y15
	XORQ         AX, AX
pairsloop:
	CMPQ        AX, CX
	JGE         pairsdone
	VMOVDQU     (SI), Y0      // pairs 2m ..
	VMOVDQU     32(SI), Y1    // pairs 2m+4 ..
	VMOVDQU     16(SI), Y2    // pairs 2m+2 ..
	VMOVDQU     48(SI), Y3    // pairs 2m+6 ..
	VPUNPCKLQDQ Y1, Y0, Y4    // the even pairs, k = 0 2 | 1 3
	VPUNPCKHQDQ Y1, Y0, Y5    // the odd
	VPUNPCKLQDQ Y3, Y2, Y6
	VPUNPCKHQDQ Y3, Y2, Y7
	SUM2
	ADDQ        $64, SI
	ADDQ        $8, DI
	ADDQ        $8, AX
	JMP         pairsloop
pairsdone:
	VZEROUPPER
	RET

// The 4:1 shrink's across pass into opaque luma bytes: out[i] = (p[i] +
// q[i+1] + 512) >> 10, p[k] and q[k] the sums of w[4k .. 4k+3] under
// 1 3 5 7 and 7 5 3 1. Two rounds of VSHUFPS split 32 values into their
// four phases (units in the order 0 2 4 6 | 1 3 5 7 in each), VPERMD
// puts them back. n (bytes out) is a multiple of 8; w holds 4n+4 values.

DATA across4order<>+0(SB)/4, $0
DATA across4order<>+4(SB)/4, $4
DATA across4order<>+8(SB)/4, $1
DATA across4order<>+12(SB)/4, $5
DATA across4order<>+16(SB)/4, $2
DATA across4order<>+20(SB)/4, $6
DATA across4order<>+24(SB)/4, $3
DATA across4order<>+28(SB)/4, $7
GLOBL across4order<>(SB), RODATA|NOPTR, $32

// PHASES splits the 32 values at off(SI) into phases Y4 … Y7.
#define PHASES(off) \
	VMOVDQU off(SI), Y0 \
	VMOVDQU off+32(SI), Y1 \
	VMOVDQU off+64(SI), Y2 \
	VMOVDQU off+96(SI), Y3 \
	VSHUFPS $0x88, Y1, Y0, Y4 \
	VSHUFPS $0xDD, Y1, Y0, Y5 \
	VSHUFPS $0x88, Y3, Y2, Y6 \
	VSHUFPS $0xDD, Y3, Y2, Y7 \
	VSHUFPS $0x88, Y6, Y4, Y0 \
	VSHUFPS $0xDD, Y6, Y4, Y2 \
	VSHUFPS $0x88, Y7, Y5, Y1 \
	VSHUFPS $0xDD, Y7, Y5, Y3 \
	VMOVDQA Y0, Y4 \
	VMOVDQA Y1, Y5 \
	VMOVDQA Y2, Y6 \
	VMOVDQA Y3, Y7

// func across4AVX2(d *uint8, w *int32, n int)
TEXT ·across4AVX2(SB), NOSPLIT, $0-24
	MOVQ         d+0(FP), DI
	MOVQ         w+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVL         $3, AX
	MOVD         AX, X12
	VPBROADCASTD X12, Y12
	MOVL         $5, AX
	MOVD         AX, X13
	VPBROADCASTD X13, Y13
	MOVL         $7, AX
	MOVD         AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $512, AX
	MOVD         AX, X15
	VPBROADCASTD X15, Y15
	VMOVDQU      across4order<>(SB), Y11
	XORQ         AX, AX
across4loop:
	CMPQ     AX, CX
	JGE      across4done
	PHASES(0)
	VPMULLD  Y12, Y5, Y5
	VPMULLD  Y13, Y6, Y6
	VPMULLD  Y14, Y7, Y7
	VPADDD   Y5, Y4, Y8
	VPADDD   Y6, Y8, Y8
	VPADDD   Y7, Y8, Y8   // p
	PHASES(16)
	VPMULLD  Y14, Y4, Y4
	VPMULLD  Y13, Y5, Y5
	VPMULLD  Y12, Y6, Y6
	VPADDD   Y4, Y8, Y8
	VPADDD   Y5, Y8, Y8
	VPADDD   Y6, Y8, Y8
	VPADDD   Y7, Y8, Y8   // p + q
	VPADDD   Y15, Y8, Y8
	VPSRAD   $10, Y8, Y8
	VPERMD   Y8, Y11, Y8
	VEXTRACTI128 $1, Y8, X9
	VPACKUSDW X9, X8, X8
	VPACKUSWB X8, X8, X8
	MOVQ     X8, (DI)
	ADDQ     $128, SI
	ADDQ     $8, DI
	ADDQ     $8, AX
	JMP      across4loop
across4done:
	VZEROUPPER
	RET
