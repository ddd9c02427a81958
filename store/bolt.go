package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/neardup/neardup/rule"
)

// The on-disk layout (one bbolt file, DATA/neardup.db; see doc.go):
//
//	bucket "meta":  "format"   -> "neardup-serve 1"
//	                "settings" -> the decision settings the features were made with
//	                "writes"   -> the number of writes committed (8 bytes, big-endian); see ackedFile
//	bucket "docs":  seq (8 bytes, big-endian) -> uvarint len(id), id,
//	                uvarint len(features), rule.Features.MarshalBinary, meta JSON (the rest)
//	bucket "ids":   id -> seq (8 bytes, big-endian)
//	bucket "snapshot-deleted": id -> fingerprint (8 bytes, big-endian) of a
//	                deleted document of the start-up snapshot
const (
	boltFile    = "neardup.db"
	boltFormat  = "neardup-serve 1"
	maxBatchOps = 4096
)

var (
	bucketMeta = []byte("meta")
	bucketDocs = []byte("docs")
	bucketIDs  = []byte("ids")
	// bucketSnapDel was added after format 1's first release: an older
	// build ignores it (and would load the deleted snapshot documents).
	bucketSnapDel = []byte("snapshot-deleted")
)

// BoltOptions configures OpenBolt. The zero value means the defaults.
type BoltOptions struct {
	// Settings names the decision settings the stored features depend on
	// (Settings of the service's dedup options); a store made with other
	// settings is refused. Empty skips the check.
	Settings string
	// Timeout bounds the wait for the file lock held by another process
	// (default 5 s).
	Timeout time.Duration
	// Recover opens a store that has lost acknowledged writes (see
	// doc.go, "Damage") instead of refusing it with ErrDamaged; the
	// number of writes dropped is logged.
	Recover bool
	// Logger receives what Recover dropped; nil logs nothing.
	Logger *slog.Logger
}

// BoltStore is the durable Store: a bbolt B+tree file. Writes from
// concurrent callers are group-committed: one committer goroutine drains the
// queue into one read-write transaction and one fsync, then answers every
// caller, so the acknowledged writes survive a crash (kill -9, power loss
// permitting fsync) at the cost of one fsync per batch rather than per
// document. Queued operations are applied in queue order. It is safe for
// concurrent use.
type BoltStore struct {
	db       *bolt.DB
	acked    *ackedLog
	writes   uint64 // writes committed, the meta "writes" key; owned by commitLoop
	ops      chan *boltOp
	onCommit atomic.Pointer[func(ops int, err error)] // set by the Server for its metrics

	mu     sync.RWMutex // guards closed; held for reading while enqueuing
	closed bool
	done   chan struct{} // closed when the committer has exited
}

var (
	_ Store           = (*BoltStore)(nil)
	_ SnapshotDeletes = (*BoltStore)(nil)
)

// boltOp is one queued write and the channel of its result.
type boltOp struct {
	Op
	err chan error
}

