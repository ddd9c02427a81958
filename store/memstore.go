package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// MemStore is a Store held in memory, for tests and for a service that need
// not survive restarts. It is safe for concurrent use.
type MemStore struct {
	mu     sync.Mutex        // guards the fields below
	byID   map[string]Record // every stored record
	bySeq  map[uint64]string // every stored record's seq -> its id
	snap   map[string]uint64 // deleted snapshot documents: id -> fingerprint
	closed bool
}

var (
	_ Store           = (*MemStore)(nil)
	_ SnapshotDeletes = (*MemStore)(nil)
)

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore {
	return &MemStore{byID: map[string]Record{}, bySeq: map[uint64]string{}, snap: map[string]uint64{}}
}

// PutSnapshotDelete implements SnapshotDeletes.
func (m *MemStore) PutSnapshotDelete(_ context.Context, id string, fp uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	m.snap[id] = fp
	return nil
}

// LoadSnapshotDeletes implements SnapshotDeletes.
func (m *MemStore) LoadSnapshotDeletes(_ context.Context, fn func(id string, fp uint64) error) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	snap := maps.Clone(m.snap)
	m.mu.Unlock()
	for id, fp := range snap {
		if err := fn(id, fp); err != nil {
			return err
		}
	}
	return nil
}

// Load implements Store.
func (m *MemStore) Load(ctx context.Context, fn func(Record) error) error {
	return m.LoadFrom(ctx, 0, fn)
}

// LoadFrom implements Store.
func (m *MemStore) LoadFrom(ctx context.Context, seq uint64, fn func(Record) error) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	rs := make([]Record, 0, len(m.byID))
	for _, r := range m.byID {
		if r.Seq >= seq {
			rs = append(rs, r)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(rs, func(a, b Record) int { return cmp.Compare(a.Seq, b.Seq) })
	for i, r := range rs {
		if i%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// Get implements Store.
func (m *MemStore) Get(_ context.Context, id string) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Record{}, ErrClosed
	}
	r, ok := m.byID[id]
	if !ok {
		return Record{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return r, nil
}

// GetSeq implements Store.
func (m *MemStore) GetSeq(_ context.Context, seq uint64) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Record{}, ErrClosed
	}
	id, ok := m.bySeq[seq]
	if !ok {
		return Record{}, fmt.Errorf("%w: seq %d", ErrNotFound, seq)
	}
	return m.byID[id], nil
}

// Put implements Store.
func (m *MemStore) Put(_ context.Context, r Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if _, ok := m.byID[r.ID]; ok {
		return fmt.Errorf("%w: %q", ErrExists, r.ID)
	}
	r.Features.Sig = nil // as the other stores: the band keys are kept, not the signature
	m.byID[r.ID] = r
	m.bySeq[r.Seq] = r.ID
	return nil
}

// Delete implements Store.
func (m *MemStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	r, ok := m.byID[id]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	delete(m.byID, id)
	delete(m.bySeq, r.Seq)
	return nil
}

// Close implements Store.
func (m *MemStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
