package index

import (
	"math/bits"
)

// An efSeq is a non-decreasing sequence of n 64-bit values in the Elias-Fano
// representation (Elias 1974; Fano 1971; as used for inverted indexes by
// Vigna, "Quasi-succinct indices", WSDM 2013). Each value v is split into its
// high h = ceil(log2 n) bits and its low l = 64-h bits. The low bits are
// packed back to back, l bits a value; the high parts are stored in unary in
// a bit vector of n + 2^h bits: value i sets bit (v>>l) + i, so the zeros
// before a set bit count its high part. That is l + ~2 bits a value, within
// 0.6 bits of the information bound log2 C(2^64, n)/n ~ 64 - log2 n + 1.44.
//
// This is the compression of section 3.1.2 of Manku, Jain and Das Sarma: the
// values of a sorted table share their top bits, and Elias-Fano stores those
// shared bits once per bucket (a zero) instead of once per entry.
//
// samples[j] is the position in hi of the first bit of bucket j<<sampleShift
// (the bit after the (j<<sampleShift)-th zero, counting from one), so that a
// query jumps to a run of buckets without counting the zeros before it.
//
// The slices may point into a read-only memory-mapped file. An efSeq is
// immutable and safe for concurrent readers; every read is bounds-checked,
// so a damaged file gives wrong values, never a panic (the checks at open
// catch most damage first: see openFrozen).
type efSeq struct {
	n       uint64
	h, l    uint     // high and low bits per value, h+l = 64
	hi      []uint64 // n + 2^h bits, plus a zero word of padding
	lo      []uint64 // n*l bits, plus a zero word of padding
	samples []uint64 // 2^h>>sampleShift + 1 positions in hi
}

// sampleShift sets the spacing of the bucket samples: one 8-byte sample per
// 256 buckets, about 0.03 bits a value.
const sampleShift = 8

// efHighBits returns h for n values: ceil(log2 n), at least 1, so that the
// high bit vector holds between 2n and 3n bits.
func efHighBits(n uint64) uint {
	if n <= 2 {
		return 1
	}
	return uint(bits.Len64(n - 1))
}

// efWords returns the lengths in words of hi, lo and samples for n values.
func efWords(n uint64) (hi, lo, samples uint64) {
	h := efHighBits(n)
	l := 64 - uint64(h)
	return (n+1<<h+63)/64 + 1, (n*l+63)/64 + 1, 1<<h>>sampleShift + 1
}

// efBits returns the bits per value of a sequence of n values, samples
// included.
func efBits(n uint64) float64 {
	hi, lo, s := efWords(n)
	return float64(64*(hi+lo+s)) / float64(max(n, 1))
}

// A wordSink takes the words of a column in order: a slice in memory, or a
// section of a snapshot being written.
type wordSink interface{ put(w uint64) }

// A sliceSink fills a slice of a known length.
type sliceSink struct {
	w []uint64
	i int
}

func (s *sliceSink) put(w uint64) { s.w[s.i] = w; s.i++ }

// A bitPacker appends values of a fixed width to a sink, back to back from
// the low bits of each word, and pads the column to words words.
type bitPacker struct {
	sink  wordSink
	width uint
	acc   uint64
	used  uint // bits of acc filled
	words uint64
	out   uint64 // words put
}

func (b *bitPacker) add(v uint64) {
	if b.width == 0 {
		return
	}
	b.acc |= v << b.used
	b.used += b.width
	if b.used >= 64 {
		b.sink.put(b.acc)
		b.out++
		b.used -= 64
		b.acc = 0
		if b.used > 0 {
			b.acc = v >> (b.width - b.used)
		}
	}
}

// finish puts the last partial word and the padding.
func (b *bitPacker) finish() {
	if b.used > 0 {
		b.sink.put(b.acc)
		b.out++
		b.acc, b.used = 0, 0
	}
	for ; b.out < b.words; b.out++ {
		b.sink.put(0)
	}
}

// An efWriter appends values in order to a sequence of n values, putting
// the high bits, the low bits and the samples to their sinks as it goes
// (each column in order), so that a table can be written to its file
// without being held in memory.
type efWriter struct {
	n, i    uint64 // values in all, values added
	h, l    uint
	last    uint64
	hi      wordSink
	hiWord  uint64 // the word of hi being filled
	hiIndex uint64 // its index
	hiWords uint64
	lo      bitPacker
	samples wordSink
	nextS   uint64 // the next sample to put
	sWords  uint64
}

