package store

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/neardup/neardup/rule"
)

// TestDecodeInOrder runs the start-up's parallel decoding over more records
// than one batch: every record reaches fn once, in the order scanned, with
// its meta; a damaged record, an error from fn and a cancelled context each
// stop the load with that error, and fn sees nothing after it.
func TestDecodeInOrder(t *testing.T) {
	ex, err := rule.NewExtractor(rule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000 // many batches of 512: more than the pipeline holds, so batches are reused
	keys := make([][]byte, n)
	vals := make([][]byte, n)
	for i := range n {
		r := Record{ID: fmt.Sprint("d", i), Features: ex.Extract(fmt.Sprintf("document number %d of the load test, words %d", i, i*7))}
		if i%3 == 0 {
			r.Meta = []byte(fmt.Sprintf(`{"n":%d}`, i))
		}
		keys[i] = seqKey(uint64(i))
		if vals[i], err = encodeRecord(&r); err != nil {
			t.Fatal(err)
		}
	}
	scan := func(keys, vals [][]byte) func(emit func(key, v []byte) error) error {
		return func(emit func(key, v []byte) error) error {
			buf := make([]byte, 0, 4096)
			for i := range keys {
				// The scanner reuses its memory, as pebble's iterator does.
				buf = append(append(buf[:0], keys[i]...), vals[i]...)
				if err := emit(buf[:len(keys[i])], buf[len(keys[i]):]); err != nil {
					return err
				}
			}
			return nil
		}
	}

	got := 0
	err = decodeInOrder(context.Background(), scan(keys, vals), func(r Record) error {
		want := fmt.Sprint("d", got)
		if r.ID != want || r.Seq != uint64(got) {
			return fmt.Errorf("record %d: got %s (seq %d)", got, r.ID, r.Seq)
		}
		if wantMeta := got%3 == 0; wantMeta != (string(r.Meta) == fmt.Sprintf(`{"n":%d}`, got)) {
			return fmt.Errorf("record %d: meta %q", got, r.Meta)
		}
		got++
		return nil
	})
	if err != nil || got != n {
		t.Fatalf("%v after %d of %d records", err, got, n)
	}

	damaged := append([][]byte(nil), vals...)
	damaged[15000] = []byte{0xff}
	got = 0
	err = decodeInOrder(context.Background(), scan(keys, damaged), func(Record) error { got++; return nil })
	if !errors.Is(err, ErrStoreFormat) || got != 15000 {
		t.Fatalf("damaged record 15000: %v after %d records", err, got)
	}

	stop := errors.New("stop here")
	got = 0
	err = decodeInOrder(context.Background(), scan(keys, vals), func(Record) error {
		if got == 1000 {
			return stop
		}
		got++
		return nil
	})
	if !errors.Is(err, stop) || got != 1000 {
		t.Fatalf("fn failing at 1000: %v after %d records", err, got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	got = 0
	err = decodeInOrder(ctx, scan(keys, vals), func(Record) error {
		if got++; got == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || got == n {
		t.Fatalf("cancelled: %v after %d records", err, got)
	}
}
