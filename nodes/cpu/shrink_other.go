//go:build !amd64 || purego

package cpu

// Elsewhere the exact shrinks' row sums are shrink.go's loops alone.

const haveAVX2 = false

func vecHead2(c []int32, r0, r1 []uint8) int            { return 0 }
func vecTail2(v, c []int32, r2, r3 []uint8) int         { return 0 }
func vecSum4(v []int32, r0, r1, r2, r3 []uint8) int     { return 0 }
func vecTail4(v, c []int32, r4, r5, r6, r7 []uint8) int { return 0 }
func vecAcross2(d []uint8, w []int32, ch int) int       { return 0 }
func vecAcross4(d []uint8, w []int32) int               { return 0 }
