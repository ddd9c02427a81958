package store_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// dirSize returns the bytes of the regular files under dir as ls counts
// them (apparent) and as du does (allocated: blocks of 512 bytes, which
// include space reserved past a file's end).
func dirSize(t testing.TB, dir string) (apparent, allocated int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		apparent += fi.Size()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			allocated += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return apparent, allocated
}

// TestTinyStoreSize puts 600 documents of about 1 KB into each embedded
// engine under its default options: the data directory stays under 10 MB,
// counted as ls and as du count it, while the store is open, after Close
// and once reopened. Pebble reserved 110% of its 64 MiB memtable for every
// WAL, made or kept for recycling: 71 to 213 MB for such a store.
func TestTinyStoreSize(t *testing.T) {
	const n, limit = 600, 10 << 20
	ex, err := rule.NewExtractor(rule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]store.Record, n)
	for i := range recs {
		var b strings.Builder
		for j := 0; b.Len() < 1000; j++ {
			fmt.Fprintf(&b, "word%d ", (i*31+j*7)%997)
		}
		recs[i] = store.Record{Seq: uint64(i), ID: fmt.Sprint("doc-", i), Features: ex.Extract(b.String()),
			Meta: []byte(fmt.Sprintf(`{"n":%d}`, i))}
	}
	for _, tc := range []struct {
		engine string
		open   func(dir string) (store.Store, error)
	}{
		{store.EngineBolt, func(dir string) (store.Store, error) { return store.OpenBolt(dir, store.BoltOptions{}) }},
		{store.EnginePebble, func(dir string) (store.Store, error) { return store.OpenPebble(dir, store.PebbleOptions{}) }},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			dir := t.TempDir()
			check := func(when string) {
				t.Helper()
				apparent, allocated := dirSize(t, dir)
				t.Logf("%s: %d bytes, %d allocated", when, apparent, allocated)
				if apparent > limit || allocated > limit {
					t.Errorf("%s: data directory holds %d bytes, %d allocated; want both under %d", when, apparent, allocated, limit)
				}
			}
			s, err := tc.open(dir)
			if err != nil {
				t.Fatal(err)
			}
			check("empty")
			for _, r := range recs {
				if err := s.Put(context.Background(), r); err != nil {
					t.Fatal(err)
				}
			}
			check(fmt.Sprint(n, " documents, open"))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			check("closed")
			if s, err = tc.open(dir); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got := 0
			if err := s.Load(context.Background(), func(store.Record) error { got++; return nil }); err != nil || got != n {
				t.Fatalf("Load after reopening: %d records, %v; want %d", got, err, n)
			}
			check("reopened")
		})
	}
}
