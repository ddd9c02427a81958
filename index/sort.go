package index

// Least-significant-digit radix sorts with 8-bit digits (Knuth, TAOCP vol. 3,
// 5.2.5). One read pass counts all eight digits; a digit that is the same for
// every key is skipped, so keys with few significant bits (hash-table slot
// positions, small segments) take fewer passes. Sorting is stable.

// digitCounts returns the histograms of the eight bytes of keys.
func digitCounts(keys []uint64) *[8][256]int {
	var c [8][256]int
	for _, k := range keys {
		c[0][byte(k)]++
		c[1][byte(k>>8)]++
		c[2][byte(k>>16)]++
		c[3][byte(k>>24)]++
		c[4][byte(k>>32)]++
		c[5][byte(k>>40)]++
		c[6][byte(k>>48)]++
		c[7][byte(k>>56)]++
	}
	return &c
}

// trivial reports whether every key has the same digit (the histogram has one
// non-zero bucket holding all n keys).
func trivial(h *[256]int, n int) bool {
	for _, c := range h {
		if c != 0 {
			return c == n
		}
	}
	return true
}

// radixSort sorts keys ascending using tmp (len(tmp) >= len(keys)) as scratch.
func radixSort(keys, tmp []uint64) {
	n := len(keys)
	if n < 256 {
		insertionSort(keys)
		return
	}
	tmp = tmp[:n]
	c := digitCounts(keys)
	src, dst := keys, tmp
	for d := 0; d < 8; d++ {
		h := &c[d]
		if trivial(h, n) {
			continue
		}
		var off [256]int
		sum := 0
		for i, v := range h {
			off[i] = sum
			sum += v
		}
		shift := uint(8 * d)
		for _, k := range src {
			b := byte(k >> shift)
			dst[off[b]] = k
			off[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}

// radixSortPairs sorts keys ascending and permutes vals alongside; tk and tv
// are scratch of at least the same lengths.
func radixSortPairs(keys []uint64, vals []uint32, tk []uint64, tv []uint32) {
	n := len(keys)
	if n < 64 {
		for i := 1; i < n; i++ {
			k, v := keys[i], vals[i]
			j := i
			for ; j > 0 && keys[j-1] > k; j-- {
				keys[j], vals[j] = keys[j-1], vals[j-1]
			}
			keys[j], vals[j] = k, v
		}
		return
	}
	tk, tv = tk[:n], tv[:n]
	c := digitCounts(keys)
	sk, sv, dk, dv := keys, vals, tk, tv
	for d := 0; d < 8; d++ {
		h := &c[d]
		if trivial(h, n) {
			continue
		}
		var off [256]int
		sum := 0
		for i, v := range h {
			off[i] = sum
			sum += v
		}
		shift := uint(8 * d)
		for i, k := range sk {
			b := byte(k >> shift)
			o := off[b]
			dk[o] = k
			dv[o] = sv[i]
			off[b] = o + 1
		}
		sk, sv, dk, dv = dk, dv, sk, sv
	}
	if &sk[0] != &keys[0] {
		copy(keys, sk)
		copy(vals, sv)
	}
}

func insertionSort(a []uint64) {
	for i := 1; i < len(a); i++ {
		k := a[i]
		j := i
		for ; j > 0 && a[j-1] > k; j-- {
			a[j] = a[j-1]
		}
		a[j] = k
	}
}
