// Package storetest is the behaviour every store.Store must have, as one
// suite that each engine's tests run against it:
//
//	func TestMemStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemStore() }, nil)
//	}
//
// RunDurable adds what an embedded engine opened in a directory must do:
// survive a reopen, refuse other decision settings, report its commits.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// Run runs the behaviour every Store must have against the stores that open
// returns, each new and empty; reopen, when not nil, closes a store and
// opens it again on the same data (for durable stores).
func Run(t *testing.T, open func(t *testing.T) store.Store, reopen func(t *testing.T, s store.Store) store.Store) {
	ctx := context.Background()
	ex, err := rule.NewExtractor(rule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(seq uint64, id, text, meta string) store.Record {
		r := store.Record{Seq: seq, ID: id, Features: ex.Extract(text)}
		if meta != "" {
			r.Meta = []byte(meta)
		}
		return r
	}
	load := func(t *testing.T, s store.Store) []store.Record {
		t.Helper()
		var got []store.Record
		if err := s.Load(ctx, func(r store.Record) error { got = append(got, r); return nil }); err != nil {
			t.Fatalf("Load: %v", err)
		}
		return got
	}
	ids := func(rs []store.Record) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}

	t.Run("PutGetLoadOrder", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		want := []store.Record{
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
		if _, err := s.Get(ctx, "zz"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(absent) error = %v, want store.ErrNotFound", err)
		}
		if err := s.Put(ctx, rec(9, "a", "other", "")); !errors.Is(err, store.ErrExists) {
			t.Errorf("Put(existing id) error = %v, want store.ErrExists", err)
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
		if err := s.Delete(ctx, "y"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second Delete(y) error = %v, want store.ErrNotFound", err)
		}
		if _, err := s.Get(ctx, "y"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(deleted) error = %v, want store.ErrNotFound", err)
		}
		// The id may be used again, at a later sequence number.
		if err := s.Put(ctx, rec(7, "y", "again", "")); err != nil {
			t.Fatalf("Put(y) after delete: %v", err)
		}
		if got, want := ids(load(t, s)), []string{"x", "z", "y"}; !reflect.DeepEqual(got, want) {
			t.Errorf("Load = %v, want %v", got, want)
		}
	})

	t.Run("GetSeq", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		want := []store.Record{
			rec(0, "a", "the first document of the seq test", `{"n":0}`),
			rec(1, "b", "the second document of the seq test", ""),
			rec(5, "c", "the third document of the seq test", `{"n":5}`),
		}
		for _, r := range want {
			if err := s.Put(ctx, r); err != nil {
				t.Fatalf("Put %s: %v", r.ID, err)
			}
		}
		for i := range want {
			want[i].Features.Sig = nil
		}
		check := func(t *testing.T, s store.Store, live map[uint64]store.Record, absent []uint64) {
			t.Helper()
			for seq, w := range live {
				if got, err := s.GetSeq(ctx, seq); err != nil || !reflect.DeepEqual(got, w) {
					t.Errorf("GetSeq(%d) = %+v, %v; want %+v", seq, got, err, w)
				}
			}
			for _, seq := range absent {
				if got, err := s.GetSeq(ctx, seq); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("GetSeq(%d) = %+v, %v; want ErrNotFound", seq, got, err)
				}
			}
		}
		check(t, s, map[uint64]store.Record{0: want[0], 1: want[1], 5: want[2]}, []uint64{2, 4, 6, 1 << 63})
		if err := s.Delete(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		// The id comes back at a later seq: its old seq stays absent.
		again := rec(7, "b", "the second document, stored again", "")
		if err := s.Put(ctx, again); err != nil {
			t.Fatal(err)
		}
		again.Features.Sig = nil
		live := map[uint64]store.Record{0: want[0], 5: want[2], 7: again}
		check(t, s, live, []uint64{1, 2, 6})
		if reopen != nil {
			s = reopen(t, s)
			defer s.Close()
			check(t, s, live, []uint64{1, 2, 6})
		}
	})

	t.Run("LoadFrom", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		for i := range 10 {
			if err := s.Put(ctx, rec(uint64(2*i), fmt.Sprint("r", i), fmt.Sprint("record number ", i), "")); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Delete(ctx, "r5"); err != nil { // seq 10
			t.Fatal(err)
		}
		loadFrom := func(t *testing.T, s store.Store, from uint64) []string {
			t.Helper()
			var got []string
			var last uint64
			err := s.LoadFrom(ctx, from, func(r store.Record) error {
				if r.Seq < from || (len(got) > 0 && r.Seq <= last) {
					t.Errorf("LoadFrom(%d) gave seq %d after %d", from, r.Seq, last)
				}
				last = r.Seq
				got = append(got, r.ID)
				return nil
			})
			if err != nil {
				t.Fatalf("LoadFrom(%d): %v", from, err)
			}
			return got
		}
		check := func(t *testing.T, s store.Store) {
			t.Helper()
			for _, tc := range []struct {
				from uint64
				want []string
			}{
				{0, []string{"r0", "r1", "r2", "r3", "r4", "r6", "r7", "r8", "r9"}},
				{7, []string{"r4", "r6", "r7", "r8", "r9"}},
				{8, []string{"r4", "r6", "r7", "r8", "r9"}},
				{10, []string{"r6", "r7", "r8", "r9"}},
				{18, []string{"r9"}},
				{19, nil},
				{1 << 63, nil},
			} {
				if got := loadFrom(t, s, tc.from); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("LoadFrom(%d) = %v, want %v", tc.from, got, tc.want)
				}
			}
			if got, want := loadFrom(t, s, 0), ids(load(t, s)); !reflect.DeepEqual(got, want) {
				t.Errorf("LoadFrom(0) = %v, Load = %v: want the same", got, want)
			}
		}
		check(t, s)
		stop := errors.New("stop")
		n := 0
		if err := s.LoadFrom(ctx, 4, func(store.Record) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
			t.Errorf("LoadFrom with fn failing: %v after %d calls, want fn's error after 1", err, n)
		}
		if reopen != nil {
			s = reopen(t, s)
			defer s.Close()
			check(t, s)
		}
	})

	t.Run("Concurrent", func(t *testing.T) {
		s := open(t)
		defer s.Close()
		const n = 200
		var wg sync.WaitGroup
		errs := make(chan error, n)
		recs := make([]store.Record, n) // built here: the Extractor is not safe for concurrent use
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
		sd, ok := s.(store.SnapshotDeletes)
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
			sd = s.(store.SnapshotDeletes)
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
		if err := s.Put(ctx, rec(0, "a", "x", "")); !errors.Is(err, store.ErrClosed) {
			t.Errorf("Put after Close error = %v, want store.ErrClosed", err)
		}
	})
}

