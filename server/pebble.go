package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// The on-disk layout (a pebble database in DATA/pebble; see doc.go): one key
// space, each key led by a byte that says what it holds.
//
//	"m" "format"   -> "neardup-serve 1"
//	"m" "settings" -> the decision settings the features were made with
//	"d" seq (8 bytes, big-endian) -> the record, encoded as in bbolt's "docs"
//	"i" id -> seq (8 bytes, big-endian)
//	"s" id -> fingerprint (8 bytes, big-endian) of a deleted document of
//	          the start-up snapshot
const (
	pebbleDir = "pebble"

	pebblePrefixMeta = 'm'
	pebblePrefixDoc  = 'd'
	pebblePrefixID   = 'i'
	pebblePrefixSnap = 's'

	// DefaultPebbleMemTable is the default of PebbleOptions.MemTableSize.
	DefaultPebbleMemTable = 64 << 20
)

// PebbleOptions configures OpenPebble. The zero value means the defaults.
type PebbleOptions struct {
	// Settings names the decision settings the stored features depend on
	// (Settings of the service's dedup options); a store made with other
	// settings is refused. Empty skips the check.
	Settings string
	// MemTableSize is the size of pebble's memtable (default
	// DefaultPebbleMemTable); a memtable or two not yet flushed is the WAL
	// replayed after a crash. Larger means fewer, larger flushes competing
	// with queries for the CPU.
	MemTableSize uint64
}

// PebbleStore is the durable Store on pebble, a log-structured merge tree:
// each write is a pebble batch appended to the write-ahead log, and the
// acknowledgement waits for the WAL's fsync. Pebble's commit pipeline syncs
// the WAL once for every batch written before the sync started, so
// concurrent writers share fsyncs (group commit) with no committer of ours:
// one sequential append and one fsync per group, where bbolt writes B+tree
// pages and syncs twice. It is safe for concurrent use.
type PebbleStore struct {
	db      *pebble.DB
	dir     string
	commits *walCommits

	wmu sync.Mutex // serialises apply: an id's check and its write are one step

	// failed holds the first WAL sync error: the memtable then holds writes
	// that may not be durable, so every later write is refused.
	failed atomic.Pointer[error]

	mu       sync.RWMutex // guards closed; held for reading while db is used
	closed   bool
	inflight sync.WaitGroup // writes applied whose wait has not returned
}

var (
	_ Store           = (*PebbleStore)(nil)
	_ SnapshotDeletes = (*PebbleStore)(nil)
)

// OpenPebble opens (creating it if needed) the store in directory dir.
func OpenPebble(dir string, opt PebbleOptions) (*PebbleStore, error) {
	if opt.MemTableSize == 0 {
		opt.MemTableSize = DefaultPebbleMemTable
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("server: data directory: %w", err)
	}
	if err := claimEngine(dir, EnginePebble); err != nil {
		return nil, err
	}
	commits := &walCommits{}
	o := &pebble.Options{
		FS: walSyncFS{vfs.Default, commits},
		// Pinned, not FormatNewest: a later pebble must not ratchet the
		// files to a format this build cannot read without being asked.
		FormatMajorVersion: pebble.FormatValueSeparation,
		MemTableSize:       opt.MemTableSize,
		Logger:             pebbleLogger{},
	}
	db, err := pebble.Open(filepath.Join(dir, pebbleDir), o)
	if err != nil {
		return nil, fmt.Errorf("server: opening store: %w", err)
	}
	if err := checkPebbleMeta(db, opt.Settings); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return &PebbleStore{db: db, dir: dir, commits: commits}, nil
}

func checkPebbleMeta(db *pebble.DB, settings string) error {
	b := db.NewBatch()
	defer b.Close()
	f, err := pebbleGet(db, metaKey("format"))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		b.Set(metaKey("format"), []byte(boltFormat), nil)
	case err != nil:
		return fmt.Errorf("server: opening store: %w", err)
	case string(f) != boltFormat:
		return fmt.Errorf("%w: format %q, this build reads %q", ErrStoreFormat, f, boltFormat)
	}
	if settings != "" {
		s, err := pebbleGet(db, metaKey("settings"))
		switch {
		case errors.Is(err, pebble.ErrNotFound):
			b.Set(metaKey("settings"), []byte(settings), nil)
		case err != nil:
			return fmt.Errorf("server: opening store: %w", err)
		case string(s) != settings:
			return fmt.Errorf("%w: made with %q, this run uses %q", ErrStoreFormat, s, settings)
		}
	}
	if b.Empty() {
		return nil
	}
	return db.Apply(b, pebble.Sync)
}

func metaKey(name string) []byte { return append([]byte{pebblePrefixMeta}, name...) }
func idKey(id string) []byte     { return append([]byte{pebblePrefixID}, id...) }
func docKey(seq []byte) []byte   { return append([]byte{pebblePrefixDoc}, seq...) }
func snapKey(id string) []byte   { return append([]byte{pebblePrefixSnap}, id...) }

