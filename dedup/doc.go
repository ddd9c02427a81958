// Package dedup removes near-duplicate documents from a corpus: the batch
// runner behind "neardup dedup". It decides with package rule (the rule,
// the extractor, the prefilter and their design notes are there); this
// package reads the corpus, finds the candidates at scale and writes the
// outputs.
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
//  1. Read (package corpus: files, directories, stdin; JSONL, text or
//     Parquet; gzip and zstd). Workers compute, per document, a SimHash fingerprint with a
//     features profile, the hash of its word sequence, and its set of word
//     5-shingles; the collector restores input order, so document i is the
//     i-th read, whatever the scheduling.
//  2. Twins (equal word sequences and fingerprints) share one verdict: only
//     the first of each goes on.
//  3. Candidates: MinHash-LSH band keys (the default, rule.MethodMinHash: one
//     permutation hashing, minhash.NewDensified, banded into LSHShape's 24
//     bands of 6 rows), grouped into buckets on disk-backed partitions
//     (bands.go); or, with rule.MethodSimHash, a self-join of the fingerprints
//     (index.Join) at Hamming distance K, and KShort for short documents.
//  4. The keep-first rule (ClusterGreedy, the default; package rule): documents
//     are taken in priority order (input order, or longest first, or by a
//     field), and one is removed only when a candidate already kept confirms
//     it: Jaccard of the shingle sets (or cosine of TF-IDF vectors) at
//     Threshold. It names the first such kept document. Verification is
//     lazy: a candidate pair is checked only when its earlier document is
//     kept, which on version histories skips most of them; and a pair whose
//     prefilters (64 bytes a document in memory, rule/prefilter.go) show it far
//     below the threshold is rejected without reading the shingle sets, so
//     that pages sharing a site's template, at J 0.3-0.5, cost nanoseconds
//     rather than a read each (a pair at or above the threshold is rejected
//     with probability below 1e-9: package rule states the bound). Its Rule
//     and Extractor are the same decision for every caller (incremental
//     runs, the online service, the Beam pipeline), the prefilter included.
//  5. With ClusterComponents instead, clusters are the connected components
//     of the verified pairs (union-find), pairs inside one cluster are not
//     verified again, and the keep policy picks one document per cluster.
//  6. Outputs are written to temporary files, renamed into place only when
//     the whole run succeeded; the kept documents are copied by reading the
//     input a second time (standard input is spooled to a temporary file).
//     An output that is not a regular file (/dev/null, a FIFO, /dev/stdout)
//     is written in place instead, never replaced, and "-" is standard
//     output (internal/outfile). The kept file holds one format: the
//     JSONL lines, Parquet rows under the input's own schema, codec and
//     key-value metadata (row groups no larger than the input's), or for
//     whole text files their paths, so inputs that mix them (a directory
//     of .jsonl and .txt files in Auto format, JSONL and Parquet shards,
//     Parquet files of two schemas) are refused with ErrMixedFormats when
//     Output is asked for. OutputDir writes one shard per input file
//     instead, in its format and under its name, into a hidden temporary
//     directory inside OutputDir renamed shard by shard into place at the
//     end. Annotate writes every document with dup_of, jaccard and cluster
//     added; ReportFormat parquet writes Duplicates and Clusters as Parquet
//     with the JSON field names as columns.
//  7. A run that reads no document from the inputs it was given fails with
//     ErrNoDocuments saying what was skipped (binary files, broken links,
//     bad lines) or which inputs were empty, rather than writing empty
//     outputs; an empty standard input alone is an empty batch.
//
// # Buckets
//
// MinHash LSH is the default candidate method (package rule, "Why these
// defaults", says why). A bucket is never enumerated pair by pair:
// documents are taken in priority order and compared with the kept members
// of their buckets only (bands.go), so a bucket of m copies costs m - 1
// comparisons. SimHash stays for fingerprints: every document the service
// stores has one, and fingerprint searches, pairs, clusters and the index
// work as before; --method simhash keeps the old candidate stage.
//
// # Memory
//
// Per document the run keeps, in pointer-free columns of chunks that never
// move (columns.go): a 64-bit word-sequence hash, the first of its exact
// copies (4 bytes), its token count (4), its id's length (1 byte, and the
// offset of every 64th id: the ids themselves go to a temporary file past
// 64 MiB, ids.go), and while the first pass reads, 8 bytes of offset into
// the shingle sets and the slots of two open-addressing tables, 8 bytes a
// slot for the hashes of the ids (the duplicate-id check) and 4 for the
// twin lookup (keyed by the word-sequence hash column): about 30 bytes a
// document, 50 while reading. A fingerprint (8) and the length (4) are kept
// only when something reads them (rule.MethodSimHash, KeepLongest, an index,
// OnKept). The shingle sets (4 bytes per distinct shingle, about two thirds
// of the size of English text) stay in memory up to Options.SketchBudget
// (256 MiB by default) and past it go to a temporary file in
// Options.TempDir that verification reads back: the sets are exact at every
// size; past Options.SketchDisk (16 GiB) of them, the first pass drops them
// and only the documents with a candidate have theirs read again from the
// input (members.go). The band keys (12 bytes each, 24 a document) go to 256
// partitions, in memory up to 64 MiB and then to temporary files; grouping
// keeps only the keys two or more documents share: a key of two documents
// as a pair (8 bytes, once for all the bands two documents share), a key of
// three or more as a bucket. The documents of a pair or bucket (a quarter
// of them on generated web text) then have their prefilters held in memory,
// 64 bytes each. Under rule.MethodSimHash the candidate pairs are collected, 8
// bytes each; under ClusterComponents they are streamed into verification
// and never collected. Cosine verification keeps a TF-IDF vector per
// document (16 bytes per distinct word) in memory. The command sets a soft
// memory limit (debug.SetMemoryLimit, budget + 512 MiB + a quarter of the
// input's size, at most a third of the machine's memory) so that the
// resident size stays near the live size.
//
// # Incremental mode
//
// With Options.Index, a batch is deduplicated against the documents kept by
// earlier runs, under the same rule: they come first in priority, and a batch
// document that duplicates one of them (verified against the shingle sets
// kept beside the snapshot) is removed in its favour. With UpdateIndex the
// kept documents are added and the set and the snapshot saved atomically.
// A corpus cut in two runs gets the verdicts of one run over the
// concatenation (TestIncrementalEqualsOneRun).
//
// The kept set of earlier runs is not this package's: Run reaches it through
// two interfaces, KeptFiles (declared here) and rule.KeptSet (declared
// beside the match it answers), which the caller passes in
// (Options.KeptFiles; 'neardup dedup' passes keptfiles.Files{}). Package
// keptfiles keeps the set on disk, in the online service's parts (an
// embedded store and keptset's candidate keys), and imports package rule,
// not this one, so imports flow one way.
//
// # Formats
//
// Package rule owns the binary encoding of Features, which the stores keep
// as their records (the kept set of incremental runs among them), and the
// versions that name what features depend on (rule.SketchVersion,
// rule.MinHashVersion); this package writes the settings string of its
// kept set with them (keptSettings). Package keptfiles owns the kept set's
// directory (keptfiles/doc.go), package index the index snapshot
// (index/FORMAT.md), package store the data directory and package keptset
// the files of the kept set at scale.
//
// # Concurrency
//
// Run is safe to call from several goroutines with different options. The
// Progress function is called from one goroutine at a time.
package dedup
