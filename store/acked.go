package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// ackedFile, in a pebble data directory, holds the number of the latest
// write the store has acknowledged, so that start-up can tell a WAL that
// lost acknowledged writes (damaged, or cut short) from one that ends where
// it should. Pebble cannot tell: it takes an unreadable record in the last
// WAL for a write torn by the crash, drops it and everything after it in
// its 32 KiB block, and opens.
//
// Every write's batch sets the key "m" "writes" to its number n (1, 2, ...
// in the order of the WAL); once the WAL sync covering it returns, n is
// written into this file, which is never fsynced: it reaches the disk after
// the WAL does, so after a crash it never counts a write that is not in the
// WAL, and a process killed keeps it in the page cache. At start-up a count
// in this file larger than the store's "m" "writes" is that many
// acknowledged writes missing.
//
// Format (16 bytes): the magic "NDACKED1", then n (8 bytes, big-endian),
// written in place.
const ackedFile = "ACKED"

var ackedMagic = []byte("NDACKED1")

// ackedLog is the open ackedFile. It is safe for concurrent use.
type ackedLog struct {
	mu  sync.Mutex // guards f, n and buf
	f   *os.File
	n   uint64 // the count in the file
	buf [16]byte
}

// openAcked opens the ackedFile of dir, creating it with count writes when
// there is none (a new store, or one made before the file existed). A
// damaged file is ErrDamaged, unless recover is set: it then starts again
// from writes.
func openAcked(dir string, writes uint64, recover bool) (*ackedLog, error) {
	path := filepath.Join(dir, ackedFile)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("store: data directory: %w", err)
		}
		a := &ackedLog{f: f}
		return a, a.reset(writes)
	}
	if err != nil {
		return nil, fmt.Errorf("store: data directory: %w", err)
	}
	a := &ackedLog{f: f}
	b, err := os.ReadFile(path)
	switch {
	case err != nil:
		return nil, errors.Join(fmt.Errorf("store: data directory: %w", err), f.Close())
	case len(b) == len(a.buf) && bytes.HasPrefix(b, ackedMagic):
		a.n = binary.BigEndian.Uint64(b[len(ackedMagic):])
		return a, nil
	case recover:
		return a, a.reset(writes)
	}
	return nil, errors.Join(fmt.Errorf("%w: %s: not an acknowledged-write count (%d bytes)", ErrDamaged, path, len(b)), f.Close())
}

func (a *ackedLog) count() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// advance records that write n is acknowledged, when it is the latest. A
// failed write is not reported: the count stays lower, which weakens the
// check and loses nothing.
func (a *ackedLog) advance(n uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n > a.n {
		a.n = n
		a.writeLocked()
	}
}

// reset makes the file say n and syncs it.
func (a *ackedLog) reset(n uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n = n
	if err := a.writeLocked(); err != nil {
		return fmt.Errorf("store: data directory: %w", err)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("store: data directory: %w", err)
	}
	return nil
}

func (a *ackedLog) writeLocked() error {
	copy(a.buf[:], ackedMagic)
	binary.BigEndian.PutUint64(a.buf[len(ackedMagic):], a.n)
	_, err := a.f.WriteAt(a.buf[:], 0)
	return err
}

func (a *ackedLog) close() error { return a.f.Close() }
