package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// The on-disk layout (a pebble database in DATA/pebble; see doc.go): one key
// space, each key led by a byte that says what it holds.
//
//	"m" "format"   -> "neardup-serve 1"
//	"m" "settings" -> the decision settings the features were made with
//	"m" "writes"   -> the number of writes applied (8 bytes, big-endian),
//	                  set by every write's batch; see ackedFile
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
	// DefaultPebbleCache is the default of PebbleOptions.CacheSize.
	DefaultPebbleCache = 64 << 20
	// pebbleFilterBits is the bits per key of the Bloom filters of the
	// tables above the last level (see PebbleStore.open).
	pebbleFilterBits = 10
)

// defaultMaxOpenFiles is PebbleOptions.MaxOpenFiles's default: three
// quarters of the process's limit on open files (which Go raises to the hard
// limit at start), at least pebble's own default of 1,000, at most 1<<20.
func defaultMaxOpenFiles() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur == ^uint64(0) {
		return 1 << 20
	}
	return int(min(max(lim.Cur/4*3, 1000), 1<<20))
}

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
	// CacheSize is the size of pebble's block cache (default
	// DefaultPebbleCache): it holds the index and filter blocks that each
	// read goes through, and the record blocks read last. Pebble's own
	// default, 8 MB, held too few of them at 30M documents: every record
	// read loaded its index blocks again (BENCHMARKS.md, "30M stored").
	CacheSize int64
	// MaxOpenFiles bounds the files pebble keeps open (default
	// defaultMaxOpenFiles: from the process's limit on open files, less a
	// quarter of it for the server's connections). A record read from a
	// table that is not open opens it first (its footer, properties and
	// index read again): pebble's own default, 1,000, is fewer tables than
	// 30M documents make (1,131), and a search then paid for an open now
	// and then (BENCHMARKS.md, "30.2M stored: tables kept open").
	MaxOpenFiles int
	// Recover opens a store that has lost acknowledged writes (a damaged
	// or cut WAL: see doc.go, "Damage"), keeping what pebble could read,
	// instead of refusing it with ErrDamaged. The number of writes
	// dropped is logged.
	Recover bool
	// Logger receives what Recover dropped; nil logs nothing.
	Logger *slog.Logger
}

// PebbleStore is the durable Store on pebble, a log-structured merge tree:
// each write is a pebble batch appended to the write-ahead log, and the
// acknowledgement waits for the WAL's fsync. Pebble's commit pipeline syncs
// the WAL once for every batch written before the sync started, so
// concurrent writers share fsyncs (group commit) with no committer of ours:
// one sequential append and one fsync per group, where bbolt writes B+tree
// pages and syncs twice. It is safe for concurrent use.
type PebbleStore struct {
	dir, path string // the data directory, and pebble's in it
	opt       PebbleOptions
	commits   *walCommits
	acked     *ackedLog
	corrupt   atomic.Pointer[string] // the file of pebble's last DataCorruption event

	// Pebble's background errors wait until start-up has read the store
	// (the first Load, or the first write): a compaction that reads a
	// damaged file before Load does would otherwise log it apart from the
	// one error that names it.
	bgMu      sync.Mutex // guards bgStarted and bgHeld
	bgStarted bool
	bgHeld    []error

	wmu    sync.Mutex // serialises apply: an id's check and its write are one step
	writes uint64     // writes applied, the "m" "writes" key; guarded by wmu

	// failed holds the first WAL sync error: the memtable then holds writes
	// that may not be durable, so every write is refused until reopenLoop
	// has reopened the database and undone them.
	failed    atomic.Pointer[error]
	stop      chan struct{}  // closed by Close: reopenLoop returns
	reopening sync.WaitGroup // reopenLoop
	undoMu    sync.Mutex     // guards undo
	undo      []undoWrite    // the failed writes, to undo after reopening

	mu       sync.RWMutex // guards closed and db; held for reading while db is used
	db       *pebble.DB   // nil after a failed reopen
	closed   bool
	inflight sync.WaitGroup // writes applied whose wait has not returned
}