// OpenBolt opens (creating it if needed) the store in directory dir. It
// reads every page of the file (checkBolt) before it returns, so
// that a damaged file is an error wrapping ErrDamaged that names it, here,
// rather than a panic while the service runs. A file another process has
// open gives ErrLocked once opt.Timeout has passed.
func OpenBolt(dir string, opt BoltOptions) (*BoltStore, error) {
	if opt.Timeout == 0 {
		opt.Timeout = 5 * time.Second
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: data directory: %w", err)
	}
	if err := claimEngine(dir, EngineBolt); err != nil {
		return nil, err
	}
	// The freelist is not written at every commit (bbolt rebuilds it from
	// the pages when it opens the file), and kept as a map: with an array
	// freelist synced, every group commit of a store of millions of
	// documents wrote and sorted the whole list. Durability is unchanged:
	// every commit still fsyncs its pages and meta page.
	path := filepath.Join(dir, boltFile)
	db, err := openBolt(path, &bolt.Options{Timeout: opt.Timeout,
		NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, err
	}
	var writes uint64
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		for _, b := range [][]byte{bucketDocs, bucketIDs, bucketSnapDel} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		if f := meta.Get([]byte("format")); f == nil {
			if err := meta.Put([]byte("format"), []byte(boltFormat)); err != nil {
				return err
			}
		} else if string(f) != boltFormat {
			return fmt.Errorf("%w: format %q, this build reads %q", ErrStoreFormat, f, boltFormat)
		}
		if w := meta.Get([]byte("writes")); len(w) == 8 {
			writes = binary.BigEndian.Uint64(w)
		} else if w != nil {
			return fmt.Errorf("%w: %s: write count %x", ErrDamaged, path, w)
		}
		s := meta.Get([]byte("settings"))
		switch {
		case opt.Settings == "":
		case s == nil:
			return meta.Put([]byte("settings"), []byte(opt.Settings))
		case string(s) != opt.Settings:
			return fmt.Errorf("%w: made with %q, this run uses %q", ErrStoreFormat, s, opt.Settings)
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	acked, err := openAcked(dir, writes, opt.Recover)
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if n := acked.count(); n > writes {
		// bbolt falls back to the older meta page when the newer is
		// damaged: the last commit is gone, and bbolt says nothing.
		if !opt.Recover {
			return nil, errors.Join(fmt.Errorf("%w: %s: %d acknowledged writes are missing (the store holds %d of %d); Recover (serve --force-recover) starts without them",
				ErrDamaged, path, n-writes, writes, n), acked.close(), db.Close())
		}
		opt.Logger.Warn("store recovered without acknowledged writes", "file", path,
			"documents_dropped", n-writes, "writes_kept", writes, "writes_acknowledged", n)
		if err := acked.reset(writes); err != nil {
			return nil, errors.Join(err, acked.close(), db.Close())
		}
	}
	s := &BoltStore{db: db, acked: acked, writes: writes, ops: make(chan *boltOp, maxBatchOps), done: make(chan struct{})}
	go s.commitLoop()
	return s, nil
}

// openBolt checks the bbolt file at path (checkBolt), then opens it.
// bbolt panics on some damaged pages: the panic becomes ErrDamaged. The
// file then stays open, and locked, until the process exits: a transaction
// a panic left open would make Close wait forever.
func openBolt(path string, o *bolt.Options) (db *bolt.DB, err error) {
	defer recoverBolt(path, &err)
	if _, err := os.Stat(path); err == nil {
		if err := checkBolt(path, o.Timeout); err != nil {
			return nil, err
		}
	}
	db, err = bolt.Open(path, 0o644, o)
	if err != nil {
		return nil, boltOpenError(path, o.Timeout, err)
	}
	return db, nil
}

// checkBolt opens the bbolt file at path read-only and reads every key and
// value of every bucket, on this goroutine, so that a damaged page panics
// where recoverBolt catches it. It must come first: opening the file for
// writing rebuilds the free list (it is not stored: NoFreelistSync) by
// walking the pages on a goroutine of bbolt's, where a damaged page ends
// the process; and Tx.Check does the same.
func checkBolt(path string, timeout time.Duration) (err error) {
	defer recoverBolt(path, &err)
	// A damaged length can point past the mapping: a fault, which must
	// panic (on this goroutine) rather than end the process.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		return boltOpenError(path, timeout, err)
	}
	var walk func(b *bolt.Bucket) error
	walk = func(b *bolt.Bucket) error {
		var prev []byte
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if prev != nil && bytes.Compare(prev, k) >= 0 {
				return fmt.Errorf("keys out of order in bucket (a %d-byte key after a %d-byte one)", len(k), len(prev))
			}
			prev = k
			if v == nil {
				if sub := b.Bucket(k); sub != nil {
					if err := walk(sub); err != nil {
						return err
					}
				}
				continue
			}
			_ = bytes.IndexByte(v, 0) // reads the value: a bad length is out of the mapping
		}
		return nil
	}
	err = db.View(func(tx *bolt.Tx) error {
		if err := tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b) }); err != nil {
			return err
		}
		// bbolt's own check of the pages (the one its free-list walk makes
		// when the file is opened for writing), drained to its end: there
		// a failed check returns early and rolls back the transaction that
		// the check's goroutine still reads, which ends the process now and
		// then; here a damage it finds is an error before that open.
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return errors.Join(fmt.Errorf("%w: %s: %s", ErrDamaged, path, oneLine(err)), db.Close())
	}
	return db.Close()
}

func recoverBolt(path string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %s: %s", ErrDamaged, path, oneLine(fmt.Errorf("%v", r)))
	}
}

// boltOpenError wraps an error of bolt.Open: a lock held by another
// process as ErrLocked, a damaged file as ErrDamaged.
func boltOpenError(path string, timeout time.Duration, err error) error {
	switch {
	case errors.Is(err, bolt.ErrTimeout):
		return fmt.Errorf("%w: %s (no lock on %s after %v)", ErrLocked, filepath.Dir(path), path, timeout)
	case errors.Is(err, bolt.ErrInvalid), errors.Is(err, bolt.ErrChecksum), errors.Is(err, bolt.ErrVersionMismatch):
		return fmt.Errorf("%w: %s: %w", ErrDamaged, path, err)
	}
	return fmt.Errorf("store: opening store: %w", err)
}

// ObserveCommits makes every group commit call f with its operation count
// and error (the Server's metrics).
func (s *BoltStore) ObserveCommits(f func(ops int, err error)) { s.onCommit.Store(&f) }

