package rule

import (
	"math"

	"github.com/neardup/neardup/measure"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
)

// Features is what the rule needs of one document. Extractor computes it.
type Features struct {
	FP     uint64 // SimHash fingerprint (0 with MethodMinHash, and for a text without features)
	Exact  uint64 // hash of the token sequence; of the bytes for a text without tokens
	Tokens uint32 // tokens of the verification tokenizer (saturating)
	Length uint32 // text length in bytes (saturating)
	// Empty is set when the profile found no features (or the tokenizer no
	// token): such a document has fingerprint 0.
	Empty bool
	// FingerprintOnly marks a document of which only FP is known (Exact,
	// Tokens, Length and the verification data are unknown, and zero): it
	// matches on fingerprint distance alone and its matches are unverified
	// (see the package notes). keptset.Options.FingerprintOnly makes such
	// documents (an index snapshot's). AppendBinary does not record it: they are not stored.
	// (Beside the fields above, which Rule.Near reads with it: one cache
	// line for the test most candidates fail.)
	FingerprintOnly bool
	Sketch          Sketch         // shingle set (VerifyJaccard)
	Vector          measure.Vector // TF-IDF vector (VerifyCosine; filled in by the batch run)
	Sig             minhash.Signature
	// Pre is the prefilter of the shingle set (VerifyJaccard; prefilter.go):
	// a function of Sketch, which Extractor and the binary decoding compute;
	// zero (unknown) for a MOD_m sample or a fingerprint-only document.
	Pre Prefilter
	// Bands are the LSH band keys of Sig (MethodMinHash, from Extractor and
	// NewExtractor's options; nil for a document without tokens, which only
	// exact copies match).
	Bands []uint64
}

// ExactOnly reports whether f has nothing to be near on, so that it matches
// exact copies only (the same token sequence; the same bytes for a text
// without tokens): a text without tokens (punctuation, symbols), and under
// MethodSimHash a text whose profile finds no features (only stopwords, say),
// whose fingerprint is 0 like every other such text's. Without this rule all
// of them would be one another's candidates at distance 0. A fingerprint-only
// document with fingerprint 0 is such a text too, and since its exact copies
// cannot be told, it matches nothing. Features.Empty is not enough to tell:
// documents read back from a store keep only Tokens and FP.
//
// Under MethodMinHash, which computes no fingerprint for its rule, "only
// stopwords" is read off the shingle set: every shingle hash carries the
// number of common words among its tokens in its top three bits (shingles.go),
// so a set whose smallest and largest hashes (it is sorted) both count every
// token as common holds nothing else. Without a shingle set (--verify none)
// only a text without tokens is exact-only.
func (r *Rule) ExactOnly(f *Features) bool {
	if r.method == MethodMinHash && !f.FingerprintOnly && f.Tokens > 0 {
		return onlyCommonWords(f.Sketch, f.Tokens, r.shingle)
	}
	if f.FingerprintOnly {
		return r.method == MethodMinHash || f.FP == 0
	}
	return f.Tokens == 0 || (r.method == MethodSimHash && f.FP == 0)
}

// Rule decides whether two documents are near-duplicates. It is immutable and
// safe for concurrent use.
type Rule struct {
	method, verify string
	k, kShort      int
	short          uint32
	partnerLimit   uint32 // with kShort > k: both documents under this many tokens
	threshold      float64
	bands, rows    int // MethodMinHash: the LSH bands that make candidates
	shingle        int // shingle width in tokens
	// preCut[F]: the agreeing bins a pair with F occupied bins needs to pass
	// the prefilter (VerifyJaccard; nil otherwise: prefilter.go).
	preCut []uint16
}

// NewRule returns the rule for opt (after defaults; invalid options are an
// error wrapping ErrOptions).
func NewRule(opt Options) (*Rule, error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt.lshBands()
	return opt.rule(), nil
}

