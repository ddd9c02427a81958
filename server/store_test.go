package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/dedup"
)

// testStore runs the behaviour every Store must have against the stores that
// open returns; reopen, when not nil, closes a store and opens it again on
// the same data (for durable stores).
func testStore(t *testing.T, open func(t *testing.T) Store, reopen func(t *testing.T, s Store) Store) {
	ctx := context.Background()
	ex, err := dedup.NewExtractor(dedup.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(seq uint64, id, text, meta string) Record {
		r := Record{Seq: seq, ID: id, Features: ex.Extract(text)}
		if meta != "" {
			r.Meta = []byte(meta)
		}
		return r
	}
	load := func(t *testing.T, s Store) []Record {
		t.Helper()
		var got []Record
		if err := s.Load(ctx, func(r Record) error { got = append(got, r); return nil }); err != nil {
			t.Fatalf("Load: %v", err)
		}
		return got
	}
	ids := func(rs []Record) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}

	t.Run("PutGetLoadOrder", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		want := []Record{
			rec(0, "b", "the quick brown fox jumps over the lazy dog", `{"title":"fox"}`),
			rec(1, "a", "天下大势，分久必合，合久必分。", ""),
			rec(5, "c", "lorem ipsum dolor sit amet", `{"url":"http://x"}`),
		}
		for _, r := range want {
			if err := s.Put(ctx, r); err != nil {
				t.Fatalf("Put %s: %v", r.ID, err)
			}
		}
		for i := range want {
			want[i].Features.Sig = nil // stores keep the band keys, not the signature
		}
		got, err := s.Get(ctx, "a")
		if err != nil || !reflect.DeepEqual(got, want[1]) {
			t.Errorf("Get(a) = %+v, %v; want %+v", got, err, want[1])
		}
		if all := load(t, s); !reflect.DeepEqual(all, want) {
			t.Errorf("Load = %v, want %v in seq order", ids(all), ids(want))
		}
		if _, err := s.Get(ctx, "zz"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(absent) error = %v, want ErrNotFound", err)
		}
		if err := s.Put(ctx, rec(9, "a", "other", "")); !errors.Is(err, ErrExists) {
			t.Errorf("Put(existing id) error = %v, want ErrExists", err)
		}
		if all := load(t, s); len(all) != 3 {
			t.Errorf("after refused Put: %d records, want 3", len(all))
		}
		if reopen != nil {
			s = reopen(t, s)
			defer s.Close()
			if all := load(t, s); !reflect.DeepEqual(all, want) {
				t.Errorf("Load after reopen = %v, want %v", ids(all), ids(want))
			}
		}
	})

	t.Run("Delete", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		for i, id := range []string{"x", "y", "z"} {
			if err := s.Put(ctx, rec(uint64(i), id, "text "+id, "")); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Delete(ctx, "y"); err != nil {
			t.Fatalf("Delete(y): %v", err)
		}
		if err := s.Delete(ctx, "y"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second Delete(y) error = %v, want ErrNotFound", err)
		}
		if _, err := s.Get(ctx, "y"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(deleted) error = %v, want ErrNotFound", err)
		}
		// The id may be used again, at a later sequence number.
		if err := s.Put(ctx, rec(7, "y", "again", "")); err != nil {
			t.Fatalf("Put(y) after delete: %v", err)
		}
		if got, want := ids(load(t, s)), []string{"x", "z", "y"}; !reflect.DeepEqual(got, want) {
			t.Errorf("Load = %v, want %v", got, want)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		const n = 200
		var wg sync.WaitGroup
		errs := make(chan error, n)
		recs := make([]Record, n) // built here: the Extractor is not safe for concurrent use
		for i := range recs {
			recs[i] = rec(uint64(i), fmt.Sprint("d", i), fmt.Sprint("document number ", i), "")
		}
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- s.Put(ctx, recs[i])
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		all := load(t, s)
		if len(all) != n {
			t.Fatalf("Load: %d records, want %d", len(all), n)
		}
		for i, r := range all {
			if r.Seq != uint64(i) || r.ID != fmt.Sprint("d", i) {
				t.Fatalf("record %d = seq %d id %s, want seq %d id d%d", i, r.Seq, r.ID, i, i)
			}
		}
	})

	t.Run("SnapshotDeletes", func(t *testing.T) {
		s := open(t)
		sd, ok := s.(SnapshotDeletes)
		if !ok {
			s.Close()
			t.Skipf("%T does not record snapshot deletes", s)
		}
		for id, fp := range map[string]uint64{"x": 1, "y": 2} {
			if err := sd.PutSnapshotDelete(ctx, id, fp); err != nil {
				t.Fatal(err)
			}
		}
		if err := sd.PutSnapshotDelete(ctx, "x", 3); err != nil { // the last fingerprint recorded wins
			t.Fatal(err)
		}
		if reopen != nil {
			s = reopen(t, s)
			sd = s.(SnapshotDeletes)
		}
		defer s.Close()
		got := map[string]uint64{}
		if err := sd.LoadSnapshotDeletes(ctx, func(id string, fp uint64) error { got[id] = fp; return nil }); err != nil {
			t.Fatal(err)
		}
		if want := map[string]uint64{"x": 3, "y": 2}; !reflect.DeepEqual(got, want) {
			t.Errorf("snapshot deletes %v, want %v", got, want)
		}
		if rs := load(t, s); len(rs) != 0 {
			t.Errorf("snapshot deletes show up as records: %v", ids(rs))
		}
	})

	t.Run("Closed", func(t *testing.T) {
		s := open(t)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, rec(0, "a", "x", "")); !errors.Is(err, ErrClosed) {
			t.Errorf("Put after Close error = %v, want ErrClosed", err)
		}
	})
}

