package dedup

import (
	"fmt"
	"unsafe"

	"github.com/neardup/neardup/simhash"
)

// Pointer-free columns for what a run keeps per document. At 10^7-10^9
// documents a Go map or a []string costs tens of bytes of headers per entry
// and a garbage collector that walks every one of them; these hold the same
// in a few flat arrays.

// strArena holds strings end to end in chunks that never move, so a string
// returned by get stays valid (it points into its chunk, which is never
// reallocated), and the collector sees one pointer a chunk, not one a string.
// A string is recorded in 8 bytes: chunk (24 bits), offset (20) and length
// (20), so a string is shorter than 1 MiB. Not safe for concurrent use while
// adding; get is safe once adding is over.
type strArena struct {
	chunks [][]byte
	refs   []uint64
}

const (
	arenaChunk  = 1 << 20
	maxArenaStr = arenaChunk - 1
)

// add appends s, which must be shorter than 1 MiB.
func (a *strArena) add(s string) error {
	if len(s) > maxArenaStr {
		return fmt.Errorf("dedup: an id of %d bytes (at most %d)", len(s), maxArenaStr)
	}
	n := len(a.chunks)
	if n == 0 || len(a.chunks[n-1])+len(s) > arenaChunk {
		if n >= 1<<24 {
			return fmt.Errorf("dedup: more than %d bytes of ids", uint64(1<<24)*arenaChunk)
		}
		a.chunks = append(a.chunks, make([]byte, 0, arenaChunk))
		n++
	}
	c := &a.chunks[n-1]
	off := len(*c)
	*c = append(*c, s...)
	a.refs = append(a.refs, uint64(n-1)<<40|uint64(off)<<20|uint64(len(s)))
	return nil
}

// get returns string i.
func (a *strArena) get(i int) string {
	v := a.refs[i]
	l := int(v & maxArenaStr)
	if l == 0 {
		return ""
	}
	c := a.chunks[v>>40]
	return unsafe.String(&c[v>>20&maxArenaStr], l)
}

// len returns the number of strings.
func (a *strArena) len() int { return len(a.refs) }

// u64Table is an open-addressing hash table (linear probing) from 64-bit
// keys to document numbers, 12 bytes a slot at a load of at most 3/4. A key
// may be inserted more than once; each looks up all its values. Not safe for
// concurrent use.
type u64Table struct {
	keys []uint64
	vals []int32 // value + 1; 0 marks an empty slot
	n    int
}

func (t *u64Table) slot(k uint64) uint64 {
	return simhash.Mix64(k, 0) & uint64(len(t.keys)-1)
}

// insert adds (k, v).
func (t *u64Table) insert(k uint64, v int32) {
	if 4*(t.n+1) > 3*len(t.keys) {
		t.grow()
	}
	i := t.slot(k)
	for t.vals[i] != 0 {
		i = (i + 1) & uint64(len(t.keys)-1)
	}
	t.keys[i], t.vals[i] = k, v+1
	t.n++
}

// each calls fn with every value of k, in no particular order, until fn
// returns false.
func (t *u64Table) each(k uint64, fn func(v int32) bool) {
	if len(t.keys) == 0 {
		return
	}
	for i := t.slot(k); t.vals[i] != 0; i = (i + 1) & uint64(len(t.keys)-1) {
		if t.keys[i] == k && !fn(t.vals[i]-1) {
			return
		}
	}
}

// get returns a value of k: the only one for a table where each key is
// inserted once (as the twin lookup does).
func (t *u64Table) get(k uint64) (v int32, ok bool) {
	t.each(k, func(x int32) bool {
		v, ok = x, true
		return false
	})
	return v, ok
}

func (t *u64Table) grow() {
	keys, vals := t.keys, t.vals
	size := max(1024, 2*len(keys))
	t.keys, t.vals, t.n = make([]uint64, size), make([]int32, size), 0
	for i, v := range vals {
		if v != 0 {
			t.insert(keys[i], v-1)
		}
	}
}

// release frees the table.
func (t *u64Table) release() { *t = u64Table{} }

// chunked is a column of fixed-size values in chunks of chunkLen that never
// move: it grows without the copy of a doubling (a slice of 10^8 prefilters
// would copy 4.8 GB at its last one, and hold old and new at once). Not safe
// for concurrent use while appending; at is safe once appending is over.
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

// at returns element i.
func (c *chunked[T]) at(i int) *T { return &c.chunks[i/chunkLen][i%chunkLen] }

func (c *chunked[T]) len() int { return c.n }
