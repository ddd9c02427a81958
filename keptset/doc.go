// Package keptset is the online service's kept set at scale: what finds the
// candidates of a new document among every stored one, in memory, with the
// verification data left in the store.
//
// A document costs the set its candidate keys and its fingerprint, in
// pointer-free tables: under MethodMinHash (dedup's default) its 24 LSH band
// keys, each an entry of 5 bytes (a 16-bit tag of the key and a 3-byte slot,
// in buckets of about 32 entries addressed by the key's top bits), its
// fingerprint (8 bytes) and three bytes in each of the four block tables of
// the fingerprint index (Manku, Jain and Das Sarma's k = 3 tables): about
// 145 bytes, whatever the length of its text. A match looks its keys up (a
// few dozen memory probes a part), orders the candidates by priority (seq)
// and reads their records from the store (Records) one at a time until the
// rule (dedup.Rule.Duplicates) accepts one: the same keys, the same rule and
// the same order as the batch (dedup.Run) and the in-memory dedup.Kept, so
// the same verdicts; the tests compare them.
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
// Removals set a bit in memory and are appended to a small deletes file for
// parts (not synced: a candidate that the store no longer holds is skipped
// when its record is not found). After a crash the removals that file lost
// still count in Len until the part is rebuilt; the verdicts are not
// affected. The parts keep the removed documents' entries: nothing yet
// rewrites or merges parts, so a service that grows by adds alone makes a
// part every Options.DeltaSpan documents (a bulk import makes them 16.7M
// documents each), and a match probes every part.
//
// Ownership of formats: this package owns the part files, MANIFEST and
// deletes of its directory (by default DATA/keptset beside the store); the
// store engines (package store) own the records; dedup owns the kept-set
// file of incremental batch runs and the records' feature encoding.
package keptset
