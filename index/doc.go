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
// segment, and the youngest segments are merged while the one before is not
// larger (a binary counter, so O(log n) segments and O(log n) merges per
// item). AddBulk sorts a whole batch into one segment with radix sorts.
// Remove sets a bit per internal id that queries test; merges drop removed
// entries, and once removed ids outnumber live ones everything is renumbered
// and rebuilt (Compact does it on demand). Update is Remove plus Add.
//
// # Snapshots
//
// WriteTo/Read and SaveFile/LoadFile store the plan, the fingerprints sorted
// and delta-encoded, and the ids, in sections with CRC-32C checksums; see
// FORMAT.md. Tables are rebuilt on load, so a snapshot holds one copy of the
// fingerprints whatever the plan.
package index