// undoWrite is the inverse of a write whose WAL sync failed: the keys to set
// back (value non-nil) or delete, applied after a reopen in case the write
// reached the WAL anyway. n is the write's number, to undo the latest first.
type undoWrite struct {
	n   uint64
	ops []undoOp
}

type undoOp struct{ key, value []byte }

var (
	_ Store           = (*PebbleStore)(nil)
	_ SnapshotDeletes = (*PebbleStore)(nil)
)

// OpenPebble opens (creating it if needed) the store in directory dir. It
// first opens the database read-only, which replays the WAL, to check that
// no acknowledged write is missing (see ackedFile) before a read-write open
// changes anything, then reads every key but the records': the one read of
// the records is Load's, at start-up, which finds a damaged file there (see
// doc.go, "Damage"). A damaged file is an error wrapping ErrDamaged that
// names it; a directory another process has open gives ErrLocked.
func OpenPebble(dir string, opt PebbleOptions) (*PebbleStore, error) {
	if opt.MemTableSize == 0 {
		opt.MemTableSize = DefaultPebbleMemTable
	}
	if opt.CacheSize <= 0 {
		opt.CacheSize = DefaultPebbleCache
	}
	if opt.MaxOpenFiles <= 0 {
		opt.MaxOpenFiles = defaultMaxOpenFiles()
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: data directory: %w", err)
	}
	if err := claimEngine(dir, EnginePebble); err != nil {
		return nil, err
	}
	s := &PebbleStore{dir: dir, path: filepath.Join(dir, pebbleDir), opt: opt, commits: &walCommits{},
		stop: make(chan struct{})}
	writes, err := s.replayWrites()
	if err != nil {
		return nil, err
	}
	if s.acked, err = openAcked(dir, writes, opt.Recover); err != nil {
		return nil, err
	}
	if acked := s.acked.count(); acked > writes {
		lost := acked - writes
		file := damagedWAL(s.path)
		if !opt.Recover {
			return nil, errors.Join(fmt.Errorf("%w: %s: %d acknowledged writes are missing (the store holds %d of %d); Recover (serve --force-recover) starts without them",
				ErrDamaged, file, lost, writes, acked), s.acked.close())
		}
		opt.Logger.Warn("store recovered without acknowledged writes", "file", file,
			"documents_dropped", lost, "writes_kept", writes, "writes_acknowledged", acked)
		if err := s.acked.reset(writes); err != nil {
			return nil, errors.Join(err, s.acked.close())
		}
	}
	s.writes = writes
	db, err := s.open(false)
	if err != nil {
		return nil, errors.Join(err, s.acked.close())
	}
	if err := checkPebbleMeta(db, opt.Settings); err != nil {
		return nil, errors.Join(err, db.Close(), s.acked.close())
	}
	if err := s.verifyIndex(db); err != nil {
		return nil, errors.Join(err, s.closeDB(db), s.acked.close())
	}
	s.db = db
	return s, nil
}

// open opens pebble's database, turning its panics, lock and corruption
// errors into ours.
func (s *PebbleStore) open(readOnly bool) (db *pebble.DB, err error) {
	defer s.recoverPanic(&err)
	o := &pebble.Options{
		FS: walSyncFS{vfs.Default, s.commits},
		// Pinned, not FormatNewest: a later pebble must not ratchet the
		// files to a format this build cannot read without being asked.
		FormatMajorVersion: pebble.FormatValueSeparation,
		MemTableSize:       s.opt.MemTableSize,
		CacheSize:          s.opt.CacheSize,
		MaxOpenFiles:       s.opt.MaxOpenFiles,
		Logger:             pebbleLogger{},
		ReadOnly:           readOnly,
		// Pebble's default ends the process on a damaged file; the read
		// returns the error anyway, which then names the file.
		EventListener: &pebble.EventListener{DataCorruption: func(info pebble.DataCorruptionInfo) {
			s.corrupt.Store(&info.Path)
		}, BackgroundError: s.backgroundError},
	}
	// Bloom filters on every level but the last: a record or id read
	// looks in each level whose tables' ranges hold its key (the records'
	// and ids' keys span every table written by a flush), and without a
	// filter each look reads an index block and a data block. Writes leave
	// recent records in L0-L5 until compactions move them down, so reads
	// of older records went through four or five levels (BENCHMARKS.md,
	// "30M stored"); a filter answers for a level that does not hold the
	// key. The last level holds most keys and, for records, the key read
	// is there: its filters would cost memory and cache for nothing (a
	// table moved down whole keeps its filter).
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(pebbleFilterBits)
	}
	o.Levels[len(o.Levels)-1].FilterPolicy = pebble.NoFilterPolicy
	db, err = pebble.Open(s.path, o)
	if err != nil {
		return nil, s.storeError("opening store", err)
	}
	return db, nil
}

