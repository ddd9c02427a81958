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
// # Snapshots
//
// WriteTo/Read and SaveFile/LoadFile store the plan, the fingerprints sorted
// and delta-encoded, and the ids, in sections with CRC-32C checksums; see
// FORMAT.md. Tables are rebuilt on load, so a snapshot holds one copy of the
// fingerprints whatever the plan.
package index