// RunDurable runs Run against an embedded store that open opens in a
// directory, reopening it on the same directory, and checks that a store
// made with other decision settings is refused and that the store reports
// its commits as the Server's queue makes them.
func RunDurable(t *testing.T, open func(dir, settings string) (store.Store, error)) {
	dirs := map[store.Store]string{}
	openNew := func(t *testing.T) store.Store {
		dir := t.TempDir()
		s, err := open(dir, "test")
		if err != nil {
			t.Fatal(err)
		}
		dirs[s] = dir
		return s
	}
	reopen := func(t *testing.T, s store.Store) store.Store {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s2, err := open(dirs[s], "test")
		if err != nil {
			t.Fatal(err)
		}
		return s2
	}
	Run(t, openNew, reopen)

	t.Run("OtherSettingsRefused", func(t *testing.T) {
		dir := t.TempDir()
		s, err := open(dir, "profile=a")
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := open(dir, "profile=b"); !errors.Is(err, store.ErrStoreFormat) {
			t.Errorf("open with other settings: error %v, want store.ErrStoreFormat", err)
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
		s.(interface {
			ObserveCommits(func(int, error))
		}).ObserveCommits(func(n int, err error) {
			mu.Lock()
			ops, commits = ops+n, commits+1
			mu.Unlock()
			if err != nil {
				t.Errorf("commit error %v", err)
			}
		})
		// Queued under one lock, as the Server does, and waited for outside it.
		q := s.(interface {
			Queue(context.Context, store.Op) func() error
		})
		var lock sync.Mutex
		var wg sync.WaitGroup
		const n = 100
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lock.Lock()
				wait := q.Queue(context.Background(), store.Op{Put: &store.Record{Seq: uint64(i), ID: fmt.Sprint("q", i)}})
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
