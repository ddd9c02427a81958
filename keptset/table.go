package keptset

import (
	"math/bits"
	"slices"
)

// slotBytes is the size of a slot in a part's tables: a part spans at most
// 1<<24 sequence numbers (maxSpan), so a slot (the seq less the part's base)
// fits in three bytes.
const (
	slotBytes = 3
	maxSpan   = 1 << (8 * slotBytes)
)

// A table maps 64-bit keys (already mixed: uniform bits) to slots, with no
// pointers: the keys' top bits pick a bucket (off[b] to off[b+1]), and the
// next 16 bits are kept as the entry's tag, sorted within the bucket. So an
// entry costs two bytes of tag, three of slot and an eighth of a byte of
// offsets (buckets of about 32 entries). A lookup returns the slots whose
// key agrees with the query's on bits+16 bits: the few others (about
// 32/65536 per lookup) are rejected when their record is read.
type table struct {
	bits uint8
	off  []uint32 // 1<<bits + 1 offsets into tag and slot
	tag  []uint16
	slot []byte // slotBytes per entry
	// ext holds, for merges only, the extBits key bits that follow each
	// entry's tag (its top bits; the others zero): a merged table has more
	// buckets than its sources, so its entries need key bits beyond the
	// sources' bucket and tag (merge.go). Lookups never read it.
	ext     []byte
	extBits uint8
}

// maxExtBits is the ext bits a table made from full keys keeps.
const maxExtBits = 8

// extOf is the ext byte of key h in a table of the given bucket bits: the
// 8 key bits after the tag.
func extOf(h uint64, bits uint8) byte { return byte(h >> (40 - bits)) }

// bucketOf returns h's bucket and tag in a table of 1<<bits buckets.
func bucketOf(h uint64, bits uint8) (uint64, uint16) {
	if bits == 0 {
		return 0, uint16(h >> 48)
	}
	return h >> (64 - bits), uint16(h >> (48 - bits))
}

// tableBits is the bucket bits of a table of n entries: about 32 a bucket,
// and minTableBits at least.
func tableBits(n int) uint8 {
	if n <= 32<<minTableBits {
		return minTableBits
	}
	return uint8(min(32, bits.Len(uint(n-1)/32)))
}

// known is the number of top bits of each key the table keeps: its bucket,
// its tag and its ext.
func (t *table) known() int { return int(t.bits) + 16 + int(t.extBits) }

// mergeKnownBits is the key bits a table must keep to be merged into one of
// the largest part (1<<24 seqs, up to 32 keys each: 24 bucket bits) with
// 16-bit tags. Tables of minTableBits buckets or more, and the tables
// merged from them, keep that many; a part that keeps fewer (made before
// minTableBits) is rebuilt from the store when the set is opened.
const mergeKnownBits = 24 + 16

// minTableBits is the fewest bucket bits of a table: a small table keeps as
// many key bits as a merge into a table of the largest part needs. A table
// knows bits+16+8 bits of each key (bucket, tag, ext), and a part of 1<<24
// seqs with up to 32 keys each has 24 bucket bits and needs 24+16. With
// fewer bits a small part (a Close writes the delta at any size) could
// never be merged into a large one, and stayed beside it for good. The
// cost is 256 KB of bucket offsets for a part of fewer than 87K documents.
const minTableBits = 16

func getSlot(b []byte, i int) uint32 {
	b = b[i*slotBytes : i*slotBytes+slotBytes]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
}

func putSlot(b []byte, i int, s uint32) {
	b = b[i*slotBytes : i*slotBytes+slotBytes]
	b[0], b[1], b[2] = byte(s), byte(s>>8), byte(s>>16)
}

// find appends to dst the slots of h's entries (and of the rare other keys
// that share its bucket and tag).
func (t *table) find(dst []uint32, h uint64) []uint32 {
	b, tag := bucketOf(h, t.bits)
	lo, hi := int(t.off[b]), int(t.off[b+1])
	tags := t.tag[lo:hi]
	i, _ := slices.BinarySearch(tags, tag)
	for ; i < len(tags) && tags[i] == tag; i++ {
		dst = append(dst, getSlot(t.slot, lo+i))
	}
	return dst
}

// findAll appends to dst the slots of the entries of every key of hs, as
// find does for each: first the buckets' bounds of all the keys, then their
// tags, so that the cache misses of different keys overlap instead of
// waiting on one another.
func (t *table) findAll(dst []uint32, hs []uint64) []uint32 {
	var bounds [64][2]uint32
	n := min(len(hs), len(bounds))
	for i, h := range hs[:n] {
		b, _ := bucketOf(h, t.bits)
		bounds[i] = [2]uint32{t.off[b], t.off[b+1]}
	}
	// Touch each bucket's first and last tag before searching any: the
	// binary searches' branches would otherwise take the buckets' cache
	// misses one after the other (they were 60% of findAll at 30M).
	var touch uint16
	for _, bd := range bounds[:n] {
		if bd[1] > bd[0] {
			touch ^= t.tag[bd[0]] ^ t.tag[bd[1]-1]
		}
	}
	keep(touch)
	// The entries' positions first, then their slots: the slots are another
	// array, a miss each, and read in a loop of their own the misses of
	// different keys overlap (the binary searches' branches between them
	// kept them apart).
	for i, h := range hs[:n] {
		_, tag := bucketOf(h, t.bits)
		lo, hi := int(bounds[i][0]), int(bounds[i][1])
		tags := t.tag[lo:hi]
		j, _ := slices.BinarySearch(tags, tag)
		e := j
		for e < len(tags) && tags[e] == tag {
			e++
		}
		bounds[i] = [2]uint32{uint32(lo + j), uint32(lo + e)}
	}
	for _, bd := range bounds[:n] {
		for p := bd[0]; p < bd[1]; p++ {
			dst = append(dst, getSlot(t.slot, int(p)))
		}
	}
	for _, h := range hs[n:] {
		dst = t.find(dst, h)
	}
	return dst
}