// replayWrites opens the database read-only, which replays the WAL into a
// memtable, and returns the "m" "writes" count: 0 when there is no
// database yet. A damaged MANIFEST or WAL fails here.
func (s *PebbleStore) replayWrites() (writes uint64, err error) {
	if _, err := os.Stat(filepath.Join(s.path, "CURRENT")); errors.Is(err, fs.ErrNotExist) {
		// No CURRENT: pebble's marker files say where the manifest is.
		if m, _ := filepath.Glob(filepath.Join(s.path, "marker.manifest.*")); len(m) == 0 {
			return 0, nil
		}
	}
	db, err := s.open(true)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, s.closeDB(db)) }()
	defer s.recoverPanic(&err)
	v, err := pebbleGet(db, metaKey("writes"))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, s.storeError("verifying store", err)
	case len(v) != 8:
		return 0, fmt.Errorf("%w: %s: write count %x", ErrDamaged, s.path, v)
	}
	return binary.BigEndian.Uint64(v), nil
}

// verifyIndex reads every key and value of db but the records (the "d"
// keys, which Load reads): pebble checks each block's checksum as it reads
// it, so a damaged block of the id index is found at open, not by a GET.
func (s *PebbleStore) verifyIndex(db *pebble.DB) (err error) {
	defer s.recoverPanic(&err)
	for _, r := range []pebble.IterOptions{
		{UpperBound: []byte{pebblePrefixDoc}},
		{LowerBound: []byte{pebblePrefixDoc + 1}},
	} {
		it, err := db.NewIter(&r)
		if err != nil {
			return s.storeError("verifying store", err)
		}
		for it.First(); it.Valid(); it.Next() {
			if _, err = it.ValueAndErr(); err != nil {
				break
			}
		}
		if err = errors.Join(err, it.Close()); err != nil {
			return s.storeError("verifying store", err)
		}
	}
	return nil
}

// backgroundError logs an error of pebble's background work (a flush or a
// compaction), or holds it until start-up has read the store.
func (s *PebbleStore) backgroundError(err error) {
	s.bgMu.Lock()
	if !s.bgStarted {
		if len(s.bgHeld) < maxHeldErrors { // a failing compaction retries
			s.bgHeld = append(s.bgHeld, err)
		}
		s.bgMu.Unlock()
		return
	}
	s.bgMu.Unlock()
	pebbleLogger{}.Errorf("background error: %s", err)
}

// maxHeldErrors bounds the background errors held during start-up.
const maxHeldErrors = 16

// started ends start-up, and logs the background errors held, unless the
// read that would have ended it failed on a damaged file (loadErr): the
// errors are then about the damage, which that error names in one line,
// and they are dropped, as are those that follow (compactions retry).
func (s *PebbleStore) started(loadErr error) {
	s.bgMu.Lock()
	if s.bgStarted {
		s.bgMu.Unlock()
		return
	}
	held := s.bgHeld
	s.bgHeld = nil
	ok := !errors.Is(loadErr, ErrDamaged)
	s.bgStarted = ok
	s.bgMu.Unlock()
	if ok {
		for _, err := range held {
			pebbleLogger{}.Errorf("background error: %s", err)
		}
	}
}

// closeDB closes db, which may be broken (a failed WAL).
func (s *PebbleStore) closeDB(db *pebble.DB) (err error) {
	defer s.recoverPanic(&err)
	return db.Close()
}

