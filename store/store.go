package store

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/neardup/neardup/rule"
)

// Errors returned by stores. The service passes them on, and its HTTP layer
// maps them to statuses in one place (server's httpStatus).
var (
	// ErrNotFound is returned for an id that is not stored.
	ErrNotFound = errors.New("store: document not found")
	// ErrExists is returned when adding an id that is already stored.
	ErrExists = errors.New("store: document id already stored")
	// ErrClosed is returned by a store (and the service) after Close.
	ErrClosed = errors.New("store: closed")
	// ErrStore wraps a failed store operation: the request changed nothing.
	ErrStore = errors.New("store: store write failed")
	// ErrUnavailable wraps a failure to reach a networked store (Redis):
	// the request is answered 503 and may be retried.
	ErrUnavailable = errors.New("store: store unavailable")
	// ErrStoreFormat is returned by OpenBolt and OpenPebble for a data
	// directory made by another format version, other decision settings or
	// the other engine.
	ErrStoreFormat = errors.New("store: bad store")
	// ErrLocked is returned by OpenBolt and OpenPebble for a data
	// directory that another process (another 'neardup serve') has open.
	ErrLocked = errors.New("store: data directory locked by another process")
	// ErrDamaged is returned for a store whose files are damaged: the
	// message names the file and, when acknowledged writes are missing,
	// how many (see doc.go, "Damage").
	ErrDamaged = errors.New("store: store damaged")
)

// Record is one stored document: its priority (Seq, ascending in the order
// documents were accepted), its id, what the rule needs of it, and the
// caller's metadata (a JSON object or nil).
type Record struct {
	Seq      uint64
	ID       string
	Features rule.Features
	Meta     json.RawMessage
}

// Store keeps the accepted documents durably. The service's kept set
// (package keptset) holds each document's candidate keys and reads its
// Features from the store by seq to verify a candidate; the store also
// survives restarts and answers GET with the metadata.
//
// Implementations must be safe for concurrent use. Put and Delete return only
// once the change is durable; operations are applied in the order their
// calls were made when the calls do not overlap, and the service never
// overlaps two calls that must be ordered (see Server).
type Store interface {
	// Load calls fn for every stored record in ascending Seq order; an error
	// from fn stops it and is returned.
	Load(ctx context.Context, fn func(Record) error) error
	// LoadFrom is Load of the records whose Seq is seq or more: start-up
	// replays only what was stored after a checkpoint.
	LoadFrom(ctx context.Context, seq uint64, fn func(Record) error) error
	// Get returns the record of id, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (Record, error)
	// GetSeq returns the record whose Seq is seq, or an error wrapping
	// ErrNotFound when no stored record has it (never given, or deleted):
	// the in-memory kept set reads a candidate's verification data by its
	// priority.
	GetSeq(ctx context.Context, seq uint64) (Record, error)
	// Put stores r. Its Seq is larger than every Seq stored before.
	Put(ctx context.Context, r Record) error
	// Delete removes id; it returns an error wrapping ErrNotFound when absent.
	Delete(ctx context.Context, id string) error
	// Close releases the store; later calls fail with ErrClosed.
	Close() error
}

// SnapshotDeletes is a Store that records the deletes of documents of the
// start-up snapshot (Options.Snapshot), which the store does not hold, so
// that they stay deleted: Load skips a snapshot document whose id was
// recorded with the same fingerprint (a rebuilt snapshot that gives the id
// another fingerprint brings it back). BoltStore and MemStore implement it.
type SnapshotDeletes interface {
	// PutSnapshotDelete records that the snapshot document id, with
	// fingerprint fp, is deleted; it returns once that is durable.
	PutSnapshotDelete(ctx context.Context, id string, fp uint64) error
	// LoadSnapshotDeletes calls fn for every recorded delete.
	LoadSnapshotDeletes(ctx context.Context, fn func(id string, fp uint64) error) error
}

// Op is one write for an engine's Queue: a Put, a SnapshotDelete, or (when
// both are nil) the Delete of an id.
type Op struct {
	Put            *Record
	SnapshotDelete *SnapshotDelete
	Delete         string
}

// SnapshotDelete records the delete of the start-up snapshot's document ID,
// whose fingerprint is FP (see SnapshotDeletes).
type SnapshotDelete struct {
	ID string
	FP uint64
}
