package rule

import (
	"math"
	"math/bits"
	"slices"
)

// Verification memory. Jaccard verification needs every candidate document's
// shingle set, and the candidates are only known after all documents are in.
// Rather than reading the input a second time, the read pass keeps a compact
// set for every document: 32-bit shingle hashes, sorted and unique, 4 bytes
// per distinct shingle, exact; past Options.SketchBudget they go to a
// temporary file (sketchstore.go). Earlier versions thinned the sets past the
// budget instead, with Broder's MOD_m sample ("On the resemblance and
// containment of documents", 1997, section 3): only hashes h with h mod m = 0
// kept, m a power of two. Kept-set files they wrote can still hold such sets
// (Sketch.shift), so the comparisons below handle them:
// |MOD_m(A) ∩ MOD_m(B)| / |MOD_m(A) ∪ MOD_m(B)| is an unbiased estimate of the
// Jaccard similarity of A and B. Short documents kept at least minSamples
// hashes: a document's own modulus m_d is the largest power of two <= m that
// still leaves it about minSamples hashes, and two documents are compared at
// the larger of their moduli, which is consistent because a sample at m_d
// contains the sample at every multiple of m_d.

// minSamples is the number of hashes below which a document's set is not
// thinned further.
const minSamples = 128

// Sketch is a document's compact shingle set.
type Sketch struct {
	h     []uint32 // sorted, unique; every value h has h mod 2^shift = 0
	n     uint32   // distinct shingles before sampling
	shift uint8    // log2 of the document's modulus m_d
}

// Hashes returns the set's 32-bit shingle hashes, sorted and distinct: a
// MOD_m sample when Sampled, the whole set otherwise. They must not be
// modified. (CandidateKeys keys documents by their prefixes.)
func (s Sketch) Hashes() []uint32 { return s.h }

// SketchOf returns the exact sketch of hashes, which must be sorted and
// distinct (as Hashes returns them); it keeps the slice. A caller that
// keeps shingle sets its own way (the batch's temporary file) makes its
// sketches back with it.
func SketchOf(hashes []uint32) Sketch { return Sketch{h: hashes, n: uint32(len(hashes))} }

// Sampled reports whether the set is a MOD_m sample (kept-set files of
// earlier versions can hold such sets) rather than the exact set.
func (s Sketch) Sampled() bool { return s.shift > 0 }

// SketchVersion numbers the shingle hashing of Features.Sketch (tokens,
// shingle hash, rarity class: shingles.go). Features stored under another
// version cannot be compared with new ones; stores and kept-set files name it
// in their settings and refuse a mismatch. Version 2 added the rarity class.
const SketchVersion = 2

// docShift returns log2 of the modulus for a set of n distinct hashes when the
// global modulus is 2^global.
func docShift(n int, global uint8) uint8 {
	if n < 2*minSamples {
		return 0
	}
	// Largest s with n >> s >= minSamples.
	s := uint8(bits.Len(uint(n/minSamples)) - 1)
	return min(s, global)
}

// newSketch sorts and dedups h in place and returns its sketch at the global
// modulus 2^global (0, exact, but for tests of sampled sets), copied into dst
// (appended; nil gives a right-sized slice, as the worker reuses h). tmp is
// scratch space for the sort, returned for reuse.
func newSketch(dst, h, tmp []uint32, global uint8) (Sketch, []uint32) {
	tmp = sortHashes(h, tmp)
	h = slices.Compact(h)
	s := docShift(len(h), global)
	return Sketch{h: thin(dst, h, s), n: uint32(len(h)), shift: s}, tmp
}

// thin appends to dst the values of h divisible by 2^shift.
func thin(dst, h []uint32, shift uint8) []uint32 {
	if shift == 0 {
		return append(dst, h...)
	}
	mask := uint32(1)<<shift - 1
	n := 0
	for _, v := range h {
		if v&mask == 0 {
			n++
		}
	}
	out := slices.Grow(dst, n)
	for _, v := range h {
		if v&mask == 0 {
			out = append(out, v)
		}
	}
	return out
}

// jaccard estimates the Jaccard similarity of the two sets (exact when both
// sketches are exact): both are compared at the larger modulus. As in package
// measure, two empty sets have similarity 1 and an empty set against a
// non-empty one 0.
func jaccard(a, b Sketch) float64 {
	shift := max(a.shift, b.shift)
	mask := uint32(1)<<shift - 1
	x, y := a.h, b.h
	i, j, inter, na, nb := 0, 0, 0, 0, 0
	for i < len(x) && j < len(y) {
		switch u, v := x[i], y[j]; {
		case u&mask != 0:
			i++
		case v&mask != 0:
			j++
		case u < v:
			na++
			i++
		case u > v:
			nb++
			j++
		default:
			inter++
			i++
			j++
		}
	}
	for ; i < len(x); i++ {
		if x[i]&mask == 0 {
			na++
		}
	}
	for ; j < len(y); j++ {
		if y[j]&mask == 0 {
			nb++
		}
	}
	union := inter + na + nb
	if union == 0 {
		if len(a.h) == 0 && len(b.h) == 0 {
			return 1
		}
		// Both thinned to nothing at this modulus: no evidence of overlap.
		return 0
	}
	return float64(inter) / float64(union)
}

// similarAtLeast reports whether the Jaccard similarity of a and b is at least
// t. It rejects most dissimilar
// pairs without a full merge: J(A, B) <= min(|A|,|B|)/max(|A|,|B|) (the size
// filter of Chaudhuri, Ganti, Kaushik, "A primitive operator for similarity
// joins", ICDE 2006), and for exact sets the merge stops as soon as the
// intersection reaches t(|A|+|B|)/(1+t), the count J >= t needs, or can no
// longer reach it.
func similarAtLeast(a, b Sketch, t float64) bool {
	lo, hi := min(a.n, b.n), max(a.n, b.n)
	if hi > 0 && float64(lo) < t*float64(hi)-1e-9 {
		return false
	}
	if a.shift != 0 || b.shift != 0 {
		return jaccard(a, b) >= t
	}
	x, y := a.h, b.h
	need := int(math.Ceil(t*float64(len(x)+len(y))/(1+t) - 1e-9))
	i, j, inter := 0, 0, 0
	if need <= 0 {
		return true
	}
	for i < len(x) && j < len(y) {
		if inter+min(len(x)-i, len(y)-j) < need {
			return false
		}
		switch u, v := x[i], y[j]; {
		case u < v:
			i++
		case u > v:
			j++
		default:
			inter++
			if inter >= need {
				return true
			}
			i++
			j++
		}
	}
	return false
}