// storeError wraps an error of pebble's: a lock held by another process as
// ErrLocked, a damaged file as ErrDamaged with the file's name.
func (s *PebbleStore) storeError(what string, err error) error {
	switch {
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK),
		strings.Contains(err.Error(), "lock held by current process"): // pebble's check before flock
		return fmt.Errorf("%w: %s (%v)", ErrLocked, s.dir, err)
	case pebble.IsCorruptionError(err):
		file := s.path
		if p := s.corrupt.Load(); p != nil {
			file = *p
		} else if f := walOrManifest(err); f != "" {
			file = filepath.Join(s.path, f)
		}
		return fmt.Errorf("%w: %s: %s", ErrDamaged, file, oneLine(err))
	}
	return fmt.Errorf("store: %s: %w", what, err)
}

// recoverPanic turns a panic of pebble's, which it has for some damaged
// files, into an error wrapping ErrDamaged.
func (s *PebbleStore) recoverPanic(err *error) {
	if r := recover(); r != nil {
		file := s.path
		if p := s.corrupt.Load(); p != nil {
			file = *p
		}
		*err = fmt.Errorf("%w: %s: %s", ErrDamaged, file, oneLine(fmt.Errorf("%v", r)))
	}
}

// walOrManifest returns the name of the WAL or MANIFEST file that pebble's
// error is about, or "".
func walOrManifest(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "MANIFEST-"); i >= 0 {
		j := i + len("MANIFEST-")
		for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
			j++
		}
		return msg[i:j]
	}
	var n uint64
	if i := strings.Index(msg, "replaying wal "); i >= 0 {
		if _, err := fmt.Sscanf(msg[i:], "replaying wal %d", &n); err == nil {
			return fmt.Sprintf("%06d.log", n)
		}
	}
	return ""
}

// oneLine returns err's message up to its first line break: pebble's errors
// can carry details on further lines, and a start-up error is one line.
func oneLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// newLogReader calls record.NewReader, whose log number type is internal to
// pebble: newLogReader(record.NewReader, f, num) converts num to it.
func newLogReader[N ~uint64](newReader func(io.Reader, N) *record.Reader, r io.Reader, num uint64) *record.Reader {
	return newReader(r, N(num))
}