// rule builds the rule of validated options.
func (o *Options) rule() *Rule {
	long, short := o.k()
	return &Rule{
		method: o.Method, verify: o.Verify, k: long, kShort: short,
		short:        uint32(o.ShortTokens),
		partnerLimit: uint32(float64(o.ShortTokens)/o.Threshold) + uint32(o.Shingle),
		threshold:    o.Threshold,
		bands:        o.Bands, rows: o.Rows,
		shingle: o.Shingle,
		preCut:  o.prefilterCuts(),
	}
}

// prefilterCuts returns the prefilter's cuts at the threshold under
// VerifyJaccard, nil otherwise.
func (o *Options) prefilterCuts() []uint16 {
	if o.Verify != VerifyJaccard {
		return nil
	}
	return prefilterCuts(o.Threshold, PrefilterFalseReject)
}

// MinHashVersion numbers the MinHash signatures of MethodMinHash, which band
// keys (Features.Bands) are made of: 1 was a signature of Perms independent
// permutations; 2 is one permutation hashing with optimal densification
// (minhash.NewDensified), one hash per shingle instead of one per shingle and
// permutation. Stores name it in their settings and refuse another.
const MinHashVersion = 2

// hasher returns the MinHash hasher of MethodMinHash: every runner of the rule
// signs with it (through an Extractor), so band keys agree everywhere.
func (o *Options) hasher() *minhash.Hasher { return minhash.NewDensified(o.Perms, 1) }

// lshBands fills in Bands and Rows for MethodMinHash (LSHShape).
func (o *Options) lshBands() {
	if o.Method == MethodMinHash {
		o.Bands, o.Rows = o.LSHShape()
	}
}

// Method is the candidate method: MethodMinHash or MethodSimHash.
func (r *Rule) Method() string { return r.method }

// Verification is the verification measure: VerifyJaccard, VerifyCosine or
// VerifyNone (Options.Verify).
func (r *Rule) Verification() string { return r.verify }

// Bands is the number of LSH bands of MethodMinHash documents (0 under
// MethodSimHash).
func (r *Rule) Bands() int {
	if r.method != MethodMinHash {
		return 0
	}
	return r.bands
}

// K returns the fingerprint distances of the rule: K for pairs of long
// documents and KShort for pairs with a short one (Options.K and
// Options.KShort; negative means 0). PairK says which a pair gets.
func (r *Rule) K() (long, short int) { return r.k, r.kShort }

// ShortPartners is the token count under which a document can be a short
// document's partner at KShort when KShort > K: ShortTokens/Threshold +
// Shingle (PairK). A self-join at KShort needs only such documents.
func (r *Rule) ShortPartners() uint32 { return r.partnerLimit }

// QueryK is the largest distance Near accepts: an index queried at QueryK and
// filtered with Near finds every candidate.
func (r *Rule) QueryK() int { return max(r.k, r.kShort) }

// Threshold is the verification threshold.
func (r *Rule) Threshold() float64 { return r.threshold }

// PairK is the largest fingerprint distance at which a and b are candidates:
// K, or KShort when either document is short (under ShortTokens tokens).
// SimHash of short texts moves further per edit, so they get a wider net; when
// KShort > K the wider net is cast only between documents that are both under
// ShortTokens/Threshold + Shingle tokens, the sizes that can still pair with a
// short document at the threshold, which keeps the second join small.
//
// A fingerprint-only document's length is unknown: it is taken to be the
// other document's, so the pair gets K when the other document is long and
// KShort when it is short (K when both are fingerprint-only).
func (r *Rule) PairK(a, b *Features) int {
	switch {
	case a.FingerprintOnly && b.FingerprintOnly:
		return r.k
	case a.FingerprintOnly:
		a = b
	case b.FingerprintOnly:
		b = a
	}
	if a.Tokens >= r.short && b.Tokens >= r.short {
		return r.k
	}
	if r.kShort <= r.k || max(a.Tokens, b.Tokens) < r.partnerLimit {
		return r.kShort
	}
	return r.k
}

