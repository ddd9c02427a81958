// Package dedup removes near-duplicate documents from a corpus: the pipeline
// behind "neardup dedup".
//
//	sum, err := dedup.Run(ctx, []string{"crawl.jsonl.zst"}, dedup.Options{
//		Output:     "kept.jsonl",      // kept documents, lines untouched
//		Duplicates: "dups.jsonl",      // one object per removed document
//	})
//	if err != nil { ... }
//	fmt.Println(sum.Docs, sum.Kept, sum.Removed)
//
// # Pipeline
//
//  1. Read (package corpus: files, directories, stdin; JSONL or text; gzip and
//     zstd). Workers compute, per document, a SimHash fingerprint with a
//     features profile, the hash of its word sequence, and its set of word
//     5-shingles; the collector restores input order, so document i is the
//     i-th read, whatever the scheduling.
//  2. Twins (equal word sequences and fingerprints) share one verdict: only
//     the first of each goes on.
//  3. Candidates: a self-join of the fingerprints (index.Join) at Hamming
//     distance K, and KShort for short documents; or, with MethodMinHash,
//     MinHash signatures banded into an LSH index (minhash.BandsRows picks
//     bands and rows for the threshold, as datasketch and text-dedup do).
//  4. The keep-first rule (ClusterGreedy, the default; rule.go): documents
//     are taken in priority order (input order, or longest first, or by a
//     field), and one is removed only when a candidate already kept confirms
//     it: Jaccard of the shingle sets (or cosine of TF-IDF vectors) at
//     Threshold. It names the first such kept document. Verification is
//     lazy: a candidate pair is checked only when its earlier document is
//     kept, which on version histories skips most of them. Rule and
//     Extractor are the same decision for every caller (incremental runs,
//     the online service, the Beam pipeline).
//  5. With ClusterComponents instead, clusters are the connected components
//     of the verified pairs (union-find), pairs inside one cluster are not
//     verified again, and the keep policy picks one document per cluster.
//  6. Outputs are written to temporary files, renamed into place only when
//     the whole run succeeded; the kept documents are copied by reading the
//     input a second time (standard input is spooled to a temporary file).
//     An output that is not a regular file (/dev/null, a FIFO, /dev/stdout)
//     is written in place instead, never replaced, and "-" is standard
//     output (internal/outfile). The kept file holds one kind of line: the
//     JSONL lines, or for whole text files their paths, so inputs that mix
//     the two (a directory of .jsonl and .txt files in Auto format) are
//     refused with ErrMixedFormats when Output is asked for.
//  7. A run that reads no document from the inputs it was given fails with
//     ErrNoDocuments saying what was skipped (binary files, broken links,
//     bad lines) or which inputs were empty, rather than writing empty
//     outputs; an empty standard input alone is an empty batch.
//
// # Why these defaults
//
// SimHash alone misjudges near-duplicates: on ../shared/corpora an unweighted
// SimHash of 5-shingles at k <= 3 finds only 14% to 37% of the pairs whose
// shingle Jaccard is at least 0.8 (seeds 001, 002 and 004 warn about short
// texts in particular). Here SimHash is only a candidate generator, tuned for
// recall: word features (profile en-words: Unicode words without stopwords,
// every Han character a token, which tracks the character-shingle ground truth
// of Chinese text better than segmented words) at k = 12 (KShort can widen
// it for documents under 64 tokens). At that distance the ground-truth pairs of every shared
// corpus are found (document recall >= 0.99) while random pairs rarely are.
// Verification at Jaccard >= 0.8, tokenised exactly as the ground truth, then
// removes every false candidate, so precision is 1 up to hash collisions.
// BENCHMARKS.md ("Dedup") has the figures and the commands.
//
// # Memory
//
// Per document the run keeps its id, a 64-bit fingerprint, a 64-bit
// word-sequence hash, a few 32-bit counters, and its shingle set: 4 bytes
// per distinct shingle, about two thirds of the size of English text. The
// sets are bounded by Options.SketchBudget (256 MiB by default): past it they
// are thinned with Broder's MOD_m sampling (see sketch.go), so a 1.3 GB corpus
// keeps at most the budget plus about 60 bytes and the id per document, and
// never its text (only the batches in flight: a few MB, or one huge document).
// Under the keep-first rule the candidate pairs are collected, 8 bytes each
// (392,779 for en_gitdocs_dev at k = 12: 3.1 MB; 12 more bytes per document
// under --keep longest or --keep-field for the priority order); under
// ClusterComponents they are streamed into verification and never collected.
// The duplicate-id check adds a map of the ids and 8 bytes per
// document unless AllowDuplicateIDs is set. Cosine verification keeps a
// TF-IDF vector per document (16 bytes per distinct word) outside the budget.
// The shingle sets are freed before the output pass. Go's collector lets the
// heap reach twice the live data; the command sets a soft limit
// (debug.SetMemoryLimit, budget + 512 MiB) so that the resident size stays near
// the live size: 833 MB for the 1.3 GB Linux tree, 432 MB for the 166 MB
// en_gitdocs_dev (BENCHMARKS.md).
//
// # Incremental mode
//
// With Options.Index, a batch is deduplicated against the documents kept by
// earlier runs, under the same rule: they come first in priority, and a batch
// document that duplicates one of them (verified against the shingle sets in
// the kept-set file beside the snapshot, FORMAT.md) is removed in its favour.
// With UpdateIndex the kept documents are added and both files saved
// atomically. A corpus cut in two runs gets the verdicts of one run over the
// concatenation (TestIncrementalEqualsOneRun), as long as neither run had to
// sample its sketches (the budget).
//
// # Concurrency
//
// Run is safe to call from several goroutines with different options. The
// Progress function is called from one goroutine at a time.
package dedup
