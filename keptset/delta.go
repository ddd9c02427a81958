package keptset

import (
	"math/bits"

	"github.com/neardup/neardup/rule"
)

// preWords is the words of a prefilter in a prefilter column.
const preWords = len(rule.Prefilter{})

// prefilterAt returns the prefilter of slot s in a column of preWords words
// a slot, or nil when the column is absent (a part of format 2 or older).
func prefilterAt(col []uint64, s uint32) *rule.Prefilter {
	if len(col) == 0 {
		return nil
	}
	return (*rule.Prefilter)(col[preWords*int(s) : preWords*(int(s)+1)])
}

// A builder collects documents in ascending seq order for one part: its
// entries (mixed key, slot) and fingerprint column, ready to be sorted into
// tables by build. The set's delta is a builder with a hash index over its
// entries, so the documents added since the last part are found at once and
// become a part without being read again.
type builder struct {
	base    uint64
	keys    []uint64 // entry keys
	slots   []uint32 // entry slots
	fps     []uint64 // by slot
	pre     []uint64 // by slot, preWords each: the prefilters (zero: unknown)
	present []uint64 // bitmap of the slots that hold a document
	wide    []uint64 // bitmap of the slots found by fingerprint distance (Set.wideDoc)
	docs    uint32
	ids     []byte   // the documents' ids, end to end
	idEnd   []uint64 // by slot: the end of its id in ids
}

func newBuilder(base uint64) *builder { return &builder{base: base} }

// span is the seqs the builder covers so far.
func (b *builder) span() uint32 { return uint32(len(b.fps)) }

// add adds the document seq (>= base + span) with its id, keys,
// fingerprint and prefilter; wide says it is found by fingerprint distance.
func (b *builder) add(seq uint64, id string, keys []uint64, fp uint64, pre *rule.Prefilter, wide bool) {
	s := uint32(seq - b.base)
	for uint32(len(b.fps)) <= s {
		b.fps = append(b.fps, 0)
		b.pre = append(b.pre, make([]uint64, preWords)...)
		b.idEnd = append(b.idEnd, uint64(len(b.ids)))
	}
	copy(b.pre[preWords*int(s):], pre[:])
	b.ids = append(b.ids, id...)
	b.idEnd[s] = uint64(len(b.ids))
	for len(b.present) <= int(s/64) {
		b.present = append(b.present, 0)
		b.wide = append(b.wide, 0)
	}
	b.fps[s] = fp
	b.present[s/64] |= 1 << (s % 64)
	if wide {
		b.wide[s/64] |= 1 << (s % 64)
	}
	b.docs++
	for _, k := range keys {
		b.keys = append(b.keys, k)
		b.slots = append(b.slots, s)
	}
}

// id returns the id of slot s.
func (b *builder) id(s uint32) string {
	start := uint64(0)
	if s > 0 {
		start = b.idEnd[s-1]
	}
	return string(b.ids[start:b.idEnd[s]])
}

func (b *builder) has(s uint32) bool {
	return int(s/64) < len(b.present) && b.present[s/64]&(1<<(s%64)) != 0
}

// isWide reports whether slot s holds a document found by fingerprint
// distance.
func (b *builder) isWide(s uint32) bool {
	return int(s/64) < len(b.wide) && b.wide[s/64]&(1<<(s%64)) != 0
}

// build sorts the builder's entries into a part, leaving out the slots
// dead reports.
func (b *builder) build(dead func(s uint32) bool) *part {
	keys, slots := b.keys, b.slots
	docs := b.docs
	has := b.has
	if dead != nil {
		keys, slots = nil, nil
		for i, s := range b.slots {
			if !dead(s) {
				keys = append(keys, b.keys[i])
				slots = append(slots, s)
			}
		}
		docs = 0
		for s := range b.span() {
			if b.has(s) && !dead(s) {
				docs++
			}
		}
		has = func(s uint32) bool { return b.has(s) && !dead(s) }
	}
	fps := make([]uint64, len(b.fps))
	pre := make([]uint64, len(b.pre))
	live := make([]uint64, (len(b.fps)+63)/64)
	wide := make([]uint64, len(live))
	idoff := make([]uint64, len(b.fps)+1)
	var ids []byte
	for s := range fps {
		if has(uint32(s)) {
			fps[s] = b.fps[s]
			copy(pre[preWords*s:preWords*(s+1)], b.pre[preWords*s:])
			live[s/64] |= 1 << (s % 64)
			if b.isWide(uint32(s)) {
				wide[s/64] |= 1 << (s % 64)
			}
			ids = append(ids, b.id(uint32(s))...)
		}
		idoff[s+1] = uint64(len(ids))
	}
	return &part{
		base:  b.base,
		span:  b.span(),
		docs:  docs,
		keys:  buildTable(keys, slots),
		fps:   fps,
		pre:   pre,
		live:  live,
		wide:  wide,
		fpx:   buildFPIndex(fps, func(s int) bool { return has(uint32(s)) }, int(docs)),
		idoff: idoff,
		ids:   ids,
	}
}

