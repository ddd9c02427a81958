// Package keptset is neardup's one kept set, of the online service over an
// embedded store and of incremental batch runs (package keptfiles), under
// every method: what finds the candidates of a new document among every
// stored one, in memory, with the verification data left in the store.
//
// A document costs the set its candidate keys and its fingerprint, in
// pointer-free tables: under MethodMinHash (the rule's default) its 24 LSH band
// keys, each an entry of 5 bytes (a 16-bit tag of the key and a 3-byte slot,
// in buckets of about 32 entries addressed by the key's top bits), its
// fingerprint (8 bytes) and three bytes in each of the four block tables of
// the fingerprint index (Manku, Jain and Das Sarma's k = 3 tables): about
// 145 bytes, whatever the length of its text. A match looks its keys up (a
// few dozen memory probes a part), orders the candidates by priority (seq),
// drops those whose prefilter (rule.Prefilter, 64 bytes a document, kept in
// the part's file and read from the page cache with a pread: see Ids below)
// rules them out against the new document's, and reads the others' records
// from the store (Records) one at a time until the rule
// (rule.Rule.Duplicates) accepts one: the same rule, the same prefilter
// and the same order as the batch (dedup.Run), and candidates that include every document the rule
// accepts, so the same verdicts; the tests compare them, and the set with the rule tried on every
// kept document, under each method. On
// pages sharing a site's template, whose candidates grow with the number of
// pages stored, the prefilter keeps the records read per match about one
// (TestPrefilterBeforeRecords).
//
// Methods (keys.go). Under MethodMinHash a document's keys are its band
// keys. Under MethodSimHash with Jaccard verification they are its
// token-sequence hash and the hashes of its shingle set's prefix (the
// first |A| - ⌈t·|A|⌉ + 1 of the sorted set: two sets with J >= t share
// one, the prefix filter of Chaudhuri, Ganti and Kaushik, 2006), about 44
// keys for a 1 KB text (5 bytes each, as band keys are); a match drops the
// prefix keys' candidates whose fingerprints (in memory, 8 bytes a
// document) are farther from its own than the rule's largest distance
// (rule.Rule.QueryK: every pair the rule accepts but exact copies is within
// it, so the check never drops one it would accept) before it reads a
// prefilter or a record, then the rule decides on the record as under
// MinHash. A document no key can find (no verification, a shingle set
// sampled at a modulus, none at all; wideDoc) is "wide": it is kept in an
// index of fingerprints (package index, in memory, planned for QueryK,
// rebuilt at Open from the parts' wide bitmaps) and found by a query at
// QueryK, as is every stored document when the new one has no prefix (a
// scan of the fingerprints beyond k = 3). The same index holds the
// fingerprint-only documents (Options.FingerprintOnly: an index
// snapshot's ids and fingerprints, given at every Open, ahead of every
// stored document in priority, never in the parts): the rule decides on
// their fingerprints alone (within rule.Rule.PairK), in memory, and their
// matches are unverified (rule.KeptMatch.Unverified, Seq their position).
//
// Layout. Documents are numbered by seq, their priority. The set is a list
// of immutable parts, each covering a range of at most 1<<24 seqs, mapped
// from files (part.go has the format, persist.go the directory), and a
// mutable delta of the documents added since the last part, with an
// open-addressing index over its entries. When the delta covers
// Options.DeltaSpan seqs it is sorted into a part in the background and
// written; Close writes it too, so a clean restart maps the parts and
// replays nothing. After a crash the documents after the last part are read
// back from the store (Records.LoadFrom); a damaged part is rebuilt from the
// store with a log line. The store is the source of truth: the set's files
// can always be rebuilt from it.
//
// Ids. A fingerprint search (QueryFingerprint) needs no record, only its
// hits' ids: parts of format 2 keep them in their files, after the sections
// matches read, and Set.ID reads one with two preads of the page cache
// (0.9 us at 1M documents, against 7.7 us for the store's read of the
// record's id from pebble, BENCHMARKS.md); those pages are not kept mapped,
// so they cost the disk (~8 bytes and the id a document), not the
// process's memory. The delta keeps its documents' ids in memory. The
// prefilters (format 3) are kept so too, a pread of 64 bytes per candidate:
// a candidate the prefilter drops costs that instead of a record read (13.9
// us from pebble at 30M), and the set stays at ~145 bytes a document of
// memory; format 2 parts have none, and their documents are never dropped
// before their records are read.
//
// Removals set a bit in memory and are appended to a small deletes file for
// parts (not synced: a candidate that the store no longer holds is skipped
// when its record is not found). After a crash the removals that file lost
// still count in Len until the part is rebuilt; the verdicts are not
// affected. A part keeps its removed documents' entries until it is merged.
//
// Merges (merge.go). A service that grows by adds alone writes a part every
// Options.DeltaSpan seqs, and a match probes every part; so parts are
// merged in the background, as a log-structured merge tree's runs are
// (size-tiered). A part's tier is the number of times mergeFanIn (4) goes
// into its span over DeltaSpan's: tier 0 below 4 deltas' spans, tier 1
// below 16, and so on. When mergeFanIn or more adjacent parts share a tier,
// the newest such run is merged into one part (of the next tier when their
// spans are full), less its oldest parts while the merged part would span
// more than Options.PartSpan seqs (at most 1<<24: slots are 3 bytes); and
// an older part of a lower tier than its newer neighbour (what a Close
// leaves: it writes the delta at any size) is merged with it first. A part
// below PartSpan but in the top tier (an import's last part, or a merge's
// trimmed to PartSpan) takes the parts after it once they span an eighth
// of it: no run of its tier could join it within PartSpan, so without that
// rule the adds after it would stay beside it. One
// merge runs at a time; the merged part leaves out the documents removed
// from its sources. The bound, for a service growing by adds alone: at most
// 3 parts in each tier below PartSpan, that is 3·⌈log4(PartSpan/DeltaSpan)⌉
// (9 with the defaults), plus the parts at PartSpan, one per 16.7M seqs: 15
// parts at 10^8 documents where there were 400. A top-tier part that takes
// the parts after it grows by an eighth at least each time, so it is
// rewritten at most 12 times before it reaches PartSpan. Beyond 16.7M documents the
// parts grow in number with the corpus, by one a 16.7M; wider slots would
// be a new part format. Each document is rewritten once a tier, 3 times with
// the defaults.
//
// A merge reads the sources' tables, not the store: a table keeps each
// key's top bits+16 bits (bucket and tag), and format 2 part files keep the
// next 8 bits too (ext, read by merges only, released from memory after the
// checksum). The merged table, with more buckets than its sources, takes its
// buckets and tags from these bits and keeps those left as its own ext: 8
// bits pay for 4 merges of 4 equal parts (each adds 2 bucket bits), 3 with
// the defaults; a run whose sources lack the bits (format 1 parts) is not
// merged. Every table keeps 40 bits at least (2^16 buckets or more, and a
// merge keeps what its sources had up to 8 of ext), what a merge into the
// largest part's 24-bit table needs; a part that keeps fewer (made by a
// merge with a part from before that minimum) could never be merged again,
// so Open rebuilds it from the store, with a log line. The merged table
// is made bucket by bucket (the sources' tables are sorted by those bits)
// in two passes over them, holding one bucket's
// entries, its bucket offsets (4 bytes a bucket, 64 MB at 1<<24 seqs) and
// its live bitmap in memory, its slots and ext bytes in temporary files
// until their sections come; once written the part is mapped beside its
// sources until the switch unmaps them.
//
// The switch is crash-safe: the merged part is written to a temporary file,
// synced and renamed (and the directory synced); then the manifest is
// replaced (written aside, synced, renamed, the directory synced); then the
// sources' files are unlinked. A crash before the manifest's rename leaves
// the sources listed and the merged file unlisted, which Open removes;
// after it, the merged part listed and the sources' files unlisted, which
// Open removes too. Matches go on reading the sources until the switch,
// which happens under the set's lock; removals made during the merge are
// applied to the merged part then (the deletes file has them already).
//
// What a part holds is in its file: its format (part.go: format 4 adds
// the wide bitmap; parts of formats 1 to 3, which MethodMinHash wrote, are
// read as they are, with no wide documents) and the settings its keys were
// made with (Options.Settings, and under MethodSimHash the key scheme and
// the threshold the prefixes were cut at: recordedSettings). A part made
// with other settings, as every part of another method is, is rebuilt from
// the store with a log line, as a damaged one is.
//
// Ownership of formats: this package owns the part files, MANIFEST and
// deletes of its directory (by default DATA/keptset beside the store); the
// store engines (package store) own the records; package keptfiles owns the
// layout of incremental batch runs' kept sets; package rule owns the records'
// feature encoding.
package keptset
