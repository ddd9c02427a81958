package simhash

import (
	"fmt"
	"math/bits"
)

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
type Builder struct {
	width int // 0 means 64
	n     int // features added with a non-zero weight
	total float64
	ones  [128]float64
}

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
	if n > 64 {
		n = 64
	}
	addBits(&b.ones, 0, h, n, w)
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
	addBits(&b.ones, 0, lo, 64, w)
	addBits(&b.ones, 64, hi, n-64, w)
}

// addBits adds w to ones[off+i] for every set bit i < n of h.
func addBits(ones *[128]float64, off int, h uint64, n int, w float64) {
	if n < 64 {
		h &= 1<<uint(n) - 1
	}
	for h != 0 {
		i := bits.TrailingZeros64(h)
		ones[off+i] += w
		h &= h - 1
	}
}

// Sums returns the signed per-bit sums of seed 002 for bits 0..width-1: for
// each bit, the weights of features with a 1 there minus the weights of those
// with a 0. It appends to dst and returns it.
func (b *Builder) Sums(dst []float64) []float64 {
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