// delta is a builder with an open-addressing index over its entries: cells
// hold entry numbers + 1, probed linearly from the key's home cell, kept at
// most half full. It holds the documents added since the last part.
type delta struct {
	builder
	cells []uint32
	dead  []uint64 // bitmap of removed slots
	// The fingerprint index: for each block table, the last slot+1 with
	// each block value (fpHead), and each slot's previous one (fpNext).
	fpHead [fpTables][]uint32
	fpNext [fpTables][]uint32
}

func newDelta(base uint64) *delta {
	d := &delta{builder: builder{base: base}, cells: make([]uint32, 1<<12)}
	for t := range fpTables {
		d.fpHead[t] = make([]uint32, fpBuckets)
	}
	return d
}

// indexFP puts slot s (fingerprint fp) in the fingerprint index.
func (d *delta) indexFP(s uint32, fp uint64) {
	for t := range fpTables {
		for uint32(len(d.fpNext[t])) <= s {
			d.fpNext[t] = append(d.fpNext[t], 0)
		}
		b := fpBlockOf(fp, t)
		d.fpNext[t][s] = d.fpHead[t][b]
		d.fpHead[t][b] = s + 1
	}
}

func (d *delta) add(seq uint64, id string, keys []uint64, fp uint64, pre *rule.Prefilter, wide bool) {
	n := len(d.builder.keys)
	d.builder.add(seq, id, keys, fp, pre, wide)
	d.indexFP(uint32(seq-d.base), fp)
	if 2*len(d.builder.keys) > len(d.cells) {
		d.rehash(2 * len(d.cells))
		return
	}
	for e := n; e < len(d.builder.keys); e++ {
		d.place(uint32(e))
	}
}

func (d *delta) place(e uint32) {
	mask := uint64(len(d.cells) - 1)
	i := d.builder.keys[e] & mask
	for d.cells[i] != 0 {
		i = (i + 1) & mask
	}
	d.cells[i] = e + 1
}

func (d *delta) rehash(size int) {
	d.cells = make([]uint32, size)
	for e := range d.builder.keys {
		d.place(uint32(e))
	}
}

// find appends the slots of the entries of key h.
func (d *delta) find(dst []uint32, h uint64) []uint32 {
	mask := uint64(len(d.cells) - 1)
	for i := h & mask; d.cells[i] != 0; i = (i + 1) & mask {
		if e := d.cells[i] - 1; d.builder.keys[e] == h {
			dst = append(dst, d.builder.slots[e])
		}
	}
	return dst
}

func (d *delta) isDead(s uint32) bool {
	return int(s/64) < len(d.dead) && d.dead[s/64]&(1<<(s%64)) != 0
}

func (d *delta) kill(s uint32) {
	for len(d.dead) <= int(s/64) {
		d.dead = append(d.dead, 0)
	}
	d.dead[s/64] |= 1 << (s % 64)
}

// fingerprint calls fn with the live slots within k bits of fp: through the
// block tables for k <= 3 (each slot from the first table its block agrees
// in), by a scan beyond.
func (d *delta) fingerprint(fp uint64, k int, fn func(slot uint32, dist int)) {
	live := func(s uint32) bool { return d.has(s) && !d.isDead(s) }
	if k > fpMaxK {
		for s, g := range d.fps {
			if dist := bits.OnesCount64(g ^ fp); dist <= k && live(uint32(s)) {
				fn(uint32(s), dist)
			}
		}
		return
	}
	for t := range fpTables {
		for e := d.fpHead[t][fpBlockOf(fp, t)]; e != 0; e = d.fpNext[t][e-1] {
			s := e - 1
			g := d.fps[s]
			dist := bits.OnesCount64(g ^ fp)
			if dist > k || !live(s) {
				continue
			}
			if firstTable(g, fp, t) {
				fn(s, dist)
			}
		}
	}
}

// bytes is the memory the delta holds.
func (d *delta) bytes() int64 {
	n := int64(cap(d.builder.keys)*8 + cap(d.builder.slots)*4 + cap(d.fps)*8 + cap(d.pre)*8 + cap(d.cells)*4 +
		cap(d.present)*8 + cap(d.wide)*8 + cap(d.dead)*8 + cap(d.ids) + cap(d.idEnd)*8)
	for t := range fpTables {
		n += int64(cap(d.fpHead[t])*4 + cap(d.fpNext[t])*4)
	}
	return n
}
