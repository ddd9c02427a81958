package rule

import "slices"

// sortHashes sorts a in place using tmp (grown as needed, returned for reuse):
// a least-significant-digit radix sort, four passes of 8 bits, which beats
// pdqsort several times over on the thousands of random 32-bit shingle hashes
// of a long document. Passes whose digit is the same for every value are
// skipped.
func sortHashes(a, tmp []uint32) []uint32 {
	if len(a) < 128 {
		slices.Sort(a)
		return tmp
	}
	if cap(tmp) < len(a) {
		tmp = make([]uint32, len(a))
	}
	tmp = tmp[:len(a)]
	var counts [4][256]int
	for _, v := range a {
		counts[0][v&0xff]++
		counts[1][v>>8&0xff]++
		counts[2][v>>16&0xff]++
		counts[3][v>>24]++
	}
	src, dst := a, tmp
	for pass := range 4 {
		c := &counts[pass]
		shift := uint(8 * pass)
		if c[src[0]>>shift&0xff] == len(src) {
			continue // every value has the same digit
		}
		sum := 0
		for i, n := range c {
			c[i] = sum
			sum += n
		}
		for _, v := range src {
			d := v >> shift & 0xff
			dst[c[d]] = v
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
	return tmp
}