// damagedWAL returns the WAL of the pebble database in path that lost
// writes: the first that pebble's record reader cannot read to its end,
// else the newest (cut short), else path itself.
func damagedWAL(path string) string {
	logs, _ := filepath.Glob(filepath.Join(path, "*.log"))
	slices.Sort(logs)
	for _, name := range logs {
		var num uint64
		if _, err := fmt.Sscanf(filepath.Base(name), "%d.log", &num); err != nil {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		r := newLogReader(record.NewReader, f, num)
		for {
			rr, err := r.Next()
			if err == nil {
				_, err = io.Copy(io.Discard, rr)
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				f.Close()
				return name
			}
		}
		f.Close()
	}
	if len(logs) > 0 {
		return logs[len(logs)-1]
	}
	return path
}

func checkPebbleMeta(db *pebble.DB, settings string) error {
	b := db.NewBatch()
	defer b.Close()
	f, err := pebbleGet(db, metaKey("format"))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		b.Set(metaKey("format"), []byte(boltFormat), nil)
	case err != nil:
		return fmt.Errorf("store: opening store: %w", err)
	case string(f) != boltFormat:
		return fmt.Errorf("%w: format %q, this build reads %q", ErrStoreFormat, f, boltFormat)
	}
	if settings != "" {
		s, err := pebbleGet(db, metaKey("settings"))
		switch {
		case errors.Is(err, pebble.ErrNotFound):
			b.Set(metaKey("settings"), []byte(settings), nil)
		case err != nil:
			return fmt.Errorf("store: opening store: %w", err)
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

// ObserveCommits makes every WAL fsync call f with the number of writes it
// made durable and its error (see walCommits): the Server's metrics.
func (s *PebbleStore) ObserveCommits(f func(ops int, err error)) { s.commits.onCommit.Store(&f) }

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
	return s.LoadFrom(ctx, 0, fn)
}

// LoadFrom implements Store: the scan starts at the key of seq. Pebble
// checks each block's checksum as it reads it: a damaged file is an error
// wrapping ErrDamaged that names it.
func (s *PebbleStore) LoadFrom(ctx context.Context, seq uint64, fn func(Record) error) error {
	err := decodeInOrder(ctx, func(emit func(key, v []byte) error) error {
		return s.scan(ctx, docKey(seqKey(seq)), emit)
	}, fn)
	s.started(err)
	return err
}

// scan calls fn with the key (without its prefix byte) and value of every
// entry under the prefix byte from[0], from the key from on, in key order,
// until fn returns an error, which scan returns; it checks ctx every 4,096
// entries.
func (s *PebbleStore) scan(ctx context.Context, from []byte, fn func(key, v []byte) error) (err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	defer s.recoverPanic(&err) // some damaged blocks panic
	if err := s.usableLocked(); err != nil {
		return err
	}
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{
		LowerBound: from, UpperBound: []byte{from[0] + 1}})
	if err != nil {
		return s.storeError("reading store", err)
	}
	i := 0
	for it.First(); it.Valid(); it.Next() {
		if i++; i%4096 == 0 && ctx.Err() != nil {
			return errors.Join(ctx.Err(), it.Close())
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return s.storeError("reading store", errors.Join(err, it.Close()))
		}
		if err := fn(it.Key()[1:], v); err != nil {
			return errors.Join(err, it.Close())
		}
	}
	if err := it.Close(); err != nil {
		return s.storeError("reading store", err)
	}
	return nil
}

// usableLocked returns why s.db cannot be used: closed, or a failed
// reopen left none. s.mu is held.
func (s *PebbleStore) usableLocked() error {
	if s.closed {
		return ErrClosed
	}
	if s.db == nil {
		return fmt.Errorf("%w: reopening the store after a failed WAL sync failed: %w", ErrStore, *s.failed.Load())
	}
	return nil
}

// Get implements Store.
func (s *PebbleStore) Get(_ context.Context, id string) (Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usableLocked(); err != nil {
		return Record{}, err
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

// GetSeq implements Store: one read of the "d" key.
func (s *PebbleStore) GetSeq(_ context.Context, seq uint64) (Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usableLocked(); err != nil {
		return Record{}, err
	}
	key := seqKey(seq)
	// Decoded from pebble's buffer, which decodeRecord copies out of: the
	// copy pebbleGet makes would be a second one, for every candidate a
	// match reads.
	v, closer, err := s.db.Get(docKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return Record{}, fmt.Errorf("%w: seq %d", ErrNotFound, seq)
	} else if err != nil {
		return Record{}, s.storeError("reading store", err)
	}
	r, err := decodeRecord(key, v)
	if cerr := closer.Close(); cerr != nil {
		return Record{}, s.storeError("reading store", cerr)
	}
	return r, err
}

// PutSnapshotDelete implements SnapshotDeletes.
func (s *PebbleStore) PutSnapshotDelete(ctx context.Context, id string, fp uint64) error {
	return s.apply(ctx, Op{SnapshotDelete: &SnapshotDelete{ID: id, FP: fp}}, true)()
}

// LoadSnapshotDeletes implements SnapshotDeletes.
func (s *PebbleStore) LoadSnapshotDeletes(ctx context.Context, fn func(id string, fp uint64) error) error {
	return s.scan(ctx, []byte{pebblePrefixSnap}, func(key, v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("%w: damaged snapshot delete of %q", ErrStoreFormat, key)
		}
		return fn(string(key), binary.BigEndian.Uint64(v))
	})
}

// Put implements Store.
func (s *PebbleStore) Put(ctx context.Context, r Record) error {
	return s.apply(ctx, Op{Put: &r}, true)()
}

// Delete implements Store.
func (s *PebbleStore) Delete(ctx context.Context, id string) error {
	return s.apply(ctx, Op{Delete: id}, true)()
}

// Queue applies op and returns the wait for its durability, which must be
// called; operations are applied in the order Queue was called (the Server's
// queue). A put is not checked against the stored ids: the caller vouches for
// it, as the Server does, having found the id absent from its kept set
// (which knows every stored id) under the write lock it queues under. In an
// LSM tree that check is a read of every level for a key that is nearly
// always absent; at 1M stored documents it took 3/4 of the store's CPU and
// halved its write rate (BENCHMARKS.md).
func (s *PebbleStore) Queue(ctx context.Context, op Op) func() error {
	return s.apply(ctx, op, false)
}

// apply applies op to pebble's memtable and WAL, in the order apply was
// called, and returns the wait for its WAL sync. Every wait must be called:
// Close waits for them. A put of a stored id fails with ErrExists when
// checkPut is set, and a delete of an absent one with ErrNotFound; the check
// sees every write applied before, durable or not, as bbolt's does within a
// group.
func (s *PebbleStore) apply(ctx context.Context, op Op, checkPut bool) func() error {
	fail := func(err error) func() error { return func() error { return err } }
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if err := s.Healthy(); err != nil {
		return fail(err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usableLocked(); err != nil {
		return fail(err)
	}
	s.started(nil)
	b := s.db.NewBatch()
	undo, err := s.buildLocked(b, op, checkPut)
	if err != nil {
		b.Close()
		return fail(err)
	}
	s.writes++
	n := s.writes
	b.Set(metaKey("writes"), binary.BigEndian.AppendUint64(nil, n), nil)
	// Counted before it reaches the WAL: a sync that covers it then
	// always counts it, and reports it before its waiter is released.
	s.commits.applied.Add(1)
	// ApplyNoSyncWait returns once the batch is in the WAL's buffer and
	// the memtable; its fsync is shared with the batches around it.
	if err := s.db.ApplyNoSyncWait(b, pebble.Sync); err != nil {
		s.writes--
		s.commits.applied.Add(^uint64(0))
		b.Close()
		return fail(fmt.Errorf("%w: %w", ErrStore, err))
	}
	s.inflight.Add(1)
	return sync.OnceValue(func() error {
		defer s.inflight.Done()
		err := b.SyncWait()
		b.Close() // only after SyncWait: the WAL writer may still read it
		if err != nil {
			s.undoMu.Lock()
			s.undo = append(s.undo, undoWrite{n: n, ops: undo})
			s.undoMu.Unlock()
			if s.failed.CompareAndSwap(nil, &err) {
				s.reopening.Add(1)
				go s.reopenLoop()
			}
			return fmt.Errorf("%w: %w", ErrStore, err)
		}
		s.acked.advance(n)
		return nil
	})
}

// reopenRetry is the time between two tries of reopenLoop.
const reopenRetry = time.Second

// reopenLoop reopens the store after a failed WAL sync (a full disk, most
// often), trying every reopenRetry once the disk has a little room, until
// it succeeds or the store is closed.
func (s *PebbleStore) reopenLoop() {
	defer s.reopening.Done()
	t := time.NewTicker(reopenRetry)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if err := s.room(); err != nil {
			continue
		}
		err := s.reopen()
		if err == nil || errors.Is(err, ErrClosed) {
			return
		}
		s.opt.Logger.Warn("reopening the store after a failed WAL sync", "err", err)
	}
}

// room reports whether the disk has a MiB free, tried with fallocate on a
// probe file: until then pebble's database stays open for reads.
func (s *PebbleStore) room() error {
	name := filepath.Join(s.dir, ackedFile+".probe")
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer os.Remove(name)
	return errors.Join(syscall.Fallocate(int(f.Fd()), 0, 0, 1<<20), f.Close())
}

// reopen reopens the database after a failed WAL sync, once every write's
// wait has returned, and undoes the writes whose sync failed (they may have
// reached the WAL anyway) with a synced batch, which shows that writes work
// again. Writes are refused throughout (s.failed is set) and reads while
// the database is closed; no lock is held while pebble closes, which waits
// for its flushes, and they retry until the disk has room for them.
func (s *PebbleStore) reopen() error {
	p := s.failed.Load()
	if p == nil {
		return nil
	}
	failed := fmt.Errorf("%w: an earlier WAL sync failed: %w", ErrStore, *p)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	old := s.db
	s.db = nil
	s.mu.Unlock()
	s.inflight.Wait() // no write is applied while s.failed is set
	if old != nil {
		s.closeDB(old) // fails: the WAL it would sync and close is broken
	}
	db, err := s.open(false)
	if err != nil {
		return fmt.Errorf("%w: %w", failed, err)
	}
	s.undoMu.Lock()
	undo := slices.Clone(s.undo)
	s.undoMu.Unlock()
	slices.SortFunc(undo, func(a, b undoWrite) int { return cmp.Compare(b.n, a.n) }) // latest first
	b := db.NewBatch()
	defer b.Close()
	for _, u := range undo {
		for _, op := range u.ops {
			if op.value == nil {
				b.Delete(op.key, nil)
			} else {
				b.Set(op.key, op.value, nil)
			}
		}
	}
	// The count goes on from the store's: the writes undone may be in it.
	var writes uint64
	switch v, err := pebbleGet(db, metaKey("writes")); {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil || len(v) != 8:
		return errors.Join(failed, err, s.closeDB(db))
	default:
		writes = binary.BigEndian.Uint64(v)
	}
	b.Set(metaKey("writes"), binary.BigEndian.AppendUint64(nil, writes), nil)
	if err := db.Apply(b, pebble.Sync); err != nil {
		return errors.Join(failed, err, s.closeDB(db))
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.Join(ErrClosed, s.closeDB(db))
	}
	s.db = db
	s.mu.Unlock()
	s.writes = writes
	s.undoMu.Lock()
	s.undo = nil
	s.undoMu.Unlock()
	s.failed.Store(nil)
	s.opt.Logger.Info("store reopened after a failed WAL sync", "writes_undone", len(undo))
	return nil
}

// Healthy reports whether the store can take writes: not after a failed WAL
// sync, until reopenLoop has reopened it (the Server's /readyz asks).
func (s *PebbleStore) Healthy() error {
	if p := s.failed.Load(); p != nil {
		return fmt.Errorf("%w: an earlier WAL sync failed, reopening when the disk has room: %w", ErrStore, *p)
	}
	return nil
}

// buildLocked puts op's changes into b, after checking the id (a put's only
// when checkPut is set), and returns their inverse, for reopen; s.wmu
// is held, so no write can come between the check and the apply.
func (s *PebbleStore) buildLocked(b *pebble.Batch, op Op, checkPut bool) ([]undoOp, error) {
	if d := op.SnapshotDelete; d != nil {
		old, err := pebbleGet(s.db, snapKey(d.ID))
		if err != nil && !errors.Is(err, pebble.ErrNotFound) {
			return nil, fmt.Errorf("%w: %w", ErrStore, err)
		}
		return []undoOp{{snapKey(d.ID), old}}, b.Set(snapKey(d.ID), binary.BigEndian.AppendUint64(nil, d.FP), nil)
	}
	if op.Put == nil {
		seq, err := pebbleGet(s.db, idKey(op.Delete))
		if errors.Is(err, pebble.ErrNotFound) {
			return nil, fmt.Errorf("%w: %q", ErrNotFound, op.Delete)
		} else if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStore, err)
		}
		// Deletes are rare: reading the record to undo one costs little.
		v, err := pebbleGet(s.db, docKey(seq))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStore, err)
		}
		undo := []undoOp{{docKey(seq), v}, {idKey(op.Delete), seq}}
		return undo, errors.Join(b.Delete(docKey(seq), nil), b.Delete(idKey(op.Delete), nil))
	}
	r := op.Put
	if checkPut {
		switch _, err := pebbleGet(s.db, idKey(r.ID)); {
		case err == nil:
			return nil, fmt.Errorf("%w: %q", ErrExists, r.ID)
		case !errors.Is(err, pebble.ErrNotFound):
			return nil, fmt.Errorf("%w: %w", ErrStore, err)
		}
	}
	v, err := encodeRecord(r)
	if err != nil {
		return nil, err
	}
	seq := seqKey(r.Seq)
	undo := []undoOp{{docKey(seq), nil}, {idKey(r.ID), nil}}
	return undo, errors.Join(b.Set(docKey(seq), v, nil), b.Set(idKey(r.ID), seq, nil))
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
	s.inflight.Wait() // a failed wait may start reopenLoop: first
	close(s.stop)
	s.reopening.Wait()
	var err error
	if s.db != nil {
		if s.failed.Load() == nil {
			err = s.db.Flush()
		}
		err = errors.Join(err, s.closeDB(s.db))
	}
	return errors.Join(err, s.acked.close())
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
	return &walFile{File: f, c: fs.c}, nil
}

