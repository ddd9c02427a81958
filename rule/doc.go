// Package rule is the near-duplicate decision that every runner of neardup
// shares: the batch (package dedup), the online service (package server and
// its kept sets and stores) and the Beam pipeline. It computes what the
// decision needs of a document (Extractor: fingerprint, token-sequence hash,
// shingle set, prefilter, MinHash band keys), makes the candidate keys of
// each method (band keys, fingerprints), and decides (Rule: the candidate
// test, the exact verification, the keep-first rule).
//
//	opt := rule.Options{}             // the defaults: MinHash LSH candidates, Jaccard >= 0.8
//	r, err := rule.NewRule(opt)       // immutable, shared
//	ex, err := rule.NewExtractor(opt) // one per goroutine
//	a, b := ex.Extract(textA), ex.Extract(textB)
//	if r.Duplicates(&a, &b) { ... }
//	i := r.Match(&doc, kept) // the first of the kept documents (in priority order) that doc duplicates, or -1
//
// It imports the packages below it only (features, minhash, simhash,
// measure, internal/hugepage), never a runner of the decision, so that a
// kept set or a store decides without importing the batch runner.
//
// # The decision
//
// Every caller that decides whether a document is a near-duplicate — the
// batch (dedup.Run, incremental runs too), the online service and the
// distributed pipeline — computes a document's Features with an Extractor
// and decides with one Rule, so that the same documents get the same
// verdict whatever runs them:
//
//   - Rule.Near: the candidate test. Two documents are candidates when they
//     have the same token sequence, or when their SimHash fingerprints are
//     within the k for their lengths (Rule.PairK). With MethodMinHash the LSH
//     bands are the candidate test (Near: they share a band) and exact
//     copies are added. A document with nothing to be near on (no tokens,
//     or under MethodSimHash no profile features: fingerprint 0) matches
//     exact copies only (Rule.ExactOnly).
//   - Rule.Verify: the candidate is confirmed by the exact measure (Jaccard of
//     word shingles by default) at the threshold; equal token sequences always
//     pass.
//   - Rule.Match and KeepFirst: documents are taken in priority order (input
//     order for KeepFirst; see dedup.Options.Keep) and a document is a duplicate only
//     when it is a confirmed candidate of a document already kept; it names the
//     first such kept document in priority order. So every removed document
//     names a kept document it was verified against, at or above the
//     threshold.
//   - Fingerprint-only documents (Features.FingerprintOnly: only a SimHash
//     fingerprint is known, as when the online service starts from an index
//     snapshot) have no verification data. Such a document and another are
//     candidates when their fingerprints are within Rule.PairK, taking the
//     fingerprint-only document to be as long as the other one (so K, or
//     KShort when the other document is short; K when both are
//     fingerprint-only); exact copies cannot be told (no token-sequence
//     hash). Verify passes them, since there is nothing to verify with:
//     Rule.Verified reports false, and the match must be reported as
//     unverified (KeptMatch.Unverified). MethodMinHash has no fingerprints
//     and takes no fingerprint-only documents.
//
// # Why these defaults
//
// SimHash alone misjudges near-duplicates: on testdata/corpora an unweighted
// SimHash of 5-shingles at k <= 3 finds only 14% to 37% of the pairs whose
// shingle Jaccard is at least 0.8 (seeds 001, 002 and 004 warn about short
// texts in particular), so every candidate is verified: Jaccard of word
// 5-shingles >= 0.8, tokenised exactly as the ground truth, which removes
// every false candidate (precision 1 up to hash collisions). What matters is
// the candidate generator, and at scale one property above all: the work per
// document must not grow with the corpus. Measured on web-like corpora made by
// internal/webgen (cmd/neardup-gen; BENCHMARKS.md, "Dedup at scale"):
//
//   - SimHash at k = 12 (the default until issue 19) finds the near-copies
//     (recall 0.9999 at 100K documents), but a self-join within 12 bits of 64
//     can only key on short blocks: its candidates per document grow with n
//     (2.64M pairs at 250K documents, 10.25M at 500K, 9 in 10 rejected), so
//     the run is quadratic.
//   - The prefix filter that the online kept set uses under simhash (exact
//     for Jaccard) keys each document on n - ⌈0.8n⌉ + 1 of its shingles (42
//     on the generated corpus, ~300 for 10 KB), and a shingle of a shared
//     paragraph or of a sentence reused across the corpus is in the prefix
//     of every document holding it: 246 postings to look at per document at
//     100K documents, 2,418 at 1M, so its lists grow with n too.
//   - MinHash LSH keys each document on a fixed number of band keys (24),
//     and two documents share a band with a probability that depends on
//     their Jaccard similarity only, never on the corpus size: 0.9993 at
//     J = 0.8, 0.017 at 0.3, 0.0015 at 0.2. On the generated corpora it finds
//     every planted near-copy at 100K documents with 0.11 candidates per
//     document, and on the shared corpora it meets the accuracy targets
//     (dedup's TestAccuracyCorpora). So it is the default. One permutation hashing
//     with densification makes a signature cost one hash per shingle instead
//     of one per shingle and permutation (38 times less at 100 shingles).
//
// # The prefilter's bound
//
// Rule.PrefilterRejects (prefilter.go) rejects a candidate pair without its
// shingle sets, from 64 bytes a document: the 2-bit codes of 256 bins of one
// permutation hashing of the set (no densification), compared bin by bin.
// For any two sets whose Jaccard similarity is at or above the threshold t,
// the probability (over the hash function) that it rejects them is at most
// PrefilterFalseReject = 1e-9, whatever their sizes: the bins where the
// minimum of the union lies in the intersection agree, their number given
// the F bins that either set occupies is hypergeometric (F draws from the
// union, |A∩B| of them marked), and a pair is rejected only when its
// agreeing bins fall below the count whose Chernoff bound exp(-F·KL(c/F ||
// t)) (Hoeffding 1963, Theorem 4, for draws without replacement) exceeds
// 1e-9. TestPrefilterBound checks it on pairs at exactly t = 0.5, 0.8 and
// 0.9, of 1 to 1,900 shingles each, at 1e-9 (none rejected) and at a bound
// loose enough to measure (no more rejected than binomial draws would be). The
// exact check decides every pair that passes, so the verdicts are the exact
// ones but for that probability; the hash is fixed, so every runner takes
// the same decision for a given pair.
//
// # Formats
//
// This package owns the binary encoding of Features (Features.AppendBinary,
// Sketch.MarshalBinary: binary.go), which the stores keep as their records
// and the kept-set file holds per document, and the versions that name what
// features depend on (SketchVersion, MinHashVersion), which the settings
// strings of stores and kept-set files carry. Golden files elsewhere pin the
// encoding byte for byte (keptfiles/testdata).
//
// # Concurrency
//
// A Rule is immutable and safe for concurrent use. An Extractor keeps
// scratch buffers and is not: use one per goroutine.
package rule