// Near reports whether a and b are candidates (see the package notes).
func (r *Rule) Near(a, b *Features) bool {
	if a.FingerprintOnly || b.FingerprintOnly {
		// No token-sequence hash to compare, and no fingerprint under
		// MethodMinHash.
		if r.ExactOnly(a) || r.ExactOnly(b) {
			return false
		}
		return simhash.Distance(a.FP, b.FP) <= r.PairK(a, b)
	}
	if a.Exact == b.Exact {
		return true
	}
	if r.ExactOnly(a) || r.ExactOnly(b) {
		return false
	}
	if r.method == MethodMinHash {
		return bandsMeet(a.Bands, b.Bands)
	}
	return simhash.Distance(a.FP, b.FP) <= r.PairK(a, b)
}

// bandsMeet reports whether two documents share an LSH band, which makes
// them MinHash candidates. Documents whose bands are not both known (of
// the same count) are left to the caller's candidate stage, as before bands
// were recorded: the batch and the service only ask about band pairs.
func bandsMeet(a, b []uint64) bool {
	if len(a) != len(b) || len(a) == 0 {
		return true
	}
	for i := range a {
		if a[i] == b[i] {
			return true
		}
	}
	return false
}

// BandKey is the candidate key of band b's key: its band's number mixed in,
// so that one table holds every band. The batch's buckets, the service's
// kept set (keptset) and the Redis index all key bands so, which
// is what makes their candidates, and so their verdicts, the same.
func BandKey(b int, key uint64) uint64 { return simhash.Mix64(key, uint64(b)) }

// Verify reports whether candidates a and b pass verification. Equal token
// sequences always do; documents without tokens only then (their sets are
// empty and would measure as identical). A pair with a fingerprint-only
// document passes: there is nothing to verify it with (Verified is false).
func (r *Rule) Verify(a, b *Features) bool {
	if a.FingerprintOnly || b.FingerprintOnly {
		return true
	}
	if a.Exact == b.Exact {
		return true
	}
	if a.Tokens == 0 || b.Tokens == 0 {
		return false
	}
	switch r.verify {
	case VerifyJaccard:
		if r.PrefilterRejects(&a.Pre, &b.Pre) {
			return false
		}
		return similarAtLeast(a.Sketch, b.Sketch, r.threshold)
	case VerifyCosine:
		return measure.Cosine(a.Vector, b.Vector) >= r.threshold
	}
	return true
}

// Duplicates reports whether a and b are near-duplicates: candidates that
// pass verification.
func (r *Rule) Duplicates(a, b *Features) bool { return r.Near(a, b) && r.Verify(a, b) }

// Verified reports whether Verify could test a and b: false when either is
// fingerprint-only, whose match rests on the fingerprint distance alone.
func (r *Rule) Verified(a, b *Features) bool { return !a.FingerprintOnly && !b.FingerprintOnly }

// Score is the verification measure of a and b (Jaccard or cosine), NaN
// without verification, and NaN when either is fingerprint-only.
func (r *Rule) Score(a, b *Features) float64 {
	if !r.Verified(a, b) {
		return math.NaN()
	}
	switch r.verify {
	case VerifyJaccard:
		return jaccard(a.Sketch, b.Sketch)
	case VerifyCosine:
		return measure.Cosine(a.Vector, b.Vector)
	}
	return math.NaN()
}

// Match returns the index in kept of the first document that doc duplicates,
// or -1. kept holds kept documents in priority order (input order under
// KeepFirst): the keep-first rule names the earliest one.
func (r *Rule) Match(doc *Features, kept []*Features) int {
	for i, k := range kept {
		if r.Duplicates(k, doc) {
			return i
		}
	}
	return -1
}

// onlyCommonWords reports whether every shingle in s, the set of a text of
// tokens tokens cut into shingles of w, is made of common words only.
func onlyCommonWords(s Sketch, tokens uint32, w int) bool {
	if len(s.h) == 0 || w <= 0 {
		return false
	}
	all := uint32(min(int(min(tokens, uint32(w))), 7))
	return s.h[0]>>29 == all && s.h[len(s.h)-1]>>29 == all
}
