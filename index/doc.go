// Package index finds every stored 64-bit SimHash fingerprint within k bits
// of a query without a scan, as section 3 of Manku, Jain and Das Sarma,
// "Detecting Near-Duplicates for Web Crawling" (WWW 2007) describes, and
// finds all such pairs in a collection (Join, Clusters).
//
//	x, err := index.Build(ids, fps, index.Options{K: 3})  // or index.New + Add
//	matches, err := x.Query(fp, 3, 10)  // nearest first, at most 10
//	for _, m := range matches {
//		fmt.Println(m.ID, m.Distance)
//	}
//	err = x.SaveFile("corpus.ndx")       // later: index.LoadFile("corpus.ndx", index.Options{})
//
// A collection that no longer changes can be frozen into compressed tables
// (about 13 bytes a fingerprint at a billion) and mapped from its file:
//
//	f, err := index.BuildFrozenFile(ctx, index.FileSource("fps.u64"), "corpus.ndf", index.FrozenOptions{K: 3})
//	g, err := index.OpenFrozen("corpus.ndf", index.FrozenOpenOptions{})
//	matches, err := g.Query(fp, 3, 0)   // FrozenMatch{ID, Fingerprint, Distance}
//
// # Tables
//
// A Plan splits the 64 bits into blocks; two fingerprints within k bits
// differ in at most k blocks, so they agree exactly on the key blocks of at
// least one table (the pigeonhole principle). Each table keeps every
// fingerprint permuted so that its key blocks lead, sorted; a query permutes
// itself the same way, finds the run of entries that share its key and checks
// the Hamming distance of those candidates only. Results are exact: nothing
// within k is missed and nothing beyond k is returned. Choose (the planner)
// picks a BlockPlan from the expected size, k and a memory budget and says
// why; Options.Plan or Options.Layout ("seeds-4x16", "manku-20",
// "blocks:K:B") override it. Queries may ask any k up to the plan's K.
//
// # Memory
//
// A table stores only the permuted values, and only their low 64-bb bits:
// the top bb bits (16 for millions of entries, 24 from 64 million) are
// implied by a bucket-offset array, so an entry takes 6 or 5 bytes. The
// table of the identity permutation (every BlockPlan has one) doubles as the
// sorted fingerprint array that maps a matching fingerprint to its compact
// 32-bit internal ids (4 bytes each). Ids live in one byte arena with 4-byte
// offsets, and the id -> internal id map is an open-addressing table of
// 32-bit slots with one-byte tags (about 7 bytes per id). With the planner's
// four tables for k = 3 that is about 39 bytes per fingerprint plus the id
// bytes (47 in all with 8-byte ids at 10 million); see BENCHMARKS.md.
//
// # Writes
//
// The index is a small log-structured merge tree (O'Neil et al., "The
// Log-Structured Merge-Tree", 1996): single adds go to an unsorted memtable
// that every query scans; when it fills it is sorted into an immutable
// segment, and adjacent segments are merged while the older is no larger
// than the younger (a binary counter, so O(log n) segments and O(log n)
// merges per item). AddBulk sorts a whole batch into one segment with radix
// sorts. Remove adds the internal id to a dead set that queries test;
// merges drop removed entries, and once removed ids outnumber live ones
// everything is renumbered and rebuilt (Compact does it on demand). Update
// is Remove plus Add.
//
// # Concurrency
//
// Readers never lock. The index's state is an immutable version (segment
// list, memtable view, dead set, id view) published through an atomic
// pointer; Query, Len, Stats and WriteTo load it once and read only it.
// Writers hold a writer mutex, change their own copy of the state and
// publish a new version at the end of each operation, so each operation is
// atomic for readers. Nothing a published version can reach is written
// again: segments are immutable; the memtable, the id arena and the segment
// list are only appended to past the lengths a version holds (a full
// memtable is sorted from a copy, a merge builds a new segment list); the
// dead set is copied on write, one 8 KiB chunk and the chunk pointers per
// removal. The id hash table, which Contains alone reads, has its own small
// lock held only while a writer changes it and publishes.
//
// Merges of up to 64K items run inside the write that triggers them (a few
// milliseconds, readers unaffected); larger ones run on a background
// goroutine that exists only while such merges are pending. It picks a pair
// of adjacent segments and the dead set D of the moment, marks the pair
// busy, builds the merged segment with no lock held and then, under the
// writer mutex, swaps it in for the pair and publishes. Correctness rests
// on three facts. (1) The pair is still adjacent at the swap: writers only
// append segments and merge pairs that are not busy, and compaction waits
// for the merger to stop. (2) The swap does not change what any query can
// find: an entry (fingerprint, iid) is visible in a version when a segment
// or the memtable holds it and iid is not in the version's dead set; the
// merged segment holds exactly the pair's entries whose iid is not in D, and
// every iid in D is in every later dead set, because dead sets only grow and
// iids are never reused (only compaction renumbers, with the merger
// stopped). (3) Removes made during the merge are not lost: they are in the
// newer dead set that the swap publishes, keyed by iid, and the merged
// segment keeps its entries' iids. So a query sees every add and remove
// completed before it loaded its version, and WriteTo writes one version as
// a whole while writers, merges and queries go on.
//
// # Frozen tables
//
// A Frozen (BuildFrozen, BuildFrozenFile, OpenFrozen) answers the same
// queries for collections that do not change, in under a third of the
// memory (13.3 against 46.7 bytes a fingerprint at 100M): a billion
// fingerprints on one machine, as the crawler of section 3.1.2 of
// the paper (8 billion fingerprints, k = 3) keeps its tables compressed.
// Each table is one Elias-Fano sequence of its permuted fingerprints
// (ef.go): the high h = ceil(log2 n) bits in unary (n + 2^h bits, 2-3 bits
// an entry) and the low 64-h bits packed, plus one 8-byte sample of the bit
// position of every 256th bucket, 64 - h + 2.1 + 0.3 bits an entry. A set
// of n values from 2^64 holds log2 C(2^64, n) ~ n (64 - log2 n + 1.44)
// bits, so no table of full fingerprints can cost less (35.4 bits an entry
// at 1B, 38.8 at 100M): Elias-Fano is within 1 bit of that, and what is
// left to choose is the number of tables.
//
// Layouts. The default for k = 3, flip-2x32, has two tables, keyed by the
// two 32-bit halves, and searches each for the query's key and every key
// one bit from it: two fingerprints within 3 bits differ in at most one bit
// in one of the halves (two halves of 2 or more would be 4 bits). A probe
// is one bucket of the sequence (the key's top h bits, about one entry at
// any n: 0.75 at 100M, 0.93 at 1B), found by its sample and a count of the
// zeros after it; keys that differ only below the high bits share a
// bucket, so a query probes 2 x (1 + min(32, h)) buckets, 56 at 100M and
// 62 at 1B, and reads the low bits of about one entry each. "flip:K:T"
// (T tables of 64/T bits probed within floor(K/T) bits) generalizes it;
// flip:3:3 (three 21-22 bit keys, 66 probes of ~500 entries at 1B) costs a
// table more and reads more (19.9 B/fp and p50 6.0 us at 1M, against 14.1
// and 4.1). The exact plans of an Index (seeds-4x16, four
// tables of 16-bit keys, k = 3) still work, at twice the tables:
//
//	n     h   bits/table  flip-2x32: 2 tables + ids (h bits)  seeds-4x16: 4 tables + ids
//	10M   24  43.1        10.8 + 3.0  = 13.8 B/fp               21.6 + 3.0 = 24.6 B/fp
//	100M  27  39.7         9.9 + 3.4  = 13.3 B/fp               19.8 + 3.4 = 23.2 B/fp
//	1B    30  36.3         9.1 + 3.75 = 12.8 B/fp               18.2 + 3.75 = 21.9 B/fp
//	8B    33  33.3         8.3 + 4.1  = 12.5 B/fp               16.7 + 4.1 = 20.8 B/fp
//
// With seeds-4x16 a query walks each table's run of ~n/2^16 entries
// (1,526 at 100M, 15,259 at 1B), skipping by their high bits those more
// than k bits away and reading the low bits of the rest (~440 a table at
// 1B); from 2^14 buckets a key it visits only the buckets within k bits of
// the query. A flip-2x32 query makes ~60 small random reads instead of
// four long runs, in three passes whose misses overlap (queryBuckets):
// slower where everything is in cache (p50 4.1 against 1.6 us at 1M),
// 3x faster at 100M (7.9 against 24.1 us), 11.5 us at 1B (BENCHMARKS.md,
// issue 36).
//
// Ids are integers (a service's sequence numbers, a user's uint64; a
// position in the input by default), stored once, bit-packed as wide as
// the largest needs, in the order of the identity table (every layout
// has one: the first half's table of flip-2x32): a match found in another
// table is looked up there by value (its bucket holds about one entry) to
// get its rank and so its id. String ids cost only where a caller has
// them: SetNames stores them beside the tables (an arena of bytes and
// 8-byte offsets, indexed by integer id), and a mapped Frozen reads a name
// from the file only for a match, so they stay on disk.
//
// Building is an external sort with bounded memory: one pass over the
// Source cuts it into chunks of FrozenOptions.SortMemory (64 bytes an
// item with two tables sorted at once: 16M items a GiB), radix-sorts each
// chunk once per table and writes it as a run of flat 8-byte words to TempDir (8 bytes an
// item a table, 8 more for the ids: 24 GB at 1B), then a heap merge of each
// table's runs feeds its Elias-Fano writer, which emits the high bits, the
// low bits, the samples and the ids as columns in order. BuildFrozen
// collects them in memory; BuildFrozenFile writes each to its section of
// the snapshot at its offset as it comes, so the build holds no table at
// all: its memory is SortMemory and the merge's buffers, whatever n.
//
// A Frozen's snapshot (FORMAT.md, "Frozen snapshot") is its word columns
// as they lie in memory, each in a 64-byte aligned section with a CRC-32C.
// OpenFrozen maps the file read-only and the queries read the mapping in
// place: opening costs no decode, a restart maps the file instead of
// building, and the resident memory is the pages the queries touch (at
// 1B with flip-2x32 a query touches ~200 random pages, so a serving
// process's resident set grows toward the 12.8 GB file). Opening checks the
// header and every section's checksum (FrozenOpenOptions.NoVerify skips
// the checksums of the large sections and reads only the high bits and
// samples, which it checks against each other, so that no damage can send
// a query outside the file). Snapshots of version 1 (exact layouts only)
// still open.
//
// Self-joins (Join, Clusters; 'neardup pairs' and 'clusters') keep their
// own radix-partitioned tables rather than the frozen ones. Join holds 20
// bytes a fingerprint at k = 3 (8 of input, 12 of one table's entries,
// reused across its tables); frozen tables would save at most the 6-7
// bytes between that and their 13.3-13.8, and only if the input were
// streamed into the external sort instead of held, while a self-join that
// queries them once per fingerprint costs 29x Join's CPU at 10M (65.5
// against 2.3 CPU-s for the same 679,244 pairs, BenchmarkFrozenSelfJoin)
// and about 32x at 100M: ~56 random bucket probes a fingerprint against
// sorting 10 tables in cache-sized buckets. A merge join over the two
// sorted tables (per table, a cursor per flipped key bit decoding the
// sequence in order, no random probes) might cost what Join does; it is
// not built. See BENCHMARKS.md, issue 36, "pairs and clusters".
//
// The service's k = 3 fingerprint search keeps its own tables too, for the
// same kind of reason: a kept-set part (package keptset) holds four block
// tables of 3-byte slots (12 bytes a document) beside a column of the
// fingerprints by slot (8 bytes), which a match reads by slot anyway (the
// fingerprint check before a record read, merges). Frozen tables hold the
// fingerprints' remainders in entries found by value, not by slot, so they
// would replace the 12 bytes by ~13.5 (two tables with slot ids at 10^7
// documents a part) and could not replace the column: no saving.
//
// # Snapshots
//
// WriteTo/Read and SaveFile/LoadFile store the plan, the fingerprints sorted
// and delta-encoded, and the ids, in sections with CRC-32C checksums; see
// FORMAT.md. Tables are rebuilt on load, so a snapshot holds one copy of the
// fingerprints whatever the plan.
package index
