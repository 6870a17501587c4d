//go:build amd64 && !purego

package cpu

import "golang.org/x/sys/cpu"

// The exact shrinks' row sums over bytes in AVX2 (shrink_amd64.s), where
// the CPU has it; shrink_other.go is the rest of the world's.
var haveAVX2 = cpu.X86.HasAVX2

//go:noescape
func head2AVX2(c *int32, r0, r1 *uint8, n int)

//go:noescape
func tail2AVX2(v, c *int32, r2, r3 *uint8, n int)

//go:noescape
func sum4AVX2(v *int32, r0, r1, r2, r3 *uint8, n int)

//go:noescape
func tail4AVX2(v, c *int32, r4, r5, r6, r7 *uint8, n int)

//go:noescape
func across2AVX2(d *uint8, w *int32, n int)

//go:noescape
func across2PairsAVX2(d *uint8, w *int32, n int)

//go:noescape
func across4AVX2(d *uint8, w *int32, n int)

// vecAcross4 is vecAcross2's 4:1, for luma.
func vecAcross4(d []uint8, w []int32) int {
	n := len(d) &^ 7
	if !haveAVX2 || n == 0 || len(w) < 4*n+4 {
		return 0
	}
	across4AVX2(&d[0], &w[0], n)
	return n
}

// vecAcross2 draws the leading multiple of 8 of d, opaque bytes, by the
// 2:1 shrink's across pass over the row sums w (ch samples a unit) and
// returns how many it drew: 0 without AVX2.
func vecAcross2(d []uint8, w []int32, ch int) int {
	n := len(d) &^ 7
	if !haveAVX2 || n == 0 || len(w) < 2*n+2*ch {
		return 0
	}
	if ch == 1 {
		across2AVX2(&d[0], &w[0], n)
	} else {
		across2PairsAVX2(&d[0], &w[0], n)
	}
	return n
}

// The vec functions do the leading multiple of 8 of the rows' samples
// (all of the same length, checked by the callers) and return how many
// they did: 0 without AVX2.

func vecHead2(c []int32, r0, r1 []uint8) int {
	n := len(r0) &^ 7
	if !haveAVX2 || n == 0 {
		return 0
	}
	head2AVX2(&c[0], &r0[0], &r1[0], n)
	return n
}

func vecTail2(v, c []int32, r2, r3 []uint8) int {
	n := len(r2) &^ 7
	if !haveAVX2 || n == 0 {
		return 0
	}
	tail2AVX2(&v[0], &c[0], &r2[0], &r3[0], n)
	return n
}

func vecSum4(v []int32, r0, r1, r2, r3 []uint8) int {
	n := len(r0) &^ 7
	if !haveAVX2 || n == 0 {
		return 0
	}
	sum4AVX2(&v[0], &r0[0], &r1[0], &r2[0], &r3[0], n)
	return n
}

func vecTail4(v, c []int32, r4, r5, r6, r7 []uint8) int {
	n := len(r4) &^ 7
	if !haveAVX2 || n == 0 {
		return 0
	}
	tail4AVX2(&v[0], &c[0], &r4[0], &r5[0], &r6[0], &r7[0], n)
	return n
}
