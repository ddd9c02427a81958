// Package pipeline is "neardup dedup" as an Apache Beam pipeline: the same
// verdicts as dedup.Run (the keep-first rule of dedup.Rule over documents in
// input order), computed by transforms that a runner spreads over machines.
// It runs in process on Beam's pure-Go prism runner and unchanged on Flink,
// Spark or Dataflow through their portable runners.
//
//	p, s := beam.NewPipelineWithRoot()
//	res, err := pipeline.Dedup(s, pipeline.Options{
//		Inputs: []string{"gs://bucket/crawl-*.jsonl.zst"},
//		Output: "gs://bucket/kept.jsonl",
//	})
//	if err != nil { ... }
//	_ = res // the PCollections, for tests and further transforms
//	err = beamx.Run(ctx, p)
//
// # Transforms
//
//  1. Read: every input file on one worker, through package corpus (JSONL,
//     lines or whole files; gzip and zstd), so ids, line numbers and bad-line
//     handling are the batch's. A document's position is file index<<40 |
//     line: input order, which decides keep-first.
//  2. Features: dedup.Extractor per document (fused with Read, so text is
//     never shuffled; only the original line, for the output join).
//  3. Candidates: each document is keyed by the key blocks of every table of
//     index.PlanJoin(n, Rule.QueryK()) (n counted first, a side input), by its
//     token-sequence hash, or with --method minhash by its LSH band keys
//     (minhash.LSH.BandKeys at dedup.Options.LSHShape). Within a key group a
//     pair is emitted when Rule.Near holds, and for a SimHash table only by the
//     first table whose key the pair agrees on (as index.Join does). Keys with
//     more than MaxBucket entries (counted first) are split into s shards by a
//     hash of the position, each entry sent to the s shard pairs (i, j) with
//     i <= j it belongs to, so no worker holds more than 2·MaxBucket entries
//     of one key and every pair is still seen once.
//  4. Distinct pairs.
//  5. Components: the connected components of the candidate graph by
//     alternating large-star and small-star rounds (Kiveris, Lattanzi,
//     Mirrokni, Rastogi, Vassilvitskii, "Connected Components in MapReduce and
//     Beyond", SoCC 2014, section 3), a fixed number of rounds (the graph of
//     a pipeline is static), then a check that every candidate edge joins two
//     documents with one label: if not, the run fails and asks for more
//     rounds rather than give a verdict the batch would not.
//  6. Decide: per component, its documents' features and pairs, sorted by
//     position, go to dedup.Rule.KeepFirst: the rule restricted to a
//     component gives the batch's answer, since no pair leaves it.
//  7. Outputs: kept lines, dedup.Duplicate and dedup.Cluster objects, each
//     file sorted into input order on one worker (as the batch writes them).
//
// # Differences from dedup.Run
//
// Only the keep-first rule with Jaccard verification (no --keep longest or
// field, no components clustering, no cosine, no index). Shingle sets are
// never sampled: the batch samples past its sketch budget (256 MiB), and then
// its verdicts can differ. Twins are not folded before the candidate stage:
// m identical documents make m(m-1)/2 pairs, spread over workers by the hot
// key split. Duplicate ids are not checked.
//
// Metrics (namespace "neardup"): documents, bad_inputs, candidates,
// components, verified, removed.
package pipeline
