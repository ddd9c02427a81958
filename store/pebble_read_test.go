package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/neardup/neardup/rule"
)

// TestPebbleFilters: the tables a flush writes (L0) carry Bloom filters, so
// that a read of an older record does not load an index and a data block
// in every level above it; the tables a compaction writes to the last
// level carry none (a table moved down whole keeps its filter); the block
// cache has its default size.
func TestPebbleFilters(t *testing.T) {
	s, err := OpenPebble(t.TempDir(), PebbleOptions{MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	s.mu.RLock()
	db := s.db
	s.mu.RUnlock()
	// Two flushes whose tables overlap (the ids interleave, and each
	// write sets the "m" "writes" key), so that the compaction below
	// rewrites them instead of moving them down.
	for round := range 2 {
		for i := round; i < 400; i += 2 {
			r := Record{Seq: uint64(i), ID: fmt.Sprint("doc-", i), Features: rule.Features{FP: uint64(i), Tokens: 1, Exact: uint64(i)}}
			if err := s.Put(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	filters := func(level int) (tables, filtered int) {
		t.Helper()
		levels, err := db.SSTables(pebble.WithProperties())
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range levels[level] {
			tables++
			if ti.Properties.FilterPolicyName != "" {
				filtered++
			}
		}
		return tables, filtered
	}
	if n, f := filters(0); n == 0 || f != n {
		t.Fatalf("L0: %d of %d tables with a filter, want all (and some)", f, n)
	}
	if err := db.Compact(ctx, []byte{0}, []byte{0xff}, false); err != nil {
		t.Fatal(err)
	}
	if n, f := filters(6); n == 0 || f != 0 {
		t.Fatalf("L6: %d of %d tables with a filter, want none (and some tables)", f, n)
	}
	if s.opt.CacheSize != DefaultPebbleCache {
		t.Fatalf("block cache of %d bytes, want the default %d", s.opt.CacheSize, DefaultPebbleCache)
	}
}

// TestDecodeRecordCopies: a decoded record holds nothing of the buffer it
// was decoded from, which GetSeq hands back to pebble before returning.
func TestDecodeRecordCopies(t *testing.T) {
	ex, err := rule.NewRuleExtractor(rule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := ex.Extract("a record decoded from a buffer keeps copies of its id, its features and its metadata, none of the buffer")
	if len(f.Sketch.Hashes()) == 0 || len(f.Bands) == 0 {
		t.Fatalf("features without a shingle set or bands: %+v", f)
	}
	in := Record{Seq: 7, ID: "doc-7", Meta: []byte(`{"a":1}`), Features: f}
	v, err := encodeRecord(&in)
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeRecord(seqKey(7), v)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%+v", r)
	for i := range v {
		v[i] = 0xff
	}
	if got := fmt.Sprintf("%+v", r); got != want {
		t.Fatalf("the record changed with its buffer:\n%s\nwas\n%s", got, want)
	}
}