func newEFWriter(n uint64, hi, lo, samples wordSink) *efWriter {
	hw, lw, sw := efWords(n)
	h := efHighBits(n)
	return &efWriter{
		n: n, h: h, l: 64 - h, hi: hi, hiWords: hw, samples: samples, sWords: sw,
		lo: bitPacker{sink: lo, width: 64 - h, words: lw},
	}
}

// newEFSeqWriter returns a writer into a new in-memory sequence, which
// finishSeq returns.
func newEFSeqWriter(n uint64) (*efWriter, func() efSeq) {
	hw, lw, sw := efWords(n)
	hi, lo, sm := &sliceSink{w: make([]uint64, hw)}, &sliceSink{w: make([]uint64, lw)}, &sliceSink{w: make([]uint64, sw)}
	w := newEFWriter(n, hi, lo, sm)
	return w, func() efSeq {
		w.finish()
		return efSeq{n: n, h: w.h, l: w.l, hi: hi.w, lo: lo.w, samples: sm.w}
	}
}

// add appends v, which must not be less than the previous value.
func (w *efWriter) add(v uint64) {
	if w.i >= w.n || v < w.last {
		panic("index: efWriter: too many values or out of order")
	}
	w.last = v
	high := v >> w.l
	// Bucket b starts at bit b + (the values before it): every sampled
	// bucket up to this value's starts before it.
	for w.nextS < w.sWords && w.nextS<<sampleShift <= high {
		w.samples.put(w.nextS<<sampleShift + w.i)
		w.nextS++
	}
	p := high + w.i
	for p/64 > w.hiIndex {
		w.hi.put(w.hiWord)
		w.hiWord = 0
		w.hiIndex++
	}
	w.hiWord |= 1 << (p % 64)
	w.lo.add(v & (^uint64(0) >> w.h))
	w.i++
}

// finish puts the rest of each column; every value must have been added.
func (w *efWriter) finish() {
	if w.i != w.n {
		panic("index: efWriter: values missing")
	}
	for ; w.nextS < w.sWords; w.nextS++ {
		w.samples.put(w.nextS<<sampleShift + w.n)
	}
	for ; w.hiIndex < w.hiWords; w.hiIndex++ {
		w.hi.put(w.hiWord)
		w.hiWord = 0
	}
	w.lo.finish()
}

// lowAt returns the low bits of value i.
func (s *efSeq) lowAt(i uint64) uint64 {
	if s.l == 0 {
		return 0
	}
	off := i * uint64(s.l)
	w := off / 64
	if w+1 >= uint64(len(s.lo)) {
		return 0
	}
	sh := off % 64
	v := s.lo[w] >> sh
	if sh+uint64(s.l) > 64 {
		v |= s.lo[w+1] << (64 - sh)
	}
	return v & (^uint64(0) >> s.h)
}

// bucketStart returns the position in hi where bucket b starts and the rank
// of its first value, by the sample at or before b and a count of zeros
// from there. ok is false when the bit vector ends first (a damaged file).
func (s *efSeq) bucketStart(b uint64) (pos, rank uint64, ok bool) {
	j := b >> sampleShift
	if j >= uint64(len(s.samples)) {
		return 0, 0, false
	}
	pos, ok = s.skipZeros(s.samples[j], b-j<<sampleShift)
	if !ok || pos < b {
		return 0, 0, false
	}
	return pos, pos - b, true
}

// skipZeros returns the position just past the need-th zero at or after
// pos (pos itself when need is 0).
func (s *efSeq) skipZeros(pos, need uint64) (uint64, bool) {
	for need > 0 {
		wi := pos / 64
		if wi >= uint64(len(s.hi)) {
			return 0, false
		}
		z := ^s.hi[wi] >> (pos % 64) // the zeros from pos on, as ones
		if c := uint64(bits.OnesCount64(z)); c < need {
			need -= c
			pos = (wi + 1) * 64
			continue
		}
		return pos + select64(z, need-1) + 1, true
	}
	return pos, true
}

