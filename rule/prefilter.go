package rule

import (
	"math"
	"math/bits"

	"github.com/neardup/neardup/simhash"
)

// The prefilter: a test that costs nanoseconds, between the candidate keys
// and the exact check, which rules out a candidate pair only when its
// documents are far enough below the threshold that a pair at or above it
// would be ruled out with probability below PrefilterFalseReject.
//
// Why. LSH bands find a pair at J = 0.8 with probability 0.9993, but also one
// at J = 0.5 with probability 0.31 and at J = 0.4 with 0.094. On web pages
// that share a site's template (header, menu, notices, footer) the pages at
// J 0.3-0.6 from any one page grow in number with the corpus, and each such
// candidate cost a read of a shingle set (from the batch's temporary file,
// the service's store, Redis) to be rejected. The prefilter rejects most of
// them from 64 bytes per document held beside the candidate keys.
//
// The sketch (Prefilter) is one permutation hashing (Li, Owen, Zhang, "One
// Permutation Hashing", NIPS 2012) of the document's shingle set, the set
// that verification measures: each hash h is mixed once, g = Mix64(h,
// prefilterSeed), its top 8 bits choose one of 256 bins, and a bin keeps the
// smallest g that fell in it. A bin is stored as a 2-bit code: 0 when no
// shingle fell in it (no densification: an empty bin stays empty), else 1 to
// 3 from the low bits of its minimum (b-bit minwise hashing, Li and König,
// WWW 2010). The codes are kept as two bit planes of 256 bits, so a
// comparison is a few XORs, ORs and popcounts. The hash is seeded apart from
// the LSH signature's, so the test does not depend on the band that made the
// pair a candidate.
//
// The bound. Let A and B be the two sets, U their union, I their
// intersection, J = |I|/|U|, and F the number of bins that hold a shingle of
// either (known from the codes: bins where either code is not 0). Under a
// random hash, the minimum of U in each of those F bins is a uniformly random
// F-subset of U given F (the hash treats every element alike), and a bin
// whose minimum of U is in I holds that same element as the minimum of A and
// of B, so their codes agree. The number M of agreeing bins is therefore at
// least a hypergeometric count: F draws without replacement from |U| elements
// of which |I| are marked. Hoeffding (1963, Theorem 4) bounds its lower tail
// by the binomial Chernoff bound, P(M <= c) <= exp(-F·KL(c/F || J)) for c/F
// <= J, where KL is the Kullback-Leibler divergence of two Bernoulli laws; it
// falls as J grows, so for any pair with J >= t it is at most the bound at J
// = t. Codes that agree by chance (two different minima with the same 2
// bits) only raise M. The rule rejects a pair when M < cut[F], the smallest
// count whose bound exceeds PrefilterFalseReject: so a pair at or above the
// threshold t is rejected with probability at most PrefilterFalseReject
// (1e-9), whatever the sizes of its sets. Small sets fill few bins (F small)
// and are rarely rejected: below 13 bins not even with no agreement at all,
// since 0.2^13 > 1e-9. TestPrefilterBound checks the bound on pairs at
// exactly the threshold (and, at a looser bound, that the rate of rejection
// it allows is not exceeded), and that pairs at J 0.3 are nearly all
// rejected.
//
// What it lets through at t = 0.8 (two sets of 250 shingles, as a short page
// with a site's template; simulation): J = 0.4 never, 0.45 0.6% of the time,
// 0.5 22%, 0.55 77%, 0.6 99.7%. Why not smaller: 128 bins of 3 bits (48
// bytes) let through 21% at 0.45 and 67% at 0.5; more bins count for more
// than more bits, up to the size of the sets (a bin no shingle falls in says
// nothing). Pairs between 0.6 and the threshold cannot be told from pairs at
// the threshold by a summary this size at that error rate (separating J 0.6
// from 0.8 at 1e-9 takes about 200 exact samples of the union: F·KL(0.6 ||
// 0.8) >= ln 1e9): they go to the exact check.
//
// The probability is over the choice of hash function; the hash is fixed
// (prefilterSeed, as every hash of this package), so a given pair is
// rejected or not in every run, by every runner: the batch, the service's
// kept set, Redis and Beam all take the same decision for it. The exact
// check still decides every pair that passes.

// PrefilterFalseReject is the largest probability with which the prefilter
// rejects a pair whose Jaccard similarity is at or above the threshold.
const PrefilterFalseReject = 1e-9

