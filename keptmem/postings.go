package keptmem

import (
	mathbits "math/bits"

	"github.com/neardup/neardup/simhash"
)

// postings maps 64-bit keys to document slots: a hash table of buckets, each
// a short slice of (the top 32 bits of the mixed key, slot). The bucket is
// the top bits of the mixed key, so an entry holds what growing needs. A
// lookup may return slots of other keys that share those 32 bits (about one
// entry in 2^(32-b) of a bucket of a table of 2^b buckets); callers check
// what they need to.
//
// The table doubles incrementally: growing allocates the new buckets and
// each later add splits a few old buckets into their two new ones, so no add
// moves the whole table (tens of millions of entries at a million
// documents, a second under the write lock). Until every old bucket is
// split, a key whose old bucket is not split yet lives there.
type postings struct {
	buckets [][]posting
	bits    uint8 // the table has 1<<bits buckets
	n       int
	// old holds the buckets before the last doubling while they are being
	// split: old[i] for i >= split is not split yet (nil when done).
	old   [][]posting
	split int
}

type posting struct{ key, slot uint32 }

// mixKey is the part of key that a posting keeps: the top 32 bits of the
// mixed key, whose top bits are its bucket.
func mixKey(key uint64) uint32 { return uint32(simhash.Mix64(key, 0) >> 32) }

// perBucket is the average bucket length at which the table doubles.
const perBucket = 16

// splitsPerAdd is the number of old buckets an add splits while the table
// grows: the doubling ends after len(old)/splitsPerAdd adds, long before the
// next one (8·len(old) adds later).
const splitsPerAdd = 2

func (p *postings) init(n int) {
	p.bits = uint8(min(30, max(4, mathbits.Len(uint(n/(perBucket/2))))))
	p.buckets = make([][]posting, 1<<p.bits)
	p.old, p.split = nil, 0
}

// bucket returns the bucket that holds mixed key h.
func (p *postings) bucket(h uint32) *[]posting {
	j := h >> (32 - p.bits)
	if p.old != nil && int(j>>1) >= p.split {
		return &p.old[j>>1]
	}
	return &p.buckets[j]
}

func (p *postings) add(key uint64, slot uint32) {
	if p.old != nil {
		p.splitSome(splitsPerAdd)
	} else if p.n >= perBucket*len(p.buckets) && p.bits < 30 {
		p.grow()
	}
	h := mixKey(key)
	b := p.bucket(h)
	*b = append(*b, posting{h, slot})
	p.n++
}

func (p *postings) find(dst []uint32, key uint64) []uint32 {
	h := mixKey(key)
	for _, e := range *p.bucket(h) {
		if e.key == h {
			dst = append(dst, e.slot)
		}
	}
	return dst
}

// findEach appends the slots of every key, as find does for each in turn.
// A match probes a few dozen buckets of a table of tens of megabytes, each
// a cache miss for its slice header and another for its entries: findEach
// reads the headers of a group of buckets first, then checks their first
// entries, then scans the rest, so that the misses of a group are in flight
// together rather than one after the other. The slots come in another order
// than find's, which callers do not rely on.
func (p *postings) findEach(dst []uint32, keys []uint32) []uint32 {
	const group = 32
	var (
		hs [group]uint32
		bs [group][]posting
	)
	for len(keys) > 0 {
		n := min(len(keys), group)
		for i, key := range keys[:n] {
			hs[i] = mixKey(uint64(key))
			bs[i] = *p.bucket(hs[i])
		}
		for i, b := range bs[:n] {
			if len(b) > 0 && b[0].key == hs[i] {
				dst = append(dst, b[0].slot)
			}
		}
		for i, b := range bs[:n] {
			if len(b) < 2 {
				continue
			}
			h := hs[i]
			for _, e := range b[1:] {
				if e.key == h {
					dst = append(dst, e.slot)
				}
			}
		}
		keys = keys[n:]
	}
	return dst
}

func (p *postings) remove(key uint64, slot uint32) {
	h := mixKey(key)
	b := p.bucket(h)
	for i, e := range *b {
		if e.key == h && e.slot == slot {
			last := len(*b) - 1
			(*b)[i] = (*b)[last]
			*b = (*b)[:last]
			if last == 0 {
				*b = nil
			}
			p.n--
			return
		}
	}
}

// grow doubles the buckets; the entries move to them by splitSome.
func (p *postings) grow() {
	p.old, p.split = p.buckets, 0
	p.bits++
	p.buckets = make([][]posting, 1<<p.bits)
}

// splitSome splits up to n old buckets into their new pair (an entry's new
// bucket is the next bit of its key below the old bucket's bits).
func (p *postings) splitSome(n int) {
	shift := 32 - p.bits
	for ; n > 0 && p.split < len(p.old); n-- {
		i := p.split
		b := p.old[i]
		var hi int
		for _, e := range b {
			hi += int(e.key>>shift) & 1
		}
		if lo := len(b) - hi; lo > 0 {
			p.buckets[2*i] = make([]posting, 0, lo)
		}
		if hi > 0 {
			p.buckets[2*i+1] = make([]posting, 0, hi)
		}
		for _, e := range b {
			j := e.key >> shift
			p.buckets[j] = append(p.buckets[j], e)
		}
		p.old[i] = nil
		p.split++
	}
	if p.split == len(p.old) {
		p.old, p.split = nil, 0
	}
}

// sortedPostings is a table's entries after a bulk load, sorted by bucket,
// ready to be installed (Loader.sortTables).
type sortedPostings struct {
	all      []posting   // sorted by bucket
	bits     uint8       // of the table
	buckets  [][]posting // the table's buckets: full slices of all
	oneByOne bool        // or the loader's entries are added one at a time
}

// slice sets the buckets of the sorted entries part, which holds whole
// buckets.
func (b *sortedPostings) slice(part []posting) {
	shift := 32 - b.bits
	for lo := 0; lo < len(part); {
		j := part[lo].key >> shift
		hi := lo + 1
		for hi < len(part) && part[hi].key>>shift == j {
			hi++
		}
		b.buckets[j] = part[lo:hi:hi]
		lo = hi
	}
}

// installBulk makes the table hold the entries sortTables sorted.
func (p *postings) installBulk(b sortedPostings) {
	p.bits, p.buckets, p.n = b.bits, b.buckets, len(b.all)
}

// sortGroup sorts a stably by the low bits bits of key>>shift, in passes of
// up to 11 bits, with spare (as long as a) for scratch; a ends sorted.
func sortGroup(a, spare []posting, bits uint, shift uint8) {
	const digit = 11
	passes := (int(bits) + digit - 1) / digit
	width := (bits + uint(passes) - 1) / uint(passes)
	mask := uint32(1)<<width - 1
	count := make([]int, 1<<width)
	src, dst := a, spare
	for i := range passes {
		sh := shift + uint8(uint(i)*width)
		clear(count)
		for _, e := range src {
			count[e.key>>sh&mask]++
		}
		sum := 0
		for d, m := range count {
			count[d] = sum
			sum += m
		}
		for _, e := range src {
			d := e.key >> sh & mask
			dst[count[d]] = e
			count[d]++
		}
		src, dst = dst, src
	}
	if len(src) > 0 && &src[0] != &a[0] {
		copy(a, src)
	}
}