// select64 returns the position of the r-th (from 0) set bit of x, which
// has more than r: the byte holding it by the bytes' running counts
// (Vigna, "Broadword implementation of rank/select queries", 2008), then a
// table.
func select64(x, r uint64) uint64 {
	c := x - x>>1&0x5555555555555555
	c = c&0x3333333333333333 + c>>2&0x3333333333333333
	c = (c + c>>4) & 0x0f0f0f0f0f0f0f0f
	c *= 0x0101010101010101 // byte i: the set bits in bytes 0..i
	before := uint64(0)
	for sh := uint64(0); sh < 64; sh += 8 {
		upto := c >> sh & 0xff
		if upto > r {
			return sh + uint64(selectInByte[x>>sh&0xff][r-before])
		}
		before = upto
	}
	return 64
}

// selectInByte[b][r] is the position of the r-th set bit of b.
var selectInByte = func() (t [256][8]uint8) {
	for b := range 256 {
		r := 0
		for i := range 8 {
			if b>>i&1 != 0 {
				t[b][r] = uint8(i)
				r++
			}
		}
	}
	return t
}()

// scan calls fn(i, v) for every value i whose high part is in [b0, b1) and
// within k bits of yh, the high part of the query (values further away in
// their high bits alone cannot be within k). It stops early when fn returns
// false.
func (s *efSeq) scan(b0, b1, yh uint64, k int, fn func(i, v uint64) bool) {
	if s.n == 0 || b0 >= b1 {
		return
	}
	// A key's buckets (an aligned run of 2^sub holding yh) are long enough
	// to visit only those near yh.
	if sub := uint(bits.Len64(b1 - b0 - 1)); b1-b0 == 1<<sub && b0&(b1-b0-1) == 0 && sub >= enumerateBits && b0 == yh&^(b1-b0-1) {
		s.scanNear(b0, sub, yh, k, fn)
		return
	}
	// Whole sample groups of 256 buckets whose own bits differ from the
	// query's in more than k places are skipped without reading them.
	var c candBatch
	for g := b0 >> sampleShift; g<<sampleShift < b1; g++ {
		gb0 := max(b0, g<<sampleShift)
		gb1 := min(b1, (g+1)<<sampleShift)
		if bits.OnesCount64(g^(yh>>sampleShift)) > k {
			continue
		}
		if !s.scanRange(gb0, gb1, yh, k, &c, fn) {
			return
		}
	}
	s.flush(&c, fn)
}

// enumerateBits is the number of bucket bits below the key from which
// scan visits only the buckets within k bits of the query instead of
// walking every entry of the key's run. Both read the same low bits (those
// of the entries whose high bits are within k), which at scale are most of
// the time; visiting saves the walk through the high bits but pays a
// select per bucket. Measured at 10M with keys shaped as at 100M (11
// bits: 176 of 2,048 buckets) walking was faster, 17.8 against 24.7 us;
// at 300M (13 bits) walking still, 52.1 against 54.5 us; at 10M with keys
// shaped as at 1B (14 bits: 470 of 16,384), visiting, 53.9 against 57.7
// us. Tests change it to run both ways.
var enumerateBits uint = 14

// scanNear visits, in ascending order, the buckets b0 | v for the v of sub
// bits within k bits of yh's low sub bits, moving from one to the next by
// counting zeros (or by a sample, for a long way), and calls fn for each of
// their values.
func (s *efSeq) scanNear(b0 uint64, sub uint, yh uint64, k int, fn func(i, v uint64) bool) {
	pos, _, ok := s.bucketStart(b0)
	if !ok {
		return
	}
	w := nearWalk{s: s, fn: fn, b0: b0, ysub: yh & (1<<sub - 1), pos: pos, cur: b0}
	w.near(0, int(sub)-1, k)
	if !w.stopped {
		s.flush(&w.batch, fn)
	}
}

// nearWalk is the state of scanNear.
type nearWalk struct {
	s        *efSeq
	fn       func(i, v uint64) bool
	b0, ysub uint64
	pos, cur uint64 // bucket cur starts at bit pos
	stopped  bool
	batch    candBatch
}

// near goes depth-first over the sub bits, most significant first, taking
// at each level the 0 bit before the 1 bit: ascending order. budget is the
// bits that may still differ from the query's.
func (w *nearWalk) near(prefix uint64, bit int, budget int) {
	for !w.stopped {
		if budget == 0 || bit < 0 {
			w.visit(w.b0 | prefix | w.ysub&(1<<(bit+1)-1))
			return
		}
		if w.ysub>>bit&1 == 0 {
			w.near(prefix, bit-1, budget)
			prefix, budget = prefix|1<<bit, budget-1
		} else {
			w.near(prefix, bit-1, budget-1)
			prefix |= 1 << bit
		}
		bit--
	}
}

