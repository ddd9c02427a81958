// Package eval measures how well near-duplicate detection settings agree with a
// ground truth of exact Jaccard similarities, on corpora such as those in the
// project's shared corpora directory.
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
// shingle sets is at least t. Documents with byte-identical texts are exact
// duplicates, counted apart (Truth.ExactPairs) and never counted as
// near-duplicate pairs.
//
// Exact Jaccard over all pairs would be quadratic, so candidates come from
// MinHash-LSH (package minhash, 128 permutations, 32 bands of 4 rows, as the
// README's reference run) over the distinct texts, and every candidate's Jaccard
// is then computed exactly. A pair at similarity s is missed with probability
// (1-s^4)^32: 1.5e-4 at s = 0.7, 3e-8 at s = 0.8, but 0.13 at s = 0.5, so counts
// at 0.7 and above are complete for practical purposes and counts below are
// lower bounds (Truth.MissProbability).
//
// # Scores
//
// A setting predicts a set of document pairs. Pairs between identical texts
// are left out of both the prediction and the truth: every method finds them
// (identical text, identical fingerprint), a deduplicator removes them first by
// an exact hash, and counting them would hide how well near-duplicates are found.
// Pair level: a true positive is a predicted pair whose Jaccard is at least the
// threshold. Document level: a document is positive when it is in at least one
// true pair, predicted positive when it is in at least one predicted pair;
// precision, recall and F1 are then computed over documents. The document level
// is what a deduplicator's output depends on: a document in a missed pair is
// often still removed through another pair of its cluster.
package eval
