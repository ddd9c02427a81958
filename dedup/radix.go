package dedup

import (
	"cmp"
	"slices"
)

// sortBandEnts sorts a partition's band entries by key, then position,
// using tmp (grown as needed, returned for reuse): a least-significant-digit
// radix sort of the keys, 11 bits a pass over the bits below the
// partition's (passes whose digit is the same for every key are skipped),
// stable, and then each run of equal keys, nearly always of one or two
// entries, sorted by position. pdqsort with a comparison function took
// half of the candidate stage.
func sortBandEnts(a, tmp []bandEnt) []bandEnt {
	if len(a) < 256 {
		slices.SortFunc(a, compareBandEnts)
		return tmp
	}
	const digit, passes = 11, (64 - bandPartBits + 10) / 11
	if cap(tmp) < len(a) {
		tmp = make([]bandEnt, len(a))
	}
	tmp = tmp[:len(a)]
	var counts [passes][1 << digit]int
	for _, e := range a {
		for p := range passes {
			counts[p][e.key>>(digit*p)&(1<<digit-1)]++
		}
	}
	src, dst := a, tmp
	for p := range passes {
		c := &counts[p]
		shift := uint(digit * p)
		if c[src[0].key>>shift&(1<<digit-1)] == len(src) {
			continue
		}
		sum := 0
		for i, n := range c {
			c[i] = sum
			sum += n
		}
		for _, e := range src {
			d := e.key >> shift & (1<<digit - 1)
			dst[c[d]] = e
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
	for lo := 0; lo < len(a); {
		hi := lo + 1
		for hi < len(a) && a[hi].key == a[lo].key {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(a[lo:hi], compareBandEnts)
		}
		lo = hi
	}
	return tmp
}

func compareBandEnts(a, b bandEnt) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.pos, b.pos)
}