// Size returns the size of the store file in bytes.
func (s *BoltStore) Size() int64 {
	fi, err := os.Stat(s.db.Path())
	if err != nil {
		return 0
	}
	return fi.Size()
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func encodeRecord(r *Record) ([]byte, error) {
	f, err := r.Features.MarshalBinary()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 2*binary.MaxVarintLen64+len(r.ID)+len(f)+len(r.Meta))
	b = binary.AppendUvarint(b, uint64(len(r.ID)))
	b = append(b, r.ID...)
	b = binary.AppendUvarint(b, uint64(len(f)))
	b = append(b, f...)
	return append(b, r.Meta...), nil
}

// decodeRecord decodes the record value v of key (its seq). The record
// holds nothing of v: its id, features and metadata are copies, so v may be
// a buffer its owner reuses (bbolt's page, pebble's block).
func decodeRecord(key, v []byte) (Record, error) { return decodeRecordArena(key, v, nil) }

// decodeRecordArena is decodeRecord with the shingle set allocated from a
// (see rule.Arena): for start-up, whose records are kept.
// recordID decodes only the id of the record value v (key is its seq).
func recordID(key, v []byte) (string, error) {
	n, w := binary.Uvarint(v)
	if w <= 0 || n > uint64(len(v)-w) {
		return "", fmt.Errorf("%w: damaged record %x", ErrStoreFormat, key)
	}
	return string(v[w : w+int(n)]), nil
}

func decodeRecordArena(key, v []byte, a *rule.Arena) (Record, error) {
	// Made only when it is returned: formatting it for every record was
	// 4% of start-up.
	bad := func() error { return fmt.Errorf("%w: damaged record %x", ErrStoreFormat, key) }
	if len(key) != 8 {
		return Record{}, bad()
	}
	r := Record{Seq: binary.BigEndian.Uint64(key)}
	n, w := binary.Uvarint(v)
	if w <= 0 || n > uint64(len(v)-w) {
		return Record{}, bad()
	}
	r.ID = string(v[w : w+int(n)])
	v = v[w+int(n):]
	n, w = binary.Uvarint(v)
	if w <= 0 || n > uint64(len(v)-w) {
		return Record{}, bad()
	}
	if err := a.UnmarshalFeatures(&r.Features, v[w:w+int(n)]); err != nil {
		return Record{}, fmt.Errorf("%w: record %x: %w", ErrStoreFormat, key, err)
	}
	if m := v[w+int(n):]; len(m) > 0 {
		r.Meta = append([]byte(nil), m...)
	}
	return r, nil
}

// Load implements Store. A record that does not decode is an error
// wrapping ErrDamaged that names the file: bbolt keeps no checksums, so a
// damaged value shows only here.
func (s *BoltStore) Load(ctx context.Context, fn func(Record) error) error {
	return s.LoadFrom(ctx, 0, fn)
}

// LoadFrom implements Store, as Load does from the key of seq.
func (s *BoltStore) LoadFrom(ctx context.Context, seq uint64, fn func(Record) error) error {
	err := s.load(ctx, seq, fn)
	if errors.Is(err, ErrStoreFormat) {
		return fmt.Errorf("%w: %s: %w", ErrDamaged, s.db.Path(), err)
	}
	return err
}

func (s *BoltStore) load(ctx context.Context, seq uint64, fn func(Record) error) error {
	return decodeInOrder(ctx, func(emit func(key, v []byte) error) error {
		return s.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketDocs).Cursor()
			for k, v := c.Seek(seqKey(seq)); k != nil; k, v = c.Next() {
				if err := emit(k, v); err != nil {
					return err
				}
			}
			return nil
		})
	}, fn)
}

// Get implements Store.
func (s *BoltStore) Get(_ context.Context, id string) (Record, error) {
	var r Record
	err := s.db.View(func(tx *bolt.Tx) error {
		seq := tx.Bucket(bucketIDs).Get([]byte(id))
		if seq == nil {
			return fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		v := tx.Bucket(bucketDocs).Get(seq)
		if v == nil {
			return fmt.Errorf("%w: id %q names missing record %x", ErrStoreFormat, id, seq)
		}
		var err error
		r, err = decodeRecord(seq, v)
		return err
	})
	if errors.Is(err, bolt.ErrDatabaseNotOpen) {
		err = ErrClosed
	}
	return r, err
}

// GetSeq implements Store: one read of the "docs" bucket.
func (s *BoltStore) GetSeq(_ context.Context, seq uint64) (Record, error) {
	var r Record
	err := s.db.View(func(tx *bolt.Tx) error {
		key := seqKey(seq)
		v := tx.Bucket(bucketDocs).Get(key)
		if v == nil {
			return fmt.Errorf("%w: seq %d", ErrNotFound, seq)
		}
		var err error
		r, err = decodeRecord(key, v)
		return err
	})
	if errors.Is(err, bolt.ErrDatabaseNotOpen) {
		err = ErrClosed
	}
	return r, err
}

// PutSnapshotDelete implements SnapshotDeletes, through the group commit.
func (s *BoltStore) PutSnapshotDelete(ctx context.Context, id string, fp uint64) error {
	return s.do(ctx, Op{SnapshotDelete: &SnapshotDelete{ID: id, FP: fp}})
}

// LoadSnapshotDeletes implements SnapshotDeletes.
func (s *BoltStore) LoadSnapshotDeletes(ctx context.Context, fn func(id string, fp uint64) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSnapDel).ForEach(func(k, v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("%w: damaged snapshot delete of %q", ErrStoreFormat, k)
			}
			return fn(string(k), binary.BigEndian.Uint64(v))
		})
	})
}

