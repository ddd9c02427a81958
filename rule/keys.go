package rule

import (
	"math"

	"github.com/neardup/neardup/simhash"
)

// The candidate keys of each method: what a kept set or an index stores a
// document under and a new document looks up, so that every document the
// rule can accept shares a key with it (the keys find a superset; Duplicates
// decides). Every runner that keys documents (the kept set at scale, the
// Redis index) takes them from here, so that they find the same candidates.
//
// MethodMinHash: the LSH band keys, each mixed with its band's number
// (BandKey), or for a document without bands (no tokens) its token-sequence
// hash. Two documents the bands call near share a key, and an exact copy has
// the same bands.
//
// MethodSimHash: the token-sequence hash (exact copies, and the documents
// that match nothing else: ExactOnly), and under Jaccard verification the
// hashes of the shingle set's prefix: the first |A| - ⌈t·|A|⌉ + 1 hashes of
// the sorted set. Two sets with J(A, B) >= t share one of them (the prefix
// filter of Chaudhuri, Ganti and Kaushik, "A Primitive Operator for
// Similarity Joins", 2006), so the keys find every document that can pass
// verification; the fingerprint distance and the Jaccard are then the
// rule's. A document whose set cannot be keyed so (no verification, a set
// sampled at a modulus, no shingle) is not KeyedByPrefix: its near-duplicates
// are found by fingerprint distance at QueryK instead, and a fingerprint-only
// document has no key at all.
//
// The kinds of key are mixed with different constants, so that a
// token-sequence hash and a shingle hash never make the same key by design.
const (
	exactKeyMix  = 1 << 32
	prefixKeyMix = 2 << 32
)

// CandidateKeys appends to dst the candidate keys of f under the rule's
// method. Under MethodSimHash the first is the exact key (none for a
// fingerprint-only document), the others the prefix's.
func (r *Rule) CandidateKeys(dst []uint64, f *Features) []uint64 {
	if r.method == MethodMinHash {
		if len(f.Bands) == r.bands && r.bands > 0 {
			for b, k := range f.Bands {
				dst = append(dst, BandKey(b, k))
			}
			return dst
		}
		return append(dst, simhash.Mix64(f.Exact, exactKeyMix))
	}
	if f.FingerprintOnly {
		return dst
	}
	dst = append(dst, simhash.Mix64(f.Exact, exactKeyMix))
	if r.KeyedByPrefix(f) {
		h := f.Sketch.Hashes()
		for _, x := range h[:prefixLen(len(h), r.threshold)] {
			dst = append(dst, simhash.Mix64(uint64(x), prefixKeyMix))
		}
	}
	return dst
}

// KeyedByPrefix reports whether f's near-duplicates are found by the prefix
// of its shingle set: MethodSimHash with Jaccard verification, and an exact
// (not sampled) set that is not empty.
func (r *Rule) KeyedByPrefix(f *Features) bool {
	return r.method == MethodSimHash && r.verify == VerifyJaccard && !f.FingerprintOnly &&
		!f.Sketch.Sampled() && len(f.Sketch.Hashes()) > 0
}

// prefixLen is the length of the prefix of an exact set of n hashes at
// threshold t: n - ⌈t·n⌉ + 1, rounded up (a longer prefix only adds
// candidates) so that floating point cannot shorten it below the bound.
func prefixLen(n int, t float64) int {
	if n == 0 {
		return 0
	}
	return min(n, max(1, n-int(math.Ceil(t*float64(n)-1e-6))+1))
}
