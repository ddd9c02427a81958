package server

import (
	"context"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// Set is the set of stored documents that new documents are matched against
// under the rule, in priority (sequence) order. Every implementation decides
// with the batch dedup's code (package rule): the method's candidates in
// sequence order, kept by rule.Rule.Duplicates. Implementations:
//
//   - scaledSet: a keptset.Set in front of an embedded Store (PebbleStore,
//     BoltStore, MemStore), for its reads; the Server makes the writes
//     (beginScaled, deleteScaled), serialised with the Store's, and
//     durable in it.
//   - redisstore.Store (a SharedStore): Redis (or a Redis Cluster) is both
//     the set and the store, shared by several servers; every call reads
//     Redis, so a document acknowledged by one server is matched by all the
//     others.
//
// Implementations are safe for concurrent use.
type Set interface {
	// Match returns the first stored document, in priority order, that f
	// duplicates.
	Match(ctx context.Context, f *rule.Features) (rule.KeptMatch, bool, error)
	// MatchAll returns the stored documents f duplicates, in priority order,
	// at most limit of them when limit > 0.
	MatchAll(ctx context.Context, f *rule.Features, limit int) ([]rule.KeptMatch, error)
	// AddIfNew adds r, last in priority, unless r duplicates a stored
	// document, atomically: of two near-identical documents added at once,
	// exactly one is added. It returns the match that kept r out. An id
	// already stored is an error wrapping ErrExists.
	AddIfNew(ctx context.Context, r store.Record) (rule.KeptMatch, bool, error)
	// Add adds r, last in priority.
	Add(ctx context.Context, r store.Record) error
	// Remove removes id and reports whether it was there.
	Remove(ctx context.Context, id string) (bool, error)
	// Get returns the record of id, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (store.Record, error)
	// Len returns the number of stored documents.
	Len(ctx context.Context) (int, error)
}

// SharedStore is a Store that is also the Set the service matches against,
// shared by several services (redisstore.Store): the Server keeps no kept
// set of its own in front of it, and every write goes
// through the Set.
type SharedStore interface {
	store.Store
	Set
	// QueryFingerprint returns the stored fingerprints within k bits of fp
	// (k <= the rule's QueryK), nearest first, at most limit when limit > 0.
	QueryFingerprint(ctx context.Context, fp uint64, k, limit int) ([]index.Match, error)
	// Ping reports whether the store answers (for /readyz).
	Ping(ctx context.Context) error
	// Sync brings what the store keeps locally up to date (redisstore keeps
	// nothing: it checks the index's format); the Server calls it in Load,
	// before it is ready.
	Sync(ctx context.Context) error
}
