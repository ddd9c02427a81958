// Package eval measures how well near-duplicate detection settings agree with a
// ground truth of exact Jaccard similarities, on corpora such as those in the
// repository's testdata/corpora directory.
//
//	docs, err := eval.ReadFile("zh_laws.jsonl.zst")
//	truth, err := eval.ComputeTruth(ctx, docs, eval.TruthOptions{})
//	fmt.Println(truth.Count(0.8), truth.DocsIn(0.8), truth.ExactPairs)
//	results, err := eval.Evaluate(ctx, docs, truth, settings, eval.Options{Threshold: 0.8})
//
// # Ground truth
//
// The ground truth is the one the corpora README defines. A token is a Han
// character on its own, or a maximal run of Unicode letters (category L) and
// decimal digits (Nd) with every rune lower-cased; everything else separates
// tokens, and no other normalisation is applied. A document's features are its
// set of 5-token shingles (a document with fewer than 5 tokens is one shingle of
// all its tokens), each hashed as its tokens joined by one space with
// simhash.HashString64 (XXH3). Two documents with different texts are
// near-duplicates at threshold t when the exact Jaccard similarity of their
// shingle sets is at least t.
//
// Two details were needed to reproduce the README's figures exactly, and both
// are part of the definition here. Pairs are counted between distinct texts:
// documents with byte-identical texts are exact duplicates, counted apart
// (Truth.ExactPairs), and a text that occurs several times counts once
// (Truth.Canon maps every document to the first with its text). A text without
// any token (zh_fortunes has four, such as "╮(╯▽╰)╭") has the empty shingle
// set and is a near-duplicate of nothing.
//
// Exact Jaccard over all pairs would be quadratic, so candidates come from
// MinHash-LSH (package minhash, 128 permutations, 32 bands of 4 rows, as the
// README's reference run) over the distinct texts, and every candidate's Jaccard
// is then computed exactly. A pair at similarity s is missed with probability
// (1-s^4)^32: 1.5e-4 at s = 0.7, 5e-8 at s = 0.8, but 0.13 at s = 0.5, so counts
// at 0.7 and above are complete for practical purposes and counts below are
// lower bounds (Truth.MissProbability).
//
// # Scores
//
// A setting predicts pairs of distinct texts: exact duplicates are left out of
// both the prediction and the truth, since every method finds them (identical
// text, identical fingerprint), a deduplicator removes them first by an exact
// hash, and counting them would hide how well near-duplicates are found. Texts
// whose profile yields no features are never predicted.
//
// Pair level: a true positive is a predicted pair whose ground-truth Jaccard
// is at least the threshold; the positives are the truth's pairs at the
// threshold. A predicted pair the truth does not hold is a negative when the
// truth is complete at the threshold (miss probability under 1e-3, true from
// J = 0.7 up with the default banding) and is computed exactly otherwise; a
// computed pair above the threshold that the LSH missed counts as a positive.
//
// Document level: a text is positive when it is in at least one true pair and
// predicted positive when it is in at least one predicted pair; precision,
// recall and F1 are computed over texts. This is what a deduplicator's output
// depends on: a text in a missed pair is often still caught through another
// pair of its cluster. On a corpus without true pairs (en_prose) every
// predicted pair is a false positive, so read the FP counts there.
//
// Verification keeps a candidate when the exact Jaccard of the word 5-shingles
// of a profile's tokens (features.ShingleHashes over Profile.Tokens) reaches
// Options.VerifyThreshold; pairs whose set sizes alone bound the Jaccard below
// it are rejected without a merge. Times cover fingerprints (or signatures),
// the candidate search and verification including its shingle sets; profile
// dictionaries are loaded before any clock starts.
package eval
