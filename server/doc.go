// Package server is the online near-duplicate service behind "neardup
// serve": every new document is checked against everything stored before it,
// and stored when the mode says so.
//
//	st, err := store.OpenPebble("neardup-data", store.PebbleOptions{Settings: server.Settings(opt.Dedup)})
//	// or store.OpenBolt("neardup-data", store.BoltOptions{Settings: ...})
//	if err != nil { ... }
//	s, err := server.New(st, opt)    // opt.Logger, opt.Registry: nil means none
//	if err != nil { ... }
//	go s.Load(ctx)                   // /readyz answers 503 until the index is loaded
//	http.ListenAndServe(addr, s.Handler())
//
// # One decision
//
// The service decides with the batch's code, package rule: a
// rule.Extractor (one per goroutine, from a sync.Pool) computes a
// document's Features, and a kept set under the same rule.Rule holds the
// stored documents in the order they were accepted. A document is
// declined by add_if_new exactly when 'neardup dedup' would remove it had
// the documents arrived in one file in that order, and the document it
// names is the kept one dedup's --duplicates names (online_test checks
// this on two corpora for every store, and 'neardup import' is dedup
// itself).
//
// # The kept set at scale
//
// Over an embedded store the kept set is a keptset.Set (scaled.go), under
// every method and with a snapshot: in memory only each document's
// candidate keys and fingerprint, in pointer-free tables mapped from
// Options.KeptDir (serve: DATA/keptset), whatever its length (under
// MethodMinHash, the default, its 24 LSH band keys: about 145 bytes a
// document; under MethodSimHash its token-sequence hash and the prefix of
// its shingle set, package keptset's notes); a match reads its few
// candidates' records from the store by seq (store.Store.GetSeq) and
// applies the rule to them. Start-up maps the
// parts and replays only the documents stored after the last one
// (LoadFrom), so it takes seconds at any size; Close writes the rest as a
// part, and parts are merged in the background so that a match probes few
// of them. A fingerprint search names its hits with the ids the parts keep
// in their files (keptset.Set.ID), not with a read of the store (parts
// written before ids were kept fall back to the store's GetID). A document
// is pending in the set until its store write lands.
//
// # Durability and order
//
// A document is added to the kept set, given the next sequence number and
// queued for the store under one lock (Server.wmu), so the store receives
// writes in sequence order; the reply waits, outside the lock, for the write
// to be durable. If the write fails the document is removed from the set
// again and the request fails with 503 (a document declined in favour of it
// in the meantime stays declined: the window is one commit). A delete is made
// durable first, then removed from the set. Sequence numbers are the
// priorities, and survive restarts. An add_if_new matches
// before it takes the lock, and under it only against the documents added
// meanwhile (keptset.Set.MatchFrom): the verdict a match under the lock would
// give, without holding it while candidates' records are read.
//
// # Stores
//
// The documents are kept by a store.Store: the embedded engines of package
// store (bbolt or pebble in a data directory, or in memory), whose doc.go has
// their on-disk formats, how they commit and how start-up finds damage; or a
// shared Redis store (below). The Server queues each write to an embedded
// engine under its lock (store.Op; queuer), so the store receives writes in
// sequence order, and waits for it outside the lock. Its puts skip the
// engine's id check: the Server has found the id absent from the store
// (and from the kept set's pending documents) under the lock. /readyz fails while a store reports it cannot take writes
// (storeHealth: a PebbleStore after a failed WAL sync).
//
// # Starting from an index snapshot
//
// Options.Snapshot (serve --snapshot) names an index snapshot ('neardup index
// build --out'); Load gives its ids and fingerprints to the kept set as
// fingerprint-only documents (keptset.Options.FingerprintOnly), ahead of the
// store's documents in priority; they are held in memory, not in its parts.
// They have no verification data: a document matches one when the
// fingerprints are within the rule's k (K, or KShort when the new document
// is short), found through the set's index of fingerprints, and every such
// match is reported with "verified": false. New
// documents go to the store as usual; the snapshot is read, never written,
// and loaded again at every start. A delete of a snapshot document is
// recorded durably in the store (bbolt's "snapshot-deleted" bucket, pebble's
// "s" keys: id and fingerprint), and the next start skips that id while the
// snapshot gives it the same fingerprint, so it stays deleted. An id found
// both in the snapshot and in the store stops start-up with an error naming
// it (the service never lets that happen: the id is taken while the snapshot
// document lives; only another snapshot file can bring it about): Load asks
// the store for each snapshot id.
//
// # Shared store: Redis
//
// A SharedStore is both the store and the Set matched against, shared by
// every server on it: Redis or a Redis Cluster. The Server keeps no
// kept set in front of it. This package imports nothing Redis; one package
// beside the embedded engines satisfies SharedStore, and
// cmd/neardup/command opens it for --store:
//
//   - store/redisstore (format "neardup-redis 5"), under either method:
//     the stateless index, which holds nothing of the index in the server,
//     with seed 004's block keys for fingerprint search. Its layout and
//     atomicity argument are in store/redisstore/REDIS.md.
//
// The store takes the decision settings it records from this package
// (Settings), passed in by the caller, so that imports flow one way.
//
// # Formats
//
// This package writes no file of its own. The data directory is package
// store's (store/doc.go), its DATA/keptset directory package keptset's, a
// snapshot package index's (index/FORMAT.md), the Redis keys
// store/redisstore's (REDIS.md); each record's
// features are the rule's encoding (rule.Features.MarshalBinary). The kept-set
// file of incremental batch runs is not read here: the service's kept set is
// made from the store (and its parts, which are rebuilt from it).
package server
