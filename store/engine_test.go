package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/store"
)

// TestStoreEngineMismatch opens a data directory with the engine that did
// not make it: refused, naming the engine that did, and the data is intact.
func TestStoreEngineMismatch(t *testing.T) {
	ctx := context.Background()
	openBolt := func(dir string) (store.Store, error) { return store.OpenBolt(dir, store.BoltOptions{Settings: "test"}) }
	openPebble := func(dir string) (store.Store, error) {
		return store.OpenPebble(dir, store.PebbleOptions{Settings: "test"})
	}
	for _, tc := range []struct {
		made, opened string
		make, open   func(dir string) (store.Store, error)
	}{
		{store.EngineBolt, store.EnginePebble, openBolt, openPebble},
		{store.EnginePebble, store.EngineBolt, openPebble, openBolt},
	} {
		t.Run(tc.made+"AsOther", func(t *testing.T) {
			dir := t.TempDir()
			s, err := tc.make(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, store.Record{Seq: 0, ID: "a"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			_, err = tc.open(dir)
			if !errors.Is(err, store.ErrStoreFormat) || !strings.Contains(err.Error(), "holds a "+tc.made+" store, not "+tc.opened) {
				t.Fatalf("opening a %s directory as %s: error %v, want store.ErrStoreFormat naming both", tc.made, tc.opened, err)
			}
			s, err = tc.make(dir)
			if err != nil {
				t.Fatalf("reopening as %s after the refusal: %v", tc.made, err)
			}
			defer s.Close()
			if _, err := s.Get(ctx, "a"); err != nil {
				t.Errorf("Get(a) after the refusal: %v", err)
			}
		})
	}

	// A bbolt directory made before the engine file existed holds only
	// neardup.db: it is still known as bbolt's.
	t.Run("BoltWithoutEngineFile", func(t *testing.T) {
		dir := t.TempDir()
		s, err := openBolt(dir)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if err := os.Remove(filepath.Join(dir, "ENGINE")); err != nil {
			t.Fatal(err)
		}
		if _, err := openPebble(dir); !errors.Is(err, store.ErrStoreFormat) {
			t.Errorf("opening an old bbolt directory as pebble: error %v, want store.ErrStoreFormat", err)
		}
		s, err = openBolt(dir)
		if err != nil {
			t.Fatalf("reopening the old bbolt directory: %v", err)
		}
		s.Close()
		if b, err := os.ReadFile(filepath.Join(dir, "ENGINE")); err != nil || string(b) != "bbolt\n" {
			t.Errorf("engine file after reopening = %q, %v; want \"bbolt\\n\"", b, err)
		}
	})
}
