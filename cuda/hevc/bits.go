package hevc

// ceilLog2 is Ceil(Log2(n)) for n >= 1.
func ceilLog2(n int) int {
	b := 0
	for (1 << b) < n {
		b++
	}
	return b
}