func (fs walSyncFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, cat)
	return fs.wrap(f, cat, err)
}

func (fs walSyncFS) ReuseForWrite(oldname, newname string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, cat)
	return fs.wrap(f, cat, err)
}

// walFile is a WAL file of the store's: its syncs are counted, and the
// disk space reserved ahead of its end grows with it.
//
// Pebble reserves (fallocate, keeping the size) 110% of MemTableSize ahead
// of a WAL's first bytes, so that appends find their blocks allocated: 70
// MiB under the default 64 MiB memtable, for a store of a few documents,
// and once more for each old WAL it keeps to recycle (71 to 213 MB for 600
// documents). walFile takes pebble's size as the most to reserve at once
// and reserves as much again as the log holds, from walReserveMin: a log of
// n bytes has at most max(2n, walReserveMin) reserved, and a bulk load
// reaches pebble's step after a few doublings.
//
// Write and Preallocate are called from pebble's one WAL-writing goroutine
// (vfs.NewSyncingFile's Write is not safe for concurrent use either).
type walFile struct {
	vfs.File
	c *walCommits

	step     int64 // pebble's preallocation size: the most reserved at once
	written  int64 // bytes written
	reserved int64 // bytes reserved from the start of the file
}

// walReserveMin is the least space a WAL reserves ahead.
const walReserveMin = 256 << 10

