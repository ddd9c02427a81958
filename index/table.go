package index

import (
	"encoding/binary"
	"math/bits"

	"github.com/neardup/neardup/internal/hugepage"
)

// A table is one sorted copy of a segment's fingerprints under one table
// permutation, packed to save memory. The top bb bits of every value are
// implied by a bucket-offset array (entries of bucket b are
// starts[b]..starts[b+1]-1), so only the low 64-bb bits are stored, in w =
// (64-bb)/8 bytes each, little-endian, back to back. With 16 bucket bits a
// fingerprint costs 6 bytes per table instead of 8, and a query jumps
// straight to its key's bucket, then binary-searches the rest of the key
// inside that short run (about n>>bb entries).
//
// A table is immutable once built and safe for concurrent readers.
type table struct {
	bb     uint     // bucket bits: 0, 8, 16 or 24
	w      int      // bytes per entry: (64-bb)/8
	low    uint64   // mask of the stored low bits
	starts []uint32 // 1<<bb + 1 offsets
	data   []byte   // n*w bytes plus 8 bytes of padding for unaligned loads
	n      int
}

// bucketBits picks the bucket bits for n entries: the largest of 0, 8, 16 and
// 24 whose offset array costs at most one byte per entry (4 bytes per bucket,
// one bucket per 4 entries or more).
func bucketBits(n int) uint {
	if testBucketBits != 0 {
		return testBucketBits
	}
	switch {
	case n >= 4<<24:
		return 24
	case n >= 4<<16:
		return 16
	case n >= 4<<8:
		return 8
	}
	return 0
}

// testBucketBits, when not zero, overrides bucketBits so that tests can use
// the 24-bit buckets of 64 million entries on a small index.
var testBucketBits uint

// newTable packs values sorted by at least their top bb bits (fully sorted
// for a primary table, by key for the others; see radixSortTop).
func newTable(sorted []uint64) *table {
	n := len(sorted)
	bb := bucketBits(n)
	t := &table{bb: bb, w: int(64-bb) / 8, n: n}
	t.low = ^uint64(0) >> bb
	t.starts = make([]uint32, (1<<bb)+1)
	t.data = make([]byte, n*t.w+8)
	hugepage.Advise(t.data) // tens of MB at millions: see internal/hugepage
	b := uint64(0)
	for i, v := range sorted {
		if bb > 0 {
			for hb := v >> (64 - bb); b < hb; b++ {
				t.starts[b+1] = uint32(i)
			}
		}
		// An 8-byte store; the bytes past w are overwritten by the next
		// entry or land in the padding.
		binary.LittleEndian.PutUint64(t.data[i*t.w:], v)
	}
	for ; b < 1<<bb; b++ {
		t.starts[b+1] = uint32(n)
	}
	return t
}

// at returns the low bits of entry i.
func (t *table) at(i int) uint64 {
	return binary.LittleEndian.Uint64(t.data[i*t.w:]) & t.low
}

// value returns entry i in full, given its bucket.
func (t *table) value(b uint64, i int) uint64 {
	if t.bb == 0 {
		return t.at(i)
	}
	return b<<(64-t.bb) | t.at(i)
}

// search returns the first index in [lo, hi) whose low bits are >= x.
func (t *table) search(lo, hi int, x uint64) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.at(m) < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// scan appends to dst every entry within k bits of the permuted query y that
// shares y's leading kb bits (the table key), as full permuted values.
func (t *table) scan(dst []uint64, y uint64, kb uint, k int) []uint64 {
	if t.n == 0 {
		return dst
	}
	data, w, low, bb := t.data, t.w, t.low, t.bb
	ylow := y & low
	if kb >= bb {
		// One bucket; the key's remaining kb-bb bits select a run inside it.
		var b, hb uint64
		if bb > 0 {
			b = y >> (64 - bb)
			hb = b << (64 - bb)
		}
		lo, hi := int(t.starts[b]), int(t.starts[b+1])
		if rest := kb - bb; rest > 0 {
			keyLow := ^uint64(0) << (64 - bb - rest) & low
			first := y & keyLow
			last := first | (low &^ keyLow)
			lo = t.search(lo, hi, first)
			if last != low {
				hi = t.search(lo, hi, last+1)
			}
		}
		for i := lo; i < hi; i++ {
			v := binary.LittleEndian.Uint64(data[i*w:]) & low
			if bits.OnesCount64(v^ylow) <= k {
				dst = append(dst, hb|v)
			}
		}
		return dst
	}
	// The key is shorter than the buckets: it spans 1<<(bb-kb) whole
	// buckets. A bucket whose own bits already differ from y's in more than
	// k places is skipped whole: at kb=16, bb=24 and k=3 that is 163 of the
	// 256 buckets.
	b0 := uint64(0)
	if kb > 0 {
		b0 = y >> (64 - kb) << (bb - kb)
	}
	b1 := b0 + 1<<(bb-kb)
	yb := y >> (64 - bb)
	for b := b0; b < b1; b++ {
		kk := k - bits.OnesCount64(b^yb)
		if kk < 0 {
			continue
		}
		hb := b << (64 - bb)
		for i, e := int(t.starts[b]), int(t.starts[b+1]); i < e; i++ {
			v := binary.LittleEndian.Uint64(data[i*w:]) & low
			if bits.OnesCount64(v^ylow) <= kk {
				dst = append(dst, hb|v)
			}
		}
	}
	return dst
}

// values appends every entry in order.
func (t *table) values(dst []uint64) []uint64 {
	if t.bb == 0 {
		for i := range t.n {
			dst = append(dst, t.at(i))
		}
		return dst
	}
	for b := range uint64(1) << t.bb {
		hb := b << (64 - t.bb)
		for i, e := int(t.starts[b]), int(t.starts[b+1]); i < e; i++ {
			dst = append(dst, hb|t.at(i))
		}
	}
	return dst
}

// find returns the range of entries equal to v.
func (t *table) find(v uint64) (lo, hi int) {
	b := uint64(0)
	if t.bb > 0 {
		b = v >> (64 - t.bb)
	}
	s, e := int(t.starts[b]), int(t.starts[b+1])
	x := v & t.low
	lo = t.search(s, e, x)
	hi = lo
	for hi < e && t.at(hi) == x {
		hi++
	}
	return lo, hi
}

// bytes returns the memory the table holds.
func (t *table) bytes() int64 { return int64(len(t.data)) + 4*int64(len(t.starts)) }