// Put implements Store.
func (s *BoltStore) Put(ctx context.Context, r Record) error {
	return s.do(ctx, Op{Put: &r})
}

// Delete implements Store.
func (s *BoltStore) Delete(ctx context.Context, id string) error {
	return s.do(ctx, Op{Delete: id})
}

// do queues op and waits for its commit.
func (s *BoltStore) do(ctx context.Context, op Op) error { return s.Queue(ctx, op)() }

// Queue queues op and returns the wait for its commit, which must be
// called. Once queued the operation is not abandoned: the caller learns
// whether it became durable, whatever ctx does. Operations are committed in
// the order Queue was called.
func (s *BoltStore) Queue(ctx context.Context, o Op) func() error {
	op := &boltOp{Op: o, err: make(chan error, 1)}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return func() error { return ErrClosed }
	}
	select {
	case s.ops <- op:
		return func() error { return <-op.err }
	case <-ctx.Done():
		err := ctx.Err()
		return func() error { return err }
	}
}

// commitLoop is the single committer: it takes the first queued operation,
// everything queued behind it (up to maxBatchOps), and commits them in one
// transaction.
func (s *BoltStore) commitLoop() {
	defer close(s.done)
	batch := make([]*boltOp, 0, maxBatchOps)
	for op := range s.ops {
		batch = append(batch[:0], op)
	drain:
		for len(batch) < maxBatchOps {
			select {
			case op, ok := <-s.ops:
				if !ok {
					break drain
				}
				batch = append(batch, op)
			default:
				break drain
			}
		}
		s.commit(batch)
	}
}

func (s *BoltStore) commit(batch []*boltOp) {
	errs := make([]error, len(batch))
	writes := s.writes + uint64(len(batch))
	err := s.db.Update(func(tx *bolt.Tx) error {
		docs, ids, snapDel := tx.Bucket(bucketDocs), tx.Bucket(bucketIDs), tx.Bucket(bucketSnapDel)
		// Records are keyed by sequence number, so they are appended: full
		// pages instead of half-full ones after each split.
		docs.FillPercent = 1
		for i, op := range batch {
			if d := op.SnapshotDelete; d != nil {
				errs[i] = snapDel.Put([]byte(d.ID), binary.BigEndian.AppendUint64(nil, d.FP))
			} else {
				errs[i] = applyOp(docs, ids, op.Op)
			}
			if errs[i] != nil && !errors.Is(errs[i], ErrNotFound) && !errors.Is(errs[i], ErrExists) {
				return errs[i] // a bbolt failure: the whole transaction is lost
			}
		}
		return tx.Bucket(bucketMeta).Put([]byte("writes"), binary.BigEndian.AppendUint64(nil, writes))
	})
	if err == nil {
		s.writes = writes
		s.acked.advance(writes)
	}
	if f := s.onCommit.Load(); f != nil {
		(*f)(len(batch), err)
	}
	for i, op := range batch {
		if err != nil {
			op.err <- fmt.Errorf("%w: %w", ErrStore, err)
		} else {
			op.err <- errs[i]
		}
	}
}

func applyOp(docs, ids *bolt.Bucket, op Op) error {
	if op.Put == nil {
		seq := ids.Get([]byte(op.Delete))
		if seq == nil {
			return fmt.Errorf("%w: %q", ErrNotFound, op.Delete)
		}
		seq = append([]byte(nil), seq...)
		return errors.Join(docs.Delete(seq), ids.Delete([]byte(op.Delete)))
	}
	r := op.Put
	if ids.Get([]byte(r.ID)) != nil {
		return fmt.Errorf("%w: %q", ErrExists, r.ID)
	}
	v, err := encodeRecord(r)
	if err != nil {
		return err
	}
	key := seqKey(r.Seq)
	if err := docs.Put(key, v); err != nil {
		return err
	}
	return ids.Put([]byte(r.ID), key)
}

// Close waits for queued writes to commit and closes the file.
func (s *BoltStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	close(s.ops)
	s.mu.Unlock()
	<-s.done
	return errors.Join(s.db.Close(), s.acked.close())
}
