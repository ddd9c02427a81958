// Package redisreplica keeps the service's index and documents in Redis or a
// Redis Cluster in the older, replica layout (format "neardup-redis 3"),
// shared by every 'neardup serve' that opens the same address and key
// prefix. It serves --method simhash, --redis-replica and --redis-direct;
// the default method's shared index is package redisstore's, which holds
// nothing of the index in the servers. The two formats do not share an
// index: each refuses the other's meta.
//
//	s, err := redisreplica.Open(ctx, "redis://localhost:6379/0", redisreplica.Options{
//		Dedup:    opt.Dedup,       // the service's decision options
//		Settings: server.Settings, // recorded in the index, checked by every server
//	})
//	if err != nil { ... }
//	srv, err := server.New(s, opt) // a Store satisfies server.SharedStore
//
// By default each Store keeps a replica of the index in memory, a keptmem.Set
// that follows a change log kept in Redis and is brought to the log's head
// before every request that reads it; writes go through one committer per
// Store, under a write lock in Redis that makes add_if_new atomic across
// servers. With Options.Direct every match reads the fingerprint tables and
// document hashes in Redis instead. Either way the decision is rule.Rule's,
// in priority order, so the verdicts are neardup dedup's.
//
// REDIS.md, beside this file, owns the key layout, both modes, what each
// operation sends, and why it is safe.
package redisreplica
