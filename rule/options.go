package rule

import (
	"errors"
	"fmt"

	"github.com/neardup/neardup/features"
	"github.com/neardup/neardup/minhash"
)

// Errors returned by this package.
var (
	// ErrOptions is wrapped by Validate's errors: an option is out of range or
	// options contradict each other.
	ErrOptions = errors.New("rule: invalid options")
	// ErrFeaturesFormat is wrapped by the errors of decoding Features
	// (Features.UnmarshalBinary, Arena.UnmarshalFeatures,
	// Arena.DecodeFeatures): the bytes are damaged, or are not what
	// Features.AppendBinary writes.
	ErrFeaturesFormat = errors.New("rule: bad features encoding")
)

// Candidate methods.
const (
	MethodSimHash = "simhash" // self-join of SimHash fingerprints at Hamming distance K
	MethodMinHash = "minhash" // MinHash signatures with LSH banding (Broder 1997; Leskovec et al., MMDS 3.4): the default
)

// Verification measures.
const (
	VerifyJaccard = "jaccard" // Jaccard similarity of word w-shingle sets (the default)
	VerifyCosine  = "cosine"  // cosine similarity of TF-IDF word vectors, IDF learned from the input
	VerifyNone    = "none"    // accept every candidate pair
)

// Defaults, chosen on testdata/corpora against the ground truth "Jaccard of
// word 5-shingles >= 0.8" (see BENCHMARKS.md, "Dedup"). The SimHash stage is a
// high-recall candidate generator; the Jaccard verification gives the
// precision. K is 16: the keep-first rule needs each document within reach
// of a kept near-duplicate, not just of some version in its chain, and at
// k = 10 1.7% of the documents kept from en_gitdocs_dev still had a kept
// near-duplicate (0.5% at 12, 0.2% at 13, 0.1% at 16). At 12 a mail corpus
// and a documentation history (pairs at J 0.80-0.93 whose fingerprints
// differ by 13-26 bits, texts of 2-3 features) missed greedy F1 0.99,
// precision 0.999 or residual 0.005 (issue 33); at 16 every corpus meets
// them (TestAccuracyCorpora), and the lazy verification keeps the wider net
// cheap: twice the candidates on en_gitdocs_dev, most of them skipped
// without a Jaccard. KShort (for documents under ShortTokens tokens) is
// max(DefaultKShort, K).
const (
	DefaultMethod      = MethodMinHash
	DefaultProfile     = "en-words"
	DefaultK           = 16
	DefaultKShort      = 12
	DefaultShortTokens = 64
	DefaultVerify      = VerifyJaccard
	DefaultThreshold   = 0.8 // for Jaccard
	DefaultCosine      = 0.9 // default threshold for cosine
	DefaultShingle     = 5
	DefaultPerms       = 144
)

// Options are the settings of the decision: what makes two documents
// candidates, and what confirms them. The zero value means the defaults;
// each default is written on its field. EnsureDefaults fills them in and
// Validate checks the result; NewRule and NewExtractor call both. The
// batch's options (dedup.Options) embed them.
type Options struct {
	// Method is the candidate stage: MethodMinHash (default; doc.go says
	// why; MethodSimHash when Verify is VerifyCosine) or MethodSimHash.
	Method string
	// Profile names the features profile that fingerprints documents for the
	// SimHash stage (default "default": word features, Chinese segmentation for
	// Han text). Bits is the fingerprint width; only 64 is supported.
	Profile string
	// K is the Hamming distance at which two fingerprints become a candidate
	// pair (default DefaultK). Zero means the default: set a negative value to
	// ask for k = 0.
	K int
	// KShort is K for pairs in which a document has fewer than ShortTokens
	// tokens (default DefaultKShort): SimHash of short texts moves further per
	// edit (seeds 001, 002, 004), so they need a wider net. Negative means 0.
	KShort int
	// ShortTokens is the token count under which a document is short (default
	// DefaultShortTokens).
	ShortTokens int

	// Verify confirms candidate pairs: VerifyJaccard (default), VerifyCosine
	// or VerifyNone.
	Verify string
	// Threshold is the verification threshold (default 0.8 for Jaccard, 0.9 for
	// cosine); for MethodMinHash it also sets the LSH bands and rows.
	Threshold float64
	// Shingle is the shingle width in tokens for Jaccard and MinHash (default 5).
	Shingle int

	// Perms is the number of MinHash positions (default 144); Bands and Rows
	// default to LSHShape's choice for Threshold and Perms (24 × 6 at 0.8).
	Perms, Bands, Rows int
}