const (
	preBinBits = 8
	preBins    = 1 << preBinBits // bins of the one permutation hashing
	prePlanes  = 2               // bits of a bin's code
	preCodes   = 1<<prePlanes - 1
	preWords   = preBins / 64 // words of a plane

	// prefilterSeed seeds the prefilter's hash, another stream than the
	// MinHash signature's.
	prefilterSeed = 0x70726566696c7472 // "prefiltr"
)

// Prefilter is a document's sketch for the prefilter: the 2-bit codes of
// 256 bins of one permutation hashing of its shingle set, as two bit planes
// (word p·4+w holds bit p of the codes of bins 64w to 64w+63). The
// zero value is "unknown" (no shingle set, a MOD_m sample, or a store that
// did not keep it) and never rejects anything.
type Prefilter [prePlanes * preWords]uint64

// Known reports whether p was computed from an exact, non-empty shingle set.
func (p *Prefilter) Known() bool { return *p != Prefilter{} }

// PrefilterOf returns the prefilter of a set of shingle hashes (as
// Sketch.Hashes: any order, repeats allowed); the zero Prefilter for an
// empty set.
func PrefilterOf(set []uint32) Prefilter {
	var p Prefilter
	if len(set) == 0 {
		return p
	}
	// A bin's minimum; MaxUint64 marks an empty bin (a shingle that hashes
	// to it, one in 2^64, counts as none).
	var min [preBins]uint64
	for i := range min {
		min[i] = math.MaxUint64
	}
	for _, h := range set {
		g := simhash.Mix64(uint64(h), prefilterSeed)
		if b := g >> (64 - preBinBits); g < min[b] {
			min[b] = g
		}
	}
	for w := range preWords {
		var p0, p1 uint64
		for i, v := range min[64*w : 64*w+64] {
			if v == math.MaxUint64 {
				continue
			}
			// 1 to 3 from the low 32 bits (multiply-shift range
			// reduction): the top bits chose the bin.
			code := 1 + (uint64(uint32(v))*preCodes)>>32
			p0 |= (code & 1) << i
			p1 |= (code >> 1) << i
		}
		p[w], p[preWords+w] = p0, p1
	}
	return p
}

// Prefilter returns the prefilter of f's shingle set: the zero Prefilter
// when the set is a MOD_m sample (kept-set files of earlier versions) or
// empty. Stores that keep the shingle set but not the prefilter use it when
// they load a document.
func (f *Features) Prefilter() Prefilter {
	if f.FingerprintOnly || f.Sketch.Sampled() {
		return Prefilter{}
	}
	return PrefilterOf(f.Sketch.h)
}

// prefilterCuts returns, for each number of occupied bins F (0 to preBins),
// the smallest number of agreeing bins a pair needs not to be rejected at
// threshold t with false-rejection bound delta (see the notes above).
func prefilterCuts(t, delta float64) []uint16 {
	cut := make([]uint16, preBins+1)
	for f := 1; f <= preBins; f++ {
		c := 0
		for c < f && math.Exp(-float64(f)*bernoulliKL(float64(c)/float64(f), t)) <= delta {
			c++
		}
		cut[f] = uint16(c)
	}
	return cut
}

// bernoulliKL is KL(q || p) of two Bernoulli laws, for q < p < 1 (+Inf at p
// = 1 unless q = 1).
func bernoulliKL(q, p float64) float64 {
	if q >= p {
		return 0
	}
	d := (1 - q) * math.Log((1-q)/(1-p))
	if q > 0 {
		d += q * math.Log(q/p)
	}
	return d
}

// PrefilterRejects reports whether the prefilter rules out a pair of
// documents with prefilters a and b: never when either is unknown, or
// without Jaccard verification (the bound is for the Jaccard similarity of
// the shingle sets).
func (r *Rule) PrefilterRejects(a, b *Prefilter) bool {
	if r.preCut == nil {
		return false
	}
	return prefilterRejects(a, b, r.preCut)
}

// prefilterRejects is the test: unknown prefilters (no bin occupied) never
// reject.
func prefilterRejects(a, b *Prefilter, cut []uint16) bool {
	occ, diff := 0, 0
	var anyA, anyB uint64
	for w := range preWords {
		x0, x1 := a[w], a[preWords+w]
		y0, y1 := b[w], b[preWords+w]
		anyA |= x0 | x1
		anyB |= y0 | y1
		occ += bits.OnesCount64(x0 | x1 | y0 | y1)
		diff += bits.OnesCount64((x0 ^ y0) | (x1 ^ y1))
	}
	return anyA != 0 && anyB != 0 && occ-diff < int(cut[occ])
}
