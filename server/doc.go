// Package server is the online near-duplicate service behind "neardup
// serve": every new document is checked against everything stored before it,
// and stored when the mode says so.
//
//	store, err := server.OpenBolt("neardup-data", server.BoltOptions{Settings: server.Settings(opt.Dedup)})
//	if err != nil { ... }
//	s, err := server.New(store, opt) // opt.Logger, opt.Registry: nil means none
//	if err != nil { ... }
//	go s.Load(ctx)                   // /readyz answers 503 until the index is loaded
//	http.ListenAndServe(addr, s.Handler())
//
// # One decision
//
// The service decides with the batch dedup's code: a dedup.Extractor (one per
// goroutine, from a sync.Pool) computes a document's Features, and a
// dedup.Kept under the same dedup.Rule holds the stored documents in the
// order they were accepted. Mode add_if_new is Kept.AddIfNew: a document is
// declined exactly when 'neardup dedup' would remove it had the documents
// arrived in one file in that order, and the document it names is the kept
// one dedup's --duplicates names (server_test checks this on two corpora).
//
// # Durability and order
//
// A document is added to Kept, given the next sequence number and queued for
// the store under one lock (Server.wmu), so the store receives writes in
// sequence order; the reply waits, outside the lock, for the write to be
// durable. If the write fails the document is removed from Kept again and the
// request fails with 503 (a document declined in favour of it in the
// meantime stays declined: the window is one commit). A delete is made durable first, then removed from
// Kept. At start-up Load replays the store in sequence order into Kept, so the
// priorities survive restarts.
//
// # Embedded store: bbolt
//
// BoltStore keeps everything in one bbolt file (DATA/neardup.db). bbolt was
// chosen over pebble because the service's access pattern is what a B+tree
// with a single writer does well: appends in key order (big-endian sequence
// numbers), one sequential scan at start-up, rare point reads and deletes. It
// is one small dependency with no background compactions competing with
// queries for the two cores, and a transaction commits with one fsync, so
// group commit (one committer goroutine draining a channel into one read-write
// transaction, up to 4096 writes) amortises the fsync over concurrent
// requests. Pebble's LSM would write faster under heavy random-key load, which
// this service does not have; we did not measure it (see BENCHMARKS.md).
//
// Layout (format "neardup-serve 1"; all integers big-endian or uvarint):
//
//	bucket "meta"  "format"   -> "neardup-serve 1"
//	               "settings" -> "profile=P verify=V shingle=W" (refused if different at start-up)
//	bucket "docs"  seq (8 bytes big-endian) -> uvarint len(id) ‖ id ‖ uvarint len(f) ‖ f ‖ meta
//	               f = dedup.Features.MarshalBinary (fingerprint, token-sequence hash, counts, shingle set)
//	               meta = the document's metadata as compact JSON, or nothing
//	bucket "ids"   id -> seq (8 bytes big-endian)
//	bucket "snapshot-deleted"  id -> fingerprint (8 bytes big-endian): deleted snapshot documents
//
// Keys of "docs" sort in acceptance order, so a cursor scan reloads Kept in
// priority order; "ids" serves GET and DELETE.
//
// # Starting from an index snapshot
//
// Options.Snapshot (serve --snapshot) names an index snapshot ('neardup index
// build --out'); Load adds its ids and fingerprints to Kept first, as
// fingerprint-only documents (dedup.Kept.AddFingerprints), then the store's
// documents behind them in priority. They have no verification data: a
// document matches one when the fingerprints are within the rule's k (K, or
// KShort when the new document is short), found through Kept's Hamming
// index, and every such match is reported with "verified": false. New
// documents go to the store as usual; the snapshot is read, never written,
// and loaded again at every start. A delete of a snapshot document is
// recorded durably in the store's "snapshot-deleted" bucket (id and
// fingerprint), and the next start skips that id while the snapshot gives it
// the same fingerprint, so it stays deleted. An id found both in the
// snapshot and in the store stops start-up with an error naming it (the
// service never lets that happen: the id is taken while the snapshot
// document lives; only another snapshot file can bring it about).
//
// # Shared store: Redis
//
// OpenRedis returns a SharedStore: Redis (or a Redis Cluster) is both the
// store and the Set matched against, shared by every server on it. The
// Server keeps no Kept in front of it; the store keeps its own, a replica
// that follows a change log in Redis and is brought to the log's head before
// every request that reads it (or, in direct mode, reads Redis for every
// match). The layout, the write lock that makes add_if_new atomic across
// servers, the replica, and why they are safe are in REDIS.md.
package server