// keep takes findAll's touches of the tags, so that they are not compiled
// away as unused loads.
//
//go:noinline
func keep(uint16) {}

// entries is the number of entries.
func (t *table) entries() int { return len(t.tag) }

// buildTable makes the table of the entries (keys[i], slots[i]). It reorders
// neither input.
func buildTable(keys []uint64, slots []uint32) table {
	n := len(keys)
	t := table{bits: tableBits(n)}
	t.off = make([]uint32, (1<<t.bits)+1)
	for _, h := range keys {
		b, _ := bucketOf(h, t.bits)
		t.off[b+1]++
	}
	for i := 1; i < len(t.off); i++ {
		t.off[i] += t.off[i-1]
	}
	t.tag = make([]uint16, n)
	t.slot = make([]byte, n*slotBytes)
	t.ext, t.extBits = make([]byte, n), maxExtBits
	// Place each entry at the next free position of its bucket (next holds
	// them; off is left as the buckets' starts).
	next := make([]uint32, 1<<t.bits)
	copy(next, t.off)
	for i, h := range keys {
		b, tag := bucketOf(h, t.bits)
		p := next[b]
		next[b]++
		t.tag[p] = tag
		putSlot(t.slot, int(p), slots[i])
		t.ext[p] = extOf(h, t.bits)
	}
	// Sort each bucket by (tag, slot): insertion sort, buckets are short.
	for b := range len(t.off) - 1 {
		lo, hi := int(t.off[b]), int(t.off[b+1])
		for i := lo + 1; i < hi; i++ {
			tg, s, x := t.tag[i], getSlot(t.slot, i), t.ext[i]
			j := i
			for j > lo && (t.tag[j-1] > tg || t.tag[j-1] == tg && getSlot(t.slot, j-1) > s) {
				t.tag[j] = t.tag[j-1]
				putSlot(t.slot, j, getSlot(t.slot, j-1))
				t.ext[j] = t.ext[j-1]
				j--
			}
			t.tag[j] = tg
			putSlot(t.slot, j, s)
			t.ext[j] = x
		}
	}
	return t
}

// fpTables is the number of block tables of a part's fingerprint index: the
// 64 bits in four blocks of 16, so by the pigeonhole principle a fingerprint
// within 3 bits of the query agrees with it exactly on at least one block
// (Manku, Jain and Das Sarma, WWW 2007). Each table lists the part's slots
// by the value of its block; the candidates' fingerprints are read from the
// fingerprint column. Queries at k > 3 scan the column.
const (
	fpTables   = 4
	fpBlock    = 16
	fpMaxK     = fpTables - 1
	fpBuckets  = 1 << fpBlock
	fpMaskBits = 1<<fpBlock - 1
)

// firstTable reports whether t is the first block table in which g's block
// equals fp's: a fingerprint found through several tables is reported from
// that one only.
func firstTable(g, fp uint64, t int) bool {
	for u := range t {
		if fpBlockOf(g, u) == fpBlockOf(fp, u) {
			return false
		}
	}
	return true
}

// fpIndex is a part's fingerprint index.
type fpIndex struct {
	off  [fpTables][]uint32 // fpBuckets+1 offsets each
	slot [fpTables][]byte
}

func fpBlockOf(fp uint64, t int) uint64 {
	return fp >> (fpBlock * (fpTables - 1 - t)) & fpMaskBits
}

// buildFPIndex indexes the fingerprints fps[s] of the slots s where has[s].
func buildFPIndex(fps []uint64, has func(s int) bool, n int) fpIndex {
	var x fpIndex
	for t := range fpTables {
		off := make([]uint32, fpBuckets+1)
		for s, fp := range fps {
			if has(s) {
				off[fpBlockOf(fp, t)+1]++
			}
		}
		for i := 1; i < len(off); i++ {
			off[i] += off[i-1]
		}
		slot := make([]byte, n*slotBytes)
		next := slices.Clone(off[:fpBuckets])
		for s, fp := range fps {
			if has(s) {
				b := fpBlockOf(fp, t)
				putSlot(slot, int(next[b]), uint32(s))
				next[b]++
			}
		}
		x.off[t], x.slot[t] = off, slot
	}
	return x
}
