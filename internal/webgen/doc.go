// Package webgen generates web-like corpora of any size, deterministically
// and without downloaded data, with planted duplicates whose exact Jaccard
// similarity is known, and checks a dedup's removals against them.
//
//	pool, err := webgen.LoadPool(prose, gitdocs, spdx) // the shared corpora's sentences
//	g, err := webgen.New(pool, webgen.Options{Seed: 1})
//	err = g.Write(ctx, w, 0, 1_000_000, 0) // JSON lines, byte-identical for any worker count
//
// A document is 300 bytes to 2 KB of real sentences (three at least) drawn
// at random from the pool (the distinct sentences of the shared English
// corpora), so two documents share almost nothing. Of all documents (Options):
//
//   - 10% are near-copies of an earlier original, chosen uniformly among all
//     earlier originals (at 10M documents the original is typically millions
//     of documents back), with words replaced, inserted or deleted until the
//     exact word 5-shingle Jaccard to the original (eval's ground truth, the
//     tokenisation dedup verifies with) lies in [0.80, 0.95]; a tenth of them
//     are controls in [0.50, 0.80), which a dedup at 0.8 must keep;
//   - 2% are exact copies of an earlier original;
//   - 30% carry one of 2,000 shared boilerplate paragraphs (200 to 600 bytes
//     of pool sentences) at the start or the end, and, with Options.Hot, a
//     given fraction carry one hot paragraph of 200 to 300 bytes (the
//     hot-key test).
//
// Copies inherit their original's paragraphs, so the fractions hold over all
// documents.
//
// Every document is a pure function of (pool, options, document number): its
// random decisions come from PCG streams seeded by the seed, the number and
// the decision's tag. A copy regenerates its original on demand, so
// generation runs in parallel chunks and memory does not grow with the
// corpus. Each copy's JSON line carries the truth:
//
//	{"id":"d0000000123","text":"...","planted":{"of":"d0000000042","kind":"near","jaccard":0.8312}}
//
// Check reads such a corpus and dedup's duplicates file and reports recall of
// the planted near-copies, exact copies removed, controls wrongly removed,
// and removals whose recomputed Jaccard is below the threshold.
package webgen