func TestMemStore(t *testing.T) {
	testStore(t, func(t *testing.T) Store { return NewMemStore() }, nil)
}

// testDurableStore runs testStore against an embedded store that open
// opens in a directory, reopening it on the same directory, and checks that
// a store made with other decision settings is refused.
func testDurableStore(t *testing.T, open func(dir, settings string) (Store, error)) {
	dirs := map[Store]string{}
	openNew := func(t *testing.T) Store {
		dir := t.TempDir()
		s, err := open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		dirs[s] = dir
		return s
	}
	reopen := func(t *testing.T, s Store) Store {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s2, err := open(dirs[s], "test")
		if err != nil {
			t.Fatal(err)
		}
		return s2
	}
	testStore(t, openNew, reopen)

	t.Run("OtherSettingsRefused", func(t *testing.T) {
		dir := t.TempDir()
		s, err := open(dir, "profile=a")
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := open(dir, "profile=b"); !errors.Is(err, ErrStoreFormat) {
			t.Errorf("open with other settings: error %v, want ErrStoreFormat", err)
		}
	})

	t.Run("CommitsObserved", func(t *testing.T) {
		s, err := open(t.TempDir(), "test")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var mu sync.Mutex
		ops, commits := 0, 0
		s.(interface{ observeCommits(func(int, error)) }).observeCommits(func(n int, err error) {
			mu.Lock()
			ops, commits = ops+n, commits+1
			mu.Unlock()
			if err != nil {
				t.Errorf("commit error %v", err)
			}
		})
		// Queued under one lock, as the Server does, and waited for outside it.
		q := s.(queuer)
		var lock sync.Mutex
		var wg sync.WaitGroup
		const n = 100
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lock.Lock()
				wait := q.queue(context.Background(), &boltOp{put: &Record{Seq: uint64(i), ID: fmt.Sprint("q", i)}})
				lock.Unlock()
				if err := wait(); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		if ops != n || commits < 1 || commits > n {
			t.Errorf("observed %d writes in %d commits, want %d writes in 1 to %d", ops, commits, n, n)
		}
	})
}

func TestBoltStore(t *testing.T) {
	testDurableStore(t, func(dir, settings string) (Store, error) {
		return OpenBolt(dir, BoltOptions{Settings: settings})
	})
}

func TestPebbleStore(t *testing.T) {
	testDurableStore(t, func(dir, settings string) (Store, error) {
		return OpenPebble(dir, PebbleOptions{Settings: settings, MemTableSize: 1 << 20})
	})
}

// TestStoreEngineMismatch opens a data directory with the engine that did
// not make it: refused, naming the engine that did, and the data is intact.
func TestStoreEngineMismatch(t *testing.T) {
	ctx := context.Background()
	openBolt := func(dir string) (Store, error) { return OpenBolt(dir, BoltOptions{Settings: "test"}) }
	openPebble := func(dir string) (Store, error) { return OpenPebble(dir, PebbleOptions{Settings: "test"}) }
	for _, tc := range []struct {
		made, opened string
		make, open   func(dir string) (Store, error)
	}{
		{EngineBolt, EnginePebble, openBolt, openPebble},
		{EnginePebble, EngineBolt, openPebble, openBolt},
	} {
		t.Run(tc.made+"AsOther", func(t *testing.T) {
			dir := t.TempDir()
			s, err := tc.make(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, Record{Seq: 0, ID: "a"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			_, err = tc.open(dir)
			if !errors.Is(err, ErrStoreFormat) || !strings.Contains(err.Error(), "holds a "+tc.made+" store, not "+tc.opened) {
				t.Fatalf("opening a %s directory as %s: error %v, want ErrStoreFormat naming both", tc.made, tc.opened, err)
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
		if err := os.Remove(filepath.Join(dir, engineFile)); err != nil {
			t.Fatal(err)
		}
		if _, err := openPebble(dir); !errors.Is(err, ErrStoreFormat) {
			t.Errorf("opening an old bbolt directory as pebble: error %v, want ErrStoreFormat", err)
		}
		s, err = openBolt(dir)
		if err != nil {
			t.Fatalf("reopening the old bbolt directory: %v", err)
		}
		s.Close()
		if b, err := os.ReadFile(filepath.Join(dir, engineFile)); err != nil || string(b) != "bbolt\n" {
			t.Errorf("engine file after reopening = %q, %v; want \"bbolt\\n\"", b, err)
		}
	})
}
