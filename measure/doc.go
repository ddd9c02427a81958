// Package measure holds exact similarity measures used to confirm SimHash
// candidates and to give users a second opinion: Jaccard similarity of sets
// of feature hashes, cosine similarity of weighted term vectors and
// Levenshtein edit distance of short strings.
//
// It knows nothing about text processing: callers turn text into hashes or
// weighted terms (package features does that) and hand them in.
//
//	a := measure.NewSet([]uint64{1, 2, 3})
//	b := measure.NewSet([]uint64{2, 3, 4})
//	j := measure.Jaccard(a, b) // 0.5
//
//	u := measure.NewVector([]measure.Term{{Key: 1, Weight: 1}, {Key: 2, Weight: 1}})
//	v := measure.NewVector([]measure.Term{{Key: 1, Weight: 1}})
//	c := measure.Cosine(u, v) // 0.7071...
//
//	d := measure.Levenshtein("kitten", "sitting") // 3
//
// All functions are pure and safe for concurrent use. Sets and vectors are
// plain sorted slices so that they can be built once, kept, and compared in
// linear time by a merge walk.
//
// Conventions for degenerate inputs, chosen so that two empty documents count
// as identical (they are, byte for byte) while an empty document is never
// similar to a non-empty one:
//   - Jaccard of two empty sets is 1; of one empty set and a non-empty one, 0.
//   - Cosine of two zero vectors is 1; of a zero vector and a non-zero one, 0
//     (seed 001's ComputeCosineSimilarity returns 0 whenever a norm is 0; we
//     differ only for the both-zero case).
//   - LevenshteinSimilarity of two empty strings is 1.
package measure