func (f *walFile) Sync() error     { return f.c.sync(f.File.Sync) }
func (f *walFile) SyncData() error { return f.c.sync(f.File.SyncData) }

// Preallocate takes pebble's reservation as the largest step of the
// reservations Write makes.
func (f *walFile) Preallocate(_, length int64) error {
	f.step = max(f.step, length)
	return nil
}

func (f *walFile) Write(p []byte) (int, error) {
	if end := f.written + int64(len(p)); end > f.reserved {
		n := max(min(f.reserved, f.step), walReserveMin, end-f.reserved)
		// As pebble's own: a failed reservation leaves the appends to
		// allocate their blocks.
		_ = f.File.Preallocate(f.reserved, n)
		f.reserved += n
	}
	n, err := f.File.Write(p)
	f.written += int64(n)
	return n, err
}

// PutBulk stores recs, in ascending Seq order and after every record stored
// before, as one write synced once: a bulk import's path ('neardup import'),
// many records to a WAL sync instead of one. The ids are not checked: the
// caller vouches that none is stored (an import into a new store decides
// on unique ids).
func (s *PebbleStore) PutBulk(ctx context.Context, recs []Record) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.Healthy(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	for i := range recs {
		if _, err := s.buildLocked(b, Op{Put: &recs[i]}, false); err != nil {
			return err
		}
	}
	n := s.writes + uint64(len(recs))
	b.Set(metaKey("writes"), binary.BigEndian.AppendUint64(nil, n), nil)
	if err := s.db.Apply(b, pebble.Sync); err != nil {
		return fmt.Errorf("%w: %w", ErrStore, err)
	}
	s.writes = n
	s.acked.advance(n)
	return nil
}

// Has reports whether a record has id: one read of its "i" key, without
// the snapshot Get takes to read the record consistently (whose Close has
// pebble look for a compaction to schedule, a scan of its files: at 27 GB
// of records a tenth of the service's CPU under add_if_new, spent under its
// write lock).
func (s *PebbleStore) Has(_ context.Context, id string) (bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usableLocked(); err != nil {
		return false, err
	}
	_, closer, err := s.db.Get(idKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, s.storeError("reading store", err)
	}
	return true, closer.Close()
}

// GetID returns the id of the record whose Seq is seq (an error wrapping
// ErrNotFound when none), decoding nothing else: a fingerprint search names
// its hits by it.
func (s *PebbleStore) GetID(_ context.Context, seq uint64) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usableLocked(); err != nil {
		return "", err
	}
	key := seqKey(seq)
	v, closer, err := s.db.Get(docKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return "", fmt.Errorf("%w: seq %d", ErrNotFound, seq)
	} else if err != nil {
		return "", s.storeError("reading store", err)
	}
	defer closer.Close()
	return recordID(key, v)
}
