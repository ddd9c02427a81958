package dedup

import (
	"math/bits"

	"github.com/neardup/neardup/simhash"
)

// Pointer-free columns for what a run keeps per document. At 10^7-10^9
// documents a Go map or a []string costs tens of bytes of headers per entry
// and a garbage collector that walks every one of them; these hold the same
// in a few flat arrays.

// chunked is a column of fixed-size values in chunks of chunkLen that never
// move: it grows without the copy of a doubling (a slice of 10^8 prefilters
// would copy 6.4 GB at its last one, and hold old and new at once). Not safe
// for concurrent use while appending; get and ref are safe once appending
// is over.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const chunkLen = 1 << 16

func (c *chunked[T]) append(v T) {
	if c.n%chunkLen == 0 {
		c.chunks = append(c.chunks, make([]T, 0, chunkLen))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
}

// get returns element i.
func (c *chunked[T]) get(i int) T { return c.chunks[i/chunkLen][i%chunkLen] }

// ref returns a pointer to element i.
func (c *chunked[T]) ref(i int) *T { return &c.chunks[i/chunkLen][i%chunkLen] }

func (c *chunked[T]) len() int { return c.n }

// release frees the column.
func (c *chunked[T]) release() { *c = chunked[T]{} }

// hashSet is an open-addressing set of 64-bit hashes (linear probing), 8
// bytes a slot at a load of at most 3/4: the duplicate-id check's, which
// keeps no document numbers (the ids are in the id store, read back in the
// rare case of a hit). Not safe for concurrent use.
type hashSet struct {
	slots []uint64 // 0 marks an empty slot; a hash of 0 is stored as 1
	n     int
}

// add inserts h and reports whether it was there already.
func (t *hashSet) add(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := simhash.Mix64(h, 0) & mask; ; i = (i + 1) & mask {
		switch t.slots[i] {
		case 0:
			t.slots[i] = h
			t.n++
			return false
		case h:
			return true
		}
	}
}

func (t *hashSet) grow() {
	old := t.slots
	t.slots, t.n = make([]uint64, max(1024, 2*len(old))), 0
	for _, h := range old {
		if h != 0 {
			t.add(h)
		}
	}
}

func (t *hashSet) release() { *t = hashSet{} }

// docTable is an open-addressing table of document numbers keyed by a
// 64-bit value that a column holds (key(doc)), 4 bytes a slot at a load of
// at most 3/4: the twin lookup's, keyed by the token-sequence hashes of the
// exact column. Each key is inserted once. Not safe for concurrent use.
type docTable struct {
	slots []int32 // document + 1; 0 marks an empty slot
	n     int
}

// get returns the document whose key is k.
func (t *docTable) get(k uint64, key func(int32) uint64) (int32, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := simhash.Mix64(k, 0) & mask; t.slots[i] != 0; i = (i + 1) & mask {
		if d := t.slots[i] - 1; key(d) == k {
			return d, true
		}
	}
	return 0, false
}

// insert adds document d, whose key is k.
func (t *docTable) insert(k uint64, d int32, key func(int32) uint64) {
	if 4*(t.n+1) > 3*len(t.slots) {
		old := t.slots
		t.slots, t.n = make([]int32, max(1024, 2*len(old))), 0
		for _, v := range old {
			if v != 0 {
				t.insert(key(v-1), v-1, key)
			}
		}
	}
	mask := uint64(len(t.slots) - 1)
	i := simhash.Mix64(k, 0) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = d + 1
	t.n++
}

func (t *docTable) release() { *t = docTable{} }

// memberIndex numbers a subset of the documents densely, in document order:
// the documents whose verification data the candidate stage needs (those
// with a candidate), so that their prefilters and shingle sets can be held
// for them alone. A bitmap and, per 64 documents, the members before them:
// 1.5 bits a document. Safe for concurrent use once sealed.
type memberIndex struct {
	bits   []uint64
	before []uint32
	n      int
}

func newMemberIndex(docs int) *memberIndex {
	return &memberIndex{bits: make([]uint64, (docs+63)/64)}
}

// add makes document i a member (before seal).
func (m *memberIndex) add(i int) { m.bits[i/64] |= 1 << (i % 64) }

// seal numbers the members.
func (m *memberIndex) seal() {
	m.before = make([]uint32, len(m.bits))
	n := 0
	for w, b := range m.bits {
		m.before[w] = uint32(n)
		n += bits.OnesCount64(b)
	}
	m.n = n
}

// rank returns document i's number among the members, and whether it is one.
func (m *memberIndex) rank(i int) (int, bool) {
	w, b := m.bits[i/64], uint64(1)<<(i%64)
	if w&b == 0 {
		return 0, false
	}
	return int(m.before[i/64]) + bits.OnesCount64(w&(b-1)), true
}

// len returns the number of members.
func (m *memberIndex) len() int { return m.n }

// each calls fn with every member in document order and its rank.
func (m *memberIndex) each(fn func(i, rank int) error) error {
	r := 0
	for w, b := range m.bits {
		for b != 0 {
			i := w*64 + bits.TrailingZeros64(b)
			if err := fn(i, r); err != nil {
				return err
			}
			r++
			b &= b - 1
		}
	}
	return nil
}
