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
// (about 22 bytes a fingerprint at a billion) and mapped from its file:
//
//	f, err := index.BuildFrozen(ctx, index.FileSource("fps.u64"), index.FrozenOptions{K: 3})
//	err = f.SaveFile("corpus.ndf")
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
// A Frozen (BuildFrozen, OpenFrozen) answers the same queries for
// collections that do not change, at a quarter of the memory: a billion
// fingerprints on one machine, as the crawler of section 3.1.2 of the paper
// (8 billion fingerprints, k = 3) keeps its tables compressed. It uses the
// same plans (seeds-4x16 for k = 3), but each table is one Elias-Fano
// sequence of its permuted fingerprints (ef.go): the high h = ceil(log2 n)
// bits in unary (n + 2^h bits, 2-3 bits an entry) and the low 64-h bits
// packed, plus one 8-byte sample of the bit position of every 256th bucket.
// An entry costs 64 - h + 2.1 + 0.3 bits:
//
//	n       h   low bits   bits/table   4 tables   ids (bits)   in all
//	10M     24  40         43.1         21.6 B     24           24.6 B/fp
//	100M    27  37         39.7         19.8 B     27           23.2 B/fp
//	1B      30  34         36.3         18.2 B     30           21.9 B/fp
//	8B      33  31         33.3         16.7 B     33           20.8 B/fp
//
// A set of n values from 2^64 holds log2 C(2^64, n) ~ n (64 - log2 n + 1.44)
// bits, so no exact table of full fingerprints can cost less than 35.4 bits
// an entry at 1B (38.8 at 100M); Elias-Fano is within 1 bit of that. Four
// tables are the fewest that find every pair within 3 bits (with three, one
// flipped bit in each key hides a pair from all of them), so 17.7 B/fp at 1B
// (19.4 at 100M) is the floor for the tables, before ids. Keeping only a
// key and a pointer to the identity table in the other three tables would
// cost 18 + f bits an entry with f filter bits, but every entry of a key's
// run that passes the filter costs a random read of the identity table: at
// 1B with f = 13, 700 reads a table and a query, far past 200 us.
//
// Ids are integers (a service's sequence numbers, a user's uint64; a
// position in the input by default), stored once, bit-packed as wide as
// the largest needs, in the order of the identity table: a match found in
// another table is looked up there by value (its bucket holds about one
// entry) to get its rank and so its id. String ids cost only where a caller
// has them: SetNames stores them beside the tables (an arena of bytes and
// 8-byte offsets, indexed by integer id), and a mapped Frozen reads a name
// from the file only for a match, so they stay on disk.
//
// A query permutes itself for each table and walks the high bits of its
// key's buckets (2^(h-kb) buckets, ~n/2^kb entries at kb key bits), from
// the sample before them; an entry whose high bits alone differ from the
// query's in more than k places is passed over without reading its low
// bits, and so is a whole sample group of 256 buckets. From 2^14 buckets a
// key (1B) it visits instead only the buckets within k bits of the
// query, in ascending order (470 of 16,384 at 1B, k = 3). Either way the
// low bits of the entries whose high bits pass are read 64 at a time, so
// that their cache misses overlap: those reads, a few hundred misses a
// table at 1B, are most of a query's time. With seeds-4x16 a query reads
// 4 x 1,526 entries' high bits at 100M and 4 x ~440 low fields at 1B. More
// key bits would shorten the runs, but every exact layout with longer keys
// has more tables (blocks:3:5 has 10 tables of 26 bits, manku-20 20 of
// 31-33), and each table costs another ~4.5 B/fp.
//
// BuildFrozen sorts in bounded memory: it counts each table's 16-bit
// prefixes in one pass over the Source, then sorts each table in runs of
// prefixes that fit FrozenOptions.SortMemory, one pass over the Source per
// run, appending each sorted run to the table's Elias-Fano writer. The
// Source, which must yield the same items on every pass (a file, or a
// generator), stands in for the temporary files of an external sort, so
// the build needs no disk beyond the output. Its memory is the tables and
// the ids plus SortMemory.
//
// A Frozen's snapshot (FORMAT.md, "Frozen snapshot") is its word columns
// as they lie in memory, each in a 64-byte aligned section with a CRC-32C.
// OpenFrozen maps the file read-only and the queries read the mapping in
// place: opening costs no decode, a restart maps the file instead of
// building, and the resident memory is the pages the queries touch (the
// id column only at the matches). Opening checks the header and every
// section's checksum (FrozenOpenOptions.NoVerify skips the checksums of
// the large sections and reads only the high bits and samples, which it
// checks against each other, so that no damage can send a query outside
// the file).
//
// # Snapshots
//
// WriteTo/Read and SaveFile/LoadFile store the plan, the fingerprints sorted
// and delta-encoded, and the ids, in sections with CRC-32C checksums; see
// FORMAT.md. Tables are rebuilt on load, so a snapshot holds one copy of the
// fingerprints whatever the plan.
package index
