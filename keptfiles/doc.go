// Package keptfiles is the kept set of incremental batch runs ('neardup
// dedup --index PATH', dedup.Options.KeptFiles = keptfiles.Files{}): the
// documents kept by earlier runs, on disk beside the index snapshot at
// PATH, made of the online service's parts: each document's record
// (rule.Features, the rule's encoding) in an embedded store (package store,
// pebble, as 'neardup serve --data' keeps them) and its candidate keys in
// a keptset.Set over that store (package keptset: parts mapped from disk,
// the records read by seq for verification). A batch is matched against it
// with the online service's keys, prefilter and rule, in the same priority
// order, so it gets the verdicts of the in-memory kept set it replaced
// (package keptmem, since removed) and of one run over the concatenation: the tests of
// package dedup (TestIncrementalEqualsOneRun) hold for it.
//
// A run holds in memory the keptset's tables (about 145 bytes a document),
// the snapshot's index of ids and fingerprints (which answers Contains and
// is saved at PATH), pebble's caches, and the records added since the last
// write to the store (4,096 at most); a candidate's record is read from the
// store when it is verified.
//
// # Layout
//
// Beside the snapshot PATH (index/FORMAT.md; 'neardup index query' reads
// it), the directory PATH.kept.d holds:
//
//	LOCK      locked (flock) by the run that has the set open: a second
//	          run on the same set is refused while it is
//	CURRENT   which generation is the set: text lines "neardup kept set 1",
//	          "gen N", "settings S" (the run's settings: a run with other
//	          settings is refused), then "crc C" (CRC-32C of the lines
//	          before it, decimal); replaced atomically (written aside,
//	          synced, renamed, the directory synced)
//	NNNNNN/   generation N (six digits or more), the set saved by one run:
//	  store/    the records: a data directory of package store (pebble),
//	            the document of priority i under seq i (seqs ascend in the
//	            order documents were kept; a removed one leaves a gap)
//	  keptset/  the candidate keys: a directory of package keptset (parts,
//	            MANIFEST, deletes), over store/
//	  index     the snapshot of the generation's ids and fingerprints, in
//	            package index's format: a copy of what is saved at PATH
//
// Nothing else belongs in the directory; Load and New remove what a
// crashed run left there (any other generation).
//
// # Crash safety
//
// A run that updates the set (--update-index) works on generation N+1, a
// copy of generation N that shares its files which are never changed once
// written (pebble's tables and blob files, keptset's parts: hard links)
// and copies the others (pebble's WAL and MANIFEST, keptset's MANIFEST and
// deletes, which are appended to or recycled in place), synced. Adds and
// removals go to N+1 only. Save closes the store (a flush of the memtable)
// and the keptset (its delta written as a part), writes N+1/index, syncs,
// and renames a new CURRENT naming N+1 into place: that rename is the
// commit. Then it removes generation N and writes the snapshot at PATH. So
// after a crash at any point the set is generation N (the run's copy is
// removed by the next run) or N+1, never a mix; a crash between the commit
// and the snapshot's write leaves PATH one run behind the set, which the
// next saved run rewrites. A run without --update-index opens generation N
// itself and changes no document of it.
//
// # Older kept-set files
//
// A neardup before this package kept the set in one file, PATH.kept
// (LEGACY-FORMAT.md, version 1, read by legacy.go, whose tests read
// golden files of the old code, in testdata). When PATH.kept.d has no
// CURRENT and PATH.kept exists, Load converts it: a new generation made of
// its documents in their order, saved as above, and then the file is
// removed. The snapshot at PATH is left as it is (it holds the same
// documents).
//
// # Methods
//
// Package keptset finds candidates by MinHash band keys (the rule's
// default method); under --method simhash Load and New refuse with an
// error wrapping rule.ErrOptions, until keptset finds SimHash candidates.
//
// # Formats
//
// This package owns the directory's layout, CURRENT and LOCK; package store
// owns store/, package keptset keptset/, package index the snapshot, and
// package rule the records' encoding of features.
package keptfiles