// pebbleGet returns a copy of key's value in r.
func pebbleGet(r pebble.Reader, key []byte) ([]byte, error) {
	v, closer, err := r.Get(key)
	if err != nil {
		return nil, err
	}
	v = append([]byte(nil), v...)
	return v, closer.Close()
}

// observeCommits makes every WAL fsync call f with the number of writes it
// made durable and its error (see walCommits).
func (s *PebbleStore) observeCommits(f func(ops int, err error)) { s.commits.onCommit.Store(&f) }

// Size returns the bytes of the store's files.
func (s *PebbleStore) Size() int64 {
	var n int64
	filepath.WalkDir(filepath.Join(s.dir, pebbleDir), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Load implements Store.
func (s *PebbleStore) Load(ctx context.Context, fn func(Record) error) error {
	return decodeInOrder(ctx, func(emit func(key, v []byte) error) error {
		return s.scan(ctx, pebblePrefixDoc, emit)
	}, fn)
}

// scan calls fn with the key (without its prefix byte) and value of every
// entry under prefix, in key order, until fn returns an error, which scan
// returns; it checks ctx every 4,096 entries.
func (s *PebbleStore) scan(ctx context.Context, prefix byte, fn func(key, v []byte) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{
		LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
	if err != nil {
		return err
	}
	i := 0
	for it.First(); it.Valid(); it.Next() {
		if i++; i%4096 == 0 && ctx.Err() != nil {
			return errors.Join(ctx.Err(), it.Close())
		}
		v, err := it.ValueAndErr()
		if err == nil {
			err = fn(it.Key()[1:], v)
		}
		if err != nil {
			return errors.Join(err, it.Close())
		}
	}
	return it.Close()
}

// Get implements Store.
func (s *PebbleStore) Get(_ context.Context, id string) (Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return Record{}, ErrClosed
	}
	// The two reads see one state: a delete between them is not a
	// damaged store.
	snap := s.db.NewSnapshot()
	defer snap.Close()
	seq, err := pebbleGet(snap, idKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return Record{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	} else if err != nil {
		return Record{}, err
	}
	v, err := pebbleGet(snap, docKey(seq))
	if errors.Is(err, pebble.ErrNotFound) {
		return Record{}, fmt.Errorf("%w: id %q names missing record %x", ErrStoreFormat, id, seq)
	} else if err != nil {
		return Record{}, err
	}
	return decodeRecord(seq, v)
}

// PutSnapshotDelete implements SnapshotDeletes.
func (s *PebbleStore) PutSnapshotDelete(ctx context.Context, id string, fp uint64) error {
	return s.apply(ctx, &boltOp{snapDelete: &snapDelete{id: id, fp: fp}}, true)()
}

// LoadSnapshotDeletes implements SnapshotDeletes.
func (s *PebbleStore) LoadSnapshotDeletes(ctx context.Context, fn func(id string, fp uint64) error) error {
	return s.scan(ctx, pebblePrefixSnap, func(key, v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("%w: damaged snapshot delete of %q", ErrStoreFormat, key)
		}
		return fn(string(key), binary.BigEndian.Uint64(v))
	})
}

// Put implements Store.
func (s *PebbleStore) Put(ctx context.Context, r Record) error {
	return s.apply(ctx, &boltOp{put: &r}, true)()
}

// Delete implements Store.
func (s *PebbleStore) Delete(ctx context.Context, id string) error {
	return s.apply(ctx, &boltOp{delete: id}, true)()
}

// queue implements the Server's queuer. A put is not checked against the
// stored ids: the Server vouches for it, having found the id absent from its
// Kept (which holds every stored id) under the write lock it queues under.
// In an LSM tree that check is a read of every level for a key that is
// nearly always absent; at 1M stored documents it took 3/4 of the store's
// CPU and halved its write rate (BENCHMARKS.md).
func (s *PebbleStore) queue(ctx context.Context, op *boltOp) func() error {
	return s.apply(ctx, op, false)
}

// apply applies op to pebble's memtable and WAL, in the order apply was
// called, and returns the wait for its WAL sync. Every wait must be called:
// Close waits for them. A put of a stored id fails with ErrExists when
// checkPut is set, and a delete of an absent one with ErrNotFound; the check
// sees every write applied before, durable or not, as bbolt's does within a
// group.
func (s *PebbleStore) apply(ctx context.Context, op *boltOp, checkPut bool) func() error {
	fail := func(err error) func() error { return func() error { return err } }
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return fail(ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if p := s.failed.Load(); p != nil {
		return fail(fmt.Errorf("%w: an earlier WAL sync failed: %w", ErrStore, *p))
	}
	b := s.db.NewBatch()
	if err := s.buildLocked(b, op, checkPut); err != nil {
		b.Close()
		return fail(err)
	}
	// Counted before it reaches the WAL: a sync that covers it then
	// always counts it, and reports it before its waiter is released.
	s.commits.applied.Add(1)
	// ApplyNoSyncWait returns once the batch is in the WAL's buffer and
	// the memtable; its fsync is shared with the batches around it.
	if err := s.db.ApplyNoSyncWait(b, pebble.Sync); err != nil {
		s.commits.applied.Add(^uint64(0))
		return fail(fmt.Errorf("%w: %w", ErrStore, err))
	}
	s.inflight.Add(1)
	return sync.OnceValue(func() error {
		defer s.inflight.Done()
		err := b.SyncWait()
		b.Close() // only after SyncWait: the WAL writer may still read it
		if err != nil {
			s.failed.CompareAndSwap(nil, &err)
			return fmt.Errorf("%w: %w", ErrStore, err)
		}
		return nil
	})
}

// buildLocked puts op's changes into b, after checking the id (a put's only
// when checkPut is set); s.wmu is held, so no write can come between the
// check and the apply.
func (s *PebbleStore) buildLocked(b *pebble.Batch, op *boltOp, checkPut bool) error {
	if d := op.snapDelete; d != nil {
		return b.Set(snapKey(d.id), binary.BigEndian.AppendUint64(nil, d.fp), nil)
	}
	if op.put == nil {
		seq, err := pebbleGet(s.db, idKey(op.delete))
		if errors.Is(err, pebble.ErrNotFound) {
			return fmt.Errorf("%w: %q", ErrNotFound, op.delete)
		} else if err != nil {
			return fmt.Errorf("%w: %w", ErrStore, err)
		}
		return errors.Join(b.Delete(docKey(seq), nil), b.Delete(idKey(op.delete), nil))
	}
	r := op.put
	if checkPut {
		switch _, err := pebbleGet(s.db, idKey(r.ID)); {
		case err == nil:
			return fmt.Errorf("%w: %q", ErrExists, r.ID)
		case !errors.Is(err, pebble.ErrNotFound):
			return fmt.Errorf("%w: %w", ErrStore, err)
		}
	}
	v, err := encodeRecord(r)
	if err != nil {
		return err
	}
	seq := seqKey(r.Seq)
	return errors.Join(b.Set(docKey(seq), v, nil), b.Set(idKey(r.ID), seq, nil))
}

// Close waits for the writes queued to be synced, flushes the memtable (so
// the next start replays no WAL) and closes the database.
func (s *PebbleStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	s.inflight.Wait()
	var err error
	if s.failed.Load() == nil {
		err = s.db.Flush()
	}
	return errors.Join(err, s.db.Close())
}

// pebbleLogger passes pebble's errors to the standard logger and drops its
// informational messages (WAL recovery, compactions), which the service's
// request log has no place for. Fatalf exits, as pebble's own logger does:
// pebble calls it when its commit pipeline is broken.
type pebbleLogger struct{}

func (pebbleLogger) Infof(string, ...any) {}
func (pebbleLogger) Errorf(format string, args ...any) {
	pebble.DefaultLogger.Errorf(format, args...)
}
func (pebbleLogger) Fatalf(format string, args ...any) {
	pebble.DefaultLogger.Fatalf(format, args...)
}

// walCommits counts the store's writes made durable by each fsync of the
// WAL, for observeCommits. Pebble does not say which batches a sync covered,
// but it syncs the WAL in order: a sync covers every write applied before it
// started. A write is counted just before it is applied, so a sync that
// covers it counts it (a write being applied as a sync starts may be counted
// in that sync or the next), and the count is reported before the sync
// returns and its waiters are released: once a write's wait returns, its
// sync has been reported.
type walCommits struct {
	onCommit atomic.Pointer[func(ops int, err error)] // set by the Server for its metrics
	applied  atomic.Uint64                            // writes applied to the WAL so far

	mu       sync.Mutex // serialises the reports
	reported uint64     // writes reported so far; guarded by mu
}

func (c *walCommits) sync(sync func() error) error {
	n := c.applied.Load()
	err := sync()
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.onCommit.Load(); f != nil && n > c.reported {
		(*f)(int(n-c.reported), err)
	}
	c.reported = max(c.reported, n)
	return err
}

// walSyncFS is the file system under pebble: the WAL files it creates report
// their fsyncs to walCommits.
type walSyncFS struct {
	vfs.FS
	c *walCommits
}

const walCategory vfs.DiskWriteCategory = "pebble-wal" // as pebble's wal package names it

func (fs walSyncFS) wrap(f vfs.File, cat vfs.DiskWriteCategory, err error) (vfs.File, error) {
	if err != nil || cat != walCategory {
		return f, err
	}
	return walFile{f, fs.c}, nil
}

func (fs walSyncFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, cat)
	return fs.wrap(f, cat, err)
}

func (fs walSyncFS) ReuseForWrite(oldname, newname string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, cat)
	return fs.wrap(f, cat, err)
}

type walFile struct {
	vfs.File
	c *walCommits
}

func (f walFile) Sync() error     { return f.c.sync(f.File.Sync) }
func (f walFile) SyncData() error { return f.c.sync(f.File.SyncData) }
