// Package store keeps the online service's documents durably: the Record
// of each (its priority Seq, id, features and metadata) behind the Store
// interface, with two embedded engines, bbolt (BoltStore) and pebble
// (PebbleStore), chosen per data directory, and MemStore in memory.
//
//	st, err := store.OpenPebble("neardup-data", store.PebbleOptions{Settings: settings})
//	if err != nil { ... } // ErrDamaged, ErrLocked, ErrStoreFormat name the file or directory
//	defer st.Close()
//	err = st.Put(ctx, store.Record{Seq: 0, ID: "a", Features: f})
//	err = st.Load(ctx, func(r store.Record) error { ... }) // ascending Seq
//
// The package owns every file of the data directory but DATA/keptset
// (package keptset's): ENGINE (engine.go), ACKED (acked.go), bbolt's
// neardup.db and pebble's pebble/ (below); a record's features inside them
// are the rule's encoding (rule.Features.MarshalBinary). The service (package
// server) decides what to store; package storetest is the behaviour every
// Store must have, run against each engine.
//
// # Engines: bbolt and pebble
//
// The data directory holds one of two engines, chosen when it is made
// ('neardup serve --engine'; DefaultEngine, pebble, for a new directory)
// and recorded in DATA/ENGINE
// ("bbolt" or "pebble"); OpenBolt and OpenPebble refuse a directory the other
// made (a directory without the file is bbolt's if it holds neardup.db).
// Both keep the same records under the same keys, answer the Server's queue
// in sequence order under its lock, and acknowledge a write only once it is
// fsynced; they differ in how a commit reaches the disk. BENCHMARKS.md
// ("Embedded store: bbolt vs pebble") has the measurements and the reason
// for the default.
//
// BoltStore keeps everything in one bbolt B+tree file (DATA/neardup.db). One
// committer goroutine drains the queue (up to 4096 writes) into one read-write
// transaction: the records append in key order (big-endian sequence numbers),
// the id index takes random inserts, and the commit writes the dirty pages,
// fsyncs, writes the meta page and fsyncs again. One small dependency, no
// background work.
//
// Layout (format "neardup-serve 1"; all integers big-endian or uvarint):
//
//	bucket "meta"  "format"   -> "neardup-serve 1"
//	               "settings" -> "profile=P verify=V shingle=W sketch=S" (refused if different at start-up;
//	               under method minhash "method=minhash perms=N bands=B rows=R threshold=T verify=V
//	               shingle=W sketch=S minhash=M", M being rule.MinHashVersion)
//	               "writes"   -> writes committed (8 bytes big-endian), see "Damage" below
//	bucket "docs"  seq (8 bytes big-endian) -> uvarint len(id) ‖ id ‖ uvarint len(f) ‖ f ‖ meta
//	               f = rule.Features.MarshalBinary (fingerprint, token-sequence hash, counts, shingle set)
//	               meta = the document's metadata as compact JSON, or nothing
//	bucket "ids"   id -> seq (8 bytes big-endian)
//	bucket "snapshot-deleted"  id -> fingerprint (8 bytes big-endian): deleted snapshot documents
//
// Keys of "docs" sort in acceptance order, so a cursor scan reloads the
// kept set in priority order (LoadFrom seeks to a seq first, GetSeq reads
// one key); "ids" serves GET and DELETE.
//
// PebbleStore keeps the same maps in one pebble LSM tree
// (DATA/pebble/), each key led by a byte naming its map:
//
//	"m" ‖ "format"   -> "neardup-serve 1"
//	"m" ‖ "settings" -> as in bbolt
//	"m" ‖ "writes"   -> writes applied (8 bytes big-endian), set by every write's batch; see "Damage"
//	"d" ‖ seq (8 bytes big-endian) -> the record, encoded as in bbolt's "docs"
//	"i" ‖ id -> seq (8 bytes big-endian)
//	"s" ‖ id -> fingerprint (8 bytes big-endian): deleted snapshot documents, as bbolt's "snapshot-deleted"
//
// Reads: a record or id read looks in each level whose tables' key ranges
// hold the key, and a flush writes records and ids into the same tables,
// so a key's range spans every table of the upper levels. The tables of
// L0-L5 carry Bloom filters (10 bits a key) that answer for a level not
// holding the key; the tables a compaction writes to L6, which holds most
// keys, carry none (a table moved down whole keeps its filter). The block cache
// (PebbleOptions.CacheSize, 64 MB) holds the index and filter blocks each
// read goes through. Both came from 30M documents, where a search's record
// reads went through five levels and pebble's default 8 MB cache
// (BENCHMARKS.md, "30.09M stored"). A read from a table pebble does not
// hold open opens it first (footer, properties, index); the tables kept
// open (PebbleOptions.MaxOpenFiles) default to three quarters of the
// process's open-file limit rather than pebble's 1,000, which 30M documents
// outgrow (1,131 tables; ~38 per million documents).
//
// The Server's queue builds one pebble batch per write and applies it with
// ApplyNoSyncWait under the store's lock (itself taken under the Server's),
// which puts it in the WAL and the memtable in sequence order; the wait is
// Batch.SyncWait. Pebble's commit pipeline syncs the WAL once for all the
// batches written while the previous sync ran, so concurrent writers share
// one sequential append and one fsync (group commit without a committer of
// ours). The commit batch size metric counts the writes each WAL fsync
// covered (the store wraps the WAL files' Sync).
//
// Put and Delete look the id up first and give ErrExists and ErrNotFound as
// bbolt does. The Server's puts skip that read: the Server has found the id
// absent from its kept set under its write lock, and in an LSM tree the
// read of an absent key searches every level (at 1M documents it was most of
// the store's CPU and halved its write rate).
//
// A failed WAL sync (a full disk) leaves writes in the memtable that may not
// be durable, so the store then refuses every write (503) and the Server is
// not ready (/readyz fails: storeHealth) until a goroutine of the store has
// reopened pebble. Every second it tries fallocate for a MiB; once that
// succeeds it closes pebble, without holding a lock (closing waits for
// pebble's flushes, which retry until the disk has room for them; reads
// fail meanwhile), reopens it and undoes, in one synced batch, the writes
// whose sync failed (they may have reached the WAL anyway: each write keeps
// its inverse until its sync returns); the batch succeeding shows writes
// work again.
// bbolt needs none of this: a failed commit is rolled back. Deletes write
// tombstones: a deleted record is gone from every read at once and from the
// files when compactions reach it (bbolt likewise leaves it in free pages
// until they are reused). Close flushes the memtable, so a clean restart
// replays no WAL; after kill -9 pebble replays the WAL not yet flushed (a
// 64 MiB memtable or two) and drops a torn tail, which holds no acknowledged
// write (a damaged record is another matter: see "Damage"). The format
// major version is pinned (FormatValueSeparation, pebble v2.1), so a later
// pebble does not rewrite the files to a version this
// build cannot read. Pebble reserves disk space (fallocate) for 110% of
// MemTableSize at the start of each WAL, and keeps old WALs to recycle: 71
// to 213 MB for a store of 600 documents. The store's WAL files reserve
// instead as much again as they hold, from 256 KiB up to pebble's size
// (walFile), so a small store's directory stays under 10 MB
// (TestTinyStoreSize) and a bulk load still writes into reserved blocks.
//
// # Damage
//
// Start-up finds a damaged file before the server listens ('neardup serve'
// loads an embedded store before it listens), reading the records once.
// OpenPebble opens the database read-only first, which replays the WAL
// (a damaged MANIFEST or WAL fails here) and gives the write count for the
// ACKED check below, before a read-write open changes anything; then,
// read-write, it reads every key and value but the records ("m", "i", "s"),
// and Load reads the records ("d"). Pebble checks each block's checksum as
// it reads it; its fatal DataCorruption default is replaced, so the read
// returns the error, and its panics on some damaged blocks are recovered.
// Pebble's background errors (a compaction that reads a damaged table
// before Load does) are held until the first Load or write, and dropped
// when Load fails on a damaged file, which its error names. At 100M
// documents the records are most of the store: the read-only pass over all
// of it that OpenPebble made before Load read it again is gone.
//
// The service's kept set at scale (package keptset, the default) changes
// what start-up reads: with its parts in place, Load is not called; only the
// records stored after the last part are read (LoadFrom), so start-up takes
// seconds at any size, and damage to an older record's table is found by
// the read that reaches it (a candidate's verification, a GET: the error
// names the file) rather than before the server listens. A start without
// the parts (the first start on an old store, a damaged part) reads every
// record, as above. OpenPebble's own checks (WAL, MANIFEST, ACKED) run at
// every start.
//
// OpenBolt still reads every bucket of a read-only open, on its own
// goroutine with panics on fault, and runs bbolt's page check (Tx.Check)
// there to its end, before the read-write open whose free-list rebuild
// makes the same check on a goroutine of bbolt's (a damaged page there
// ends the process: a failed check rolls back the transaction its
// goroutine still reads), and Load reads the records again.
//
// A damaged file is an error wrapping ErrDamaged, one line naming the file.
// bbolt keeps no checksums: a damaged value that still parses shows when
// Load decodes it, as ErrDamaged naming the file. A directory another
// process has open is ErrLocked naming it (bbolt waits BoltOptions.Timeout
// for its lock first).
//
// Pebble treats an unreadable record in the last WAL as a write torn by the
// crash and drops it with the rest of its 32 KiB block; bbolt opens its
// older meta page when the newer is damaged. Either loses acknowledged
// writes without a word, so both stores count them: every write (a
// document added or deleted) stores its number in "writes", and once it is
// durable the number is written over DATA/ACKED (16 bytes: "NDACKED1", the
// number big-endian), which is not fsynced: it reaches the disk after the
// write, so it never counts a write the store lacks, and survives kill -9
// in the page cache. A store whose "writes" is below ACKED's count has lost
// that many acknowledged writes: open refuses it (ErrDamaged naming the
// damaged or cut WAL, or the bbolt file). Options.Recover ('neardup serve
// --force-recover') opens it with what could be read, logs
// documents_dropped, and resets ACKED. A store made before ACKED existed
// starts counting at open. Not covered: a damaged sstable, MANIFEST or
// bbolt page is refused even with Recover (restore from a copy), and a
// power failure can lose ACKED's last updates, which only weakens the check.
package store