// EnsureDefaults replaces zero fields by their defaults.
func (o *Options) EnsureDefaults() {
	if o.Method == "" {
		o.Method = DefaultMethod
		if o.Verify == VerifyCosine {
			o.Method = MethodSimHash // MinHash bands estimate Jaccard, not cosine
		}
	}
	if o.Profile == "" {
		o.Profile = DefaultProfile
	}
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.KShort == 0 {
		o.KShort = max(DefaultKShort, o.K)
	}
	if o.ShortTokens == 0 {
		o.ShortTokens = DefaultShortTokens
	}
	if o.Verify == "" {
		o.Verify = DefaultVerify
	}
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
		if o.Verify == VerifyCosine {
			o.Threshold = DefaultCosine
		}
	}
	if o.Shingle == 0 {
		o.Shingle = DefaultShingle
	}
	if o.Perms == 0 {
		o.Perms = DefaultPerms
	}
}

// k returns the effective distances (negative means 0).
func (o *Options) k() (long, short int) { return max(o.K, 0), max(o.KShort, 0) }

// Validate reports the first invalid option, wrapping ErrOptions.
func (o *Options) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrOptions, fmt.Sprintf(format, args...))
	}
	switch o.Method {
	case MethodSimHash, MethodMinHash:
	default:
		return bad("method %q (want %s or %s)", o.Method, MethodSimHash, MethodMinHash)
	}
	if _, err := features.Lookup(o.Profile); err != nil {
		return fmt.Errorf("%w: %w", ErrOptions, err)
	}
	long, short := o.k()
	if long > 32 || short > 32 {
		return bad("k %d/%d: at most 32 bits", long, short)
	}
	if o.ShortTokens < 0 {
		return bad("short tokens %d < 0", o.ShortTokens)
	}
	switch o.Verify {
	case VerifyJaccard, VerifyCosine, VerifyNone:
	default:
		return bad("verify %q (want %s, %s or %s)", o.Verify, VerifyJaccard, VerifyCosine, VerifyNone)
	}
	if o.Method == MethodMinHash && o.Verify == VerifyCosine {
		return bad("method minhash verifies with jaccard or none, not cosine")
	}
	if !(o.Threshold > 0 && o.Threshold <= 1) {
		return bad("threshold %v outside (0, 1]", o.Threshold)
	}
	if o.Shingle < 1 || o.Shingle > 64 {
		return bad("shingle width %d outside 1..64", o.Shingle)
	}
	if o.Perms < 1 || o.Bands < 0 || o.Rows < 0 || o.Bands*o.Rows > o.Perms {
		return bad("minhash perms %d, bands %d, rows %d (need bands·rows <= perms)", o.Perms, o.Bands, o.Rows)
	}
	if (o.Bands == 0) != (o.Rows == 0) {
		return bad("set both bands and rows, or neither")
	}
	return nil
}

// LSHShape returns the bands and rows of the LSH that the rule uses with
// MethodMinHash for these options (after defaults): Bands and Rows when set,
// else a shape chosen for recall. Every runner of the rule (the batch, the
// service, the Beam pipeline) bands signatures with it to find the same
// pairs.
//
// With verification every candidate is checked exactly, so a false candidate
// costs one comparison while a missed one is a duplicate kept: the shape is
// the one with the most rows (the fewest false candidates) whose
// ⌊Perms/rows⌋ bands still find a pair at the threshold with probability at
// least lshRecall. At the default 0.8 over 144 positions that is 24 bands of
// 6 rows: P(found) is 0.9993 at J = 0.8 and 0.017 at J = 0.3 (the Jaccard
// of two pages that share only a boilerplate paragraph). Without verification
// the bands are the verdict, and minhash.BandsRows balances false positives
// against false negatives at the threshold, as text-dedup does.
func (o *Options) LSHShape() (bands, rows int) {
	if o.Bands != 0 {
		return o.Bands, o.Rows
	}
	if o.Verify == VerifyNone {
		return minhash.BandsRows(o.Threshold, o.Perms)
	}
	return recallShape(o.Threshold, o.Perms)
}

// lshRecall is the probability of finding a pair at the threshold that
// recallShape asks of a shape.
const lshRecall = 0.999

// recallShape returns the shape with the most rows r whose ⌊perms/r⌋ bands
// find a pair of Jaccard t with probability at least lshRecall (one row per
// band when even that falls short).
func recallShape(t float64, perms int) (bands, rows int) {
	bands, rows = perms, 1
	for r := 2; r <= perms; r++ {
		b := perms / r
		if minhash.Probability(t, b, r) < lshRecall {
			break
		}
		bands, rows = b, r
	}
	return bands, rows
}