// visit moves to bucket b and calls fn for its values.
func (w *nearWalk) visit(b uint64) {
	s := w.s
	var ok bool
	if b-w.cur > 2<<sampleShift {
		w.pos, _, ok = s.bucketStart(b)
	} else {
		w.pos, ok = s.skipZeros(w.pos, b-w.cur)
	}
	if !ok {
		w.stopped = true
		return
	}
	w.cur = b
	// The bucket's values are the ones from pos up to its zero.
	for p := w.pos; ; p++ {
		wi := p / 64
		if wi >= uint64(len(s.hi)) || s.hi[wi]&(1<<(p%64)) == 0 {
			return
		}
		i := p - b
		if i >= s.n || w.batch.add(i, b) && !s.flush(&w.batch, w.fn) {
			w.stopped = true
			return
		}
	}
}

// scanRange scans the buckets [b0, b1), which lie in one sample group.
func (s *efSeq) scanRange(b0, b1, yh uint64, k int, c *candBatch, fn func(i, v uint64) bool) bool {
	pos, i, ok := s.bucketStart(b0)
	if !ok {
		return true
	}
	wi := pos / 64
	if wi >= uint64(len(s.hi)) {
		return true
	}
	word := s.hi[wi] &^ (1<<(pos%64) - 1)
	for i < s.n {
		for word == 0 {
			wi++
			if wi >= uint64(len(s.hi)) {
				return true
			}
			word = s.hi[wi]
		}
		p := wi*64 + uint64(bits.TrailingZeros64(word))
		word &= word - 1
		if p < i {
			return true // damaged: more ones than positions
		}
		h := p - i
		if h >= b1 {
			return true
		}
		if bits.OnesCount64(h^yh) <= k {
			if c.add(i, h) && !s.flush(c, fn) {
				return false
			}
		}
		i++
	}
	return true
}

// A candBatch holds entries found by their high bits until their low bits
// are read together: the reads are independent, so their cache misses
// overlap instead of following one another (at 1B, a query's few hundred
// low-bit reads a table are each a miss to memory, and they, not the walk
// through the high bits, are most of its time).
type candBatch struct {
	n    int
	i, h [64]uint64
}

// add appends an entry and reports whether the batch is full.
func (c *candBatch) add(i, h uint64) bool {
	c.i[c.n], c.h[c.n] = i, h
	c.n++
	return c.n == len(c.i)
}

// flush reads the batch's low bits, calls fn for each entry in order and
// empties the batch; false when fn stopped.
func (s *efSeq) flush(c *candBatch, fn func(i, v uint64) bool) bool {
	var v [len(c.i)]uint64
	n := c.n
	c.n = 0
	for j := range n {
		v[j] = c.h[j]<<s.l | s.lowAt(c.i[j])
	}
	for j := range n {
		if !fn(c.i[j], v[j]) {
			return false
		}
	}
	return true
}

// find returns the ranks [lo, hi) of the values equal to v.
func (s *efSeq) find(v uint64) (lo, hi uint64) {
	pos, i, ok := s.bucketStart(v >> s.l)
	if !ok {
		return 0, 0
	}
	want := v & (^uint64(0) >> s.h)
	// The bucket's values are the ones from pos up to its ending zero.
	for p := pos; p/64 < uint64(len(s.hi)) && s.hi[p/64]&(1<<(p%64)) != 0 && i < s.n; p, i = p+1, i+1 {
		switch lw := s.lowAt(i); {
		case lw == want:
			if hi == 0 {
				lo = i
			}
			hi = i + 1
		case lw > want:
			return fixEmpty(lo, hi)
		}
	}
	return fixEmpty(lo, hi)
}

func fixEmpty(lo, hi uint64) (uint64, uint64) {
	if hi <= lo {
		return 0, 0
	}
	return lo, hi
}

// all calls fn with every value in order.
func (s *efSeq) all(fn func(v uint64)) {
	i := uint64(0)
	for wi, word := range s.hi {
		for word != 0 && i < s.n {
			p := uint64(wi)*64 + uint64(bits.TrailingZeros64(word))
			word &= word - 1
			if p < i {
				return
			}
			h := p - i
			fn(h<<s.l | s.lowAt(i))
			i++
		}
	}
}

func (s *efSeq) bytes() int64 { return 8 * int64(len(s.hi)+len(s.lo)+len(s.samples)) }
