package simhash

import "fmt"

// Builder accumulates weighted feature hashes into a fingerprint.
//
// The zero value builds 64-bit fingerprints; NewBuilder picks another width.
// A Builder may be reused after Reset. It is not safe for concurrent use.
//
// Internally it keeps, for every bit position, the total weight of the features
// whose hash has a 1 there (ones[i]) and the total weight of all features (total).
// The signed sum of seed 002 is then 2*ones[i] - total, and bit i is set when that
// is strictly positive. For integer weights the result is exactly that of the
// signed sums; the form halves the work per feature.
//
// Small integer weights (1 to 255, the common case: counts, capped counts,
// part-of-speech levels) take a SWAR path: each of the low 64 bit positions is
// an 8-bit lane of eight uint64 words, so one feature costs eight table
// look-ups, multiplies and adds instead of 64; lanes are flushed into ones
// before they can overflow. Other weights take a branch-free per-byte path.
type Builder struct {
	width int // 0 means 64
	n     int // features added with a non-zero weight
	total float64
	ones  [128]float64

	lanes   [8]uint64 // pending integer weights of bits 0..63, one 8-bit lane per bit
	pending uint64    // sum of the weights in lanes; <= 255
}

// spread[x] has byte lane b set to bit b of x: the eight bits of one hash byte
// spread over eight counters.
var spread = func() (t [256]uint64) {
	for x := range t {
		for b := 0; b < 8; b++ {
			t[x] |= uint64(x>>b&1) << (8 * b)
		}
	}
	return t
}()

// bitTable[x][b] is bit b of x as a float64.
var bitTable = func() (t [256][8]float64) {
	for x := range t {
		for b := 0; b < 8; b++ {
			t[x][b] = float64(x >> b & 1)
		}
	}
	return t
}()

// NewBuilder returns a Builder for fingerprints of the given width in bits,
// from 1 to 128. Widths other than 32, 64 and 128 are for experiments and tests.
func NewBuilder(width int) (*Builder, error) {
	if width < 1 || width > 128 {
		return nil, fmt.Errorf("simhash: width %d out of range 1..128", width)
	}
	return &Builder{width: width}, nil
}

// Width returns the fingerprint width in bits.
func (b *Builder) Width() int {
	if b.width == 0 {
		return 64
	}
	return b.width
}

// Reset clears the builder for a new fingerprint of the same width.
func (b *Builder) Reset() {
	w := b.Width()
	b.total, b.n = 0, 0
	clear(b.ones[:w])
	b.lanes, b.pending = [8]uint64{}, 0
}

// Add adds a feature with a 64-bit hash h and weight w. Bits of h above the
// builder's width are ignored. For 128-bit builders use Add128.
func (b *Builder) Add(h uint64, w float64) {
	if w == 0 {
		return
	}
	b.total += w
	b.n++
	n := b.Width()
	if n < 64 {
		h &= 1<<uint(n) - 1
	}
	if w >= 1 && w <= 255 && w == float64(uint64(w)) {
		iw := uint64(w)
		if b.pending+iw > 255 {
			b.flush()
		}
		b.pending += iw
		for j := range b.lanes {
			b.lanes[j] += spread[byte(h>>(8*j))] * iw
		}
		return
	}
	addBytes(&b.ones, 0, h, w)
}

// flush moves the pending lane counts into ones.
func (b *Builder) flush() {
	if b.pending == 0 {
		return
	}
	for j, l := range b.lanes {
		for k := 0; k < 8; k++ {
			b.ones[8*j+k] += float64(l >> (8 * k) & 0xff)
		}
	}
	b.lanes, b.pending = [8]uint64{}, 0
}

// addBytes adds w to ones[off+i] for every set bit i of h, a byte at a time
// without branches.
func addBytes(ones *[128]float64, off int, h uint64, w float64) {
	for j := 0; j < 8; j++ {
		t := &bitTable[byte(h>>(8*j))]
		o := ones[off+8*j : off+8*j+8 : off+8*j+8]
		o[0] += w * t[0]
		o[1] += w * t[1]
		o[2] += w * t[2]
		o[3] += w * t[3]
		o[4] += w * t[4]
		o[5] += w * t[5]
		o[6] += w * t[6]
		o[7] += w * t[7]
	}
}

// Add128 adds a feature with a 128-bit hash (hi, lo) and weight w. For builders
// of 64 bits or fewer only lo is used.
func (b *Builder) Add128(hi, lo uint64, w float64) {
	if w == 0 {
		return
	}
	n := b.Width()
	if n <= 64 {
		b.Add(lo, w)
		return
	}
	b.total += w
	b.n++
	if n < 128 {
		hi &= 1<<uint(n-64) - 1
	}
	addBytes(&b.ones, 0, lo, w)
	addBytes(&b.ones, 64, hi, w)
}

// Sums returns the signed per-bit sums of seed 002 for bits 0..width-1: for
// each bit, the weights of features with a 1 there minus the weights of those
// with a 0. It appends to dst and returns it.
func (b *Builder) Sums(dst []float64) []float64 {
	b.flush()
	for i := 0; i < b.Width(); i++ {
		dst = append(dst, 2*b.ones[i]-b.total)
	}
	return dst
}

// bit reports whether fingerprint bit i is set: its signed sum is strictly positive.
func (b *Builder) bit(i int) bool { return 2*b.ones[i] > b.total }

// Sum128 returns the fingerprint as a 128-bit value, whatever the width; bits at
// and above the width are 0.
func (b *Builder) Sum128() Fingerprint128 {
	b.flush()
	var fp Fingerprint128
	n := b.Width()
	for i := 0; i < n; i++ {
		if b.bit(i) {
			if i < 64 {
				fp.Lo |= 1 << uint(i)
			} else {
				fp.Hi |= 1 << uint(i-64)
			}
		}
	}
	return fp
}

// Sum64 returns the low 64 bits of the fingerprint.
func (b *Builder) Sum64() Fingerprint {
	b.flush()
	n := b.Width()
	if n > 64 {
		n = 64
	}
	var fp uint64
	for i := 0; i < n; i++ {
		if b.bit(i) {
			fp |= 1 << uint(i)
		}
	}
	return Fingerprint(fp)
}

// Sum32 returns the low 32 bits of the fingerprint.
func (b *Builder) Sum32() Fingerprint32 { return Fingerprint32(b.Sum64()) }

// Empty reports whether no feature with a non-zero weight has been added. The
// fingerprint of an empty feature set is 0.
func (b *Builder) Empty() bool { return b.n == 0 }
