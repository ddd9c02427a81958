package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

func TestPebbleStore(t *testing.T) {
	storetest.RunDurable(t, func(dir, settings string) (store.Store, error) {
		return store.OpenPebble(dir, store.PebbleOptions{Settings: settings, MemTableSize: 1 << 20})
	})
}

// TestPebbleBulkAndID: PutBulk stores what Put would, in one write, GetID
// reads a record's id alone and Has whether an id is stored.
func TestPebbleBulkAndID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.OpenPebble(dir, store.PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []store.Record
	for i := range 100 {
		recs = append(recs, store.Record{Seq: uint64(i), ID: fmt.Sprint("doc", i),
			Features: rule.Features{FP: uint64(i), Exact: uint64(i) * 7}})
	}
	if err := s.PutBulk(ctx, recs[:60]); err != nil {
		t.Fatal(err)
	}
	if err := s.PutBulk(ctx, recs[60:]); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "doc5"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened: the ACKED count agrees with the writes (no refusal).
	if s, err = store.OpenPebble(dir, store.PebbleOptions{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	s.Load(ctx, func(r store.Record) error {
		if r.ID != recs[r.Seq].ID || r.Features.Exact != recs[r.Seq].Features.Exact {
			t.Errorf("record %d: %+v", r.Seq, r)
		}
		n++
		return nil
	})
	if n != 99 {
		t.Fatalf("%d records, want 99", n)
	}
	for _, seq := range []uint64{0, 42, 99} {
		if id, err := s.GetID(ctx, seq); err != nil || id != recs[seq].ID {
			t.Errorf("GetID(%d) = %q, %v", seq, id, err)
		}
	}
	if _, err := s.GetID(ctx, 5); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetID of a deleted record: %v", err)
	}
	// Has: the ids stored, not the deleted one nor one never written.
	for id, want := range map[string]bool{"doc0": true, "doc99": true, "doc5": false, "doc100": false, "": false} {
		if got, err := s.Has(ctx, id); err != nil || got != want {
			t.Errorf("Has(%q) = %v, %v; want %v", id, got, err, want)
		}
	}
	s.Close()
	if _, err := s.Has(ctx, "doc0"); err == nil {
		t.Error("Has on a closed store: no error")
	}
}
