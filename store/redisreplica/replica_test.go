package redisreplica

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/keptmem"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// TestReplicasAgree proves the replicas correct under other servers'
// writes and deletes: two replica-mode stores and one direct-mode store
// share one index (one Redis, then a cluster), each loaded before anything
// is written, and take turns at random with add_if_new, delete and search.
// Every answer must be the one a single keptmem.Set gives for the same
// requests in the same order: what one store acknowledged, the next request
// to another store sees, deletes included. Under MethodMinHash, which direct
// mode cannot read, two replicas share the index.
func TestReplicasAgree(t *testing.T) {
	for _, backend := range testBackends {
		t.Run(backend.name, func(t *testing.T) {
			addr := backend.start(t)
			for _, method := range []string{rule.MethodSimHash, rule.MethodMinHash} {
				t.Run(method, func(t *testing.T) { testReplicasAgree(t, addr, method) })
			}
		})
	}
}

func testReplicasAgree(t *testing.T, addr, method string) {
	ctx := context.Background()
	opt := rule.Options{Method: method}
	prefix := newPrefix()
	stores := []*Store{
		openStore(t, addr, prefix, Options{Dedup: opt}),
		openStore(t, addr, prefix, Options{Dedup: opt}),
	}
	if method == rule.MethodSimHash {
		stores = append(stores, openStore(t, addr, prefix, Options{Dedup: opt, Direct: true}))
	}
	for _, s := range stores {
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rl, err := rule.NewRule(opt)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := keptmem.New(rl, 100)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := rule.NewExtractor(opt)
	if err != nil {
		t.Fatal(err)
	}
	// 25 base texts, each posted in variants that are near-duplicates
	// of one another.
	text := func(r *rand.Rand) string {
		return randomText(uint64(500+r.IntN(25)), 50) + strings.Repeat(" more", r.IntN(3))
	}
	r := rand.New(rand.NewPCG(7, 7))
	var stored []string
	counts := map[string]int{}
	for step := range 400 {
		i := r.IntN(len(stores))
		s, who := stores[i], fmt.Sprintf("step %d, store %d", step, i)
		switch op := r.IntN(10); {
		case op < 5:
			counts["add_if_new"]++
			rec := store.Record{ID: fmt.Sprint("d", step), Features: ex.Extract(text(r))}
			gm, gdup, gerr := s.AddIfNew(ctx, rec)
			wm, wdup, werr := kept.AddIfNew(rec.ID, rec.Features)
			if gerr != nil || werr != nil || gdup != wdup || gm.ID != wm.ID {
				t.Fatalf("%s: AddIfNew(%s) = %q %v %v, want %q %v %v", who, rec.ID, gm.ID, gdup, gerr, wm.ID, wdup, werr)
			}
			if !wdup {
				stored = append(stored, rec.ID)
			}
		case op < 7:
			counts["delete"]++
			id := "never-stored"
			if len(stored) > 0 && r.IntN(5) > 0 {
				j := r.IntN(len(stored))
				id = stored[j]
				stored = slices.Delete(stored, j, j+1)
			}
			got, gerr := s.Remove(ctx, id)
			want := kept.Remove(id)
			if gerr != nil || got != want {
				t.Fatalf("%s: Remove(%s) = %v %v, want %v", who, id, got, gerr, want)
			}
		default:
			counts["search"]++
			f := ex.Extract(text(r))
			got, gerr := s.MatchAll(ctx, &f, 0)
			want, _ := kept.MatchAll(&f, 0)
			if gerr != nil || !slices.Equal(matchIDs(got), matchIDs(want)) {
				t.Fatalf("%s: MatchAll = %v %v, want %v", who, matchIDs(got), gerr, matchIDs(want))
			}
		}
	}
	for i, s := range stores {
		if n, err := s.Len(ctx); err != nil || n != kept.Len() {
			t.Errorf("store %d: Len = %d %v, want %d", i, n, err, kept.Len())
		}
	}
	t.Logf("%v; %d stored at the end", counts, kept.Len())
}

func matchIDs(ms []rule.KeptMatch) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// TestReplicaLogReset empties Redis (FLUSHALL) under a loaded replica:
// its next request does not answer from the old state but rebuilds from what
// the log holds now, also when another server has written to it since.
func TestReplicaLogReset(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	addr, prefix := "redis://"+srv.Addr()+"/0", newPrefix()
	a := openStore(t, addr, prefix, Options{})
	ex, err := rule.NewExtractor(rule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old, later := ex.Extract(randomText(1, 50)), ex.Extract(randomText(2, 50))
	for i, f := range []rule.Features{old, ex.Extract(randomText(3, 50))} {
		if _, dup, err := a.AddIfNew(ctx, store.Record{ID: fmt.Sprint("old", i), Features: f}); err != nil || dup {
			t.Fatalf("AddIfNew(old%d): %v %v", i, dup, err)
		}
	}
	if got := srv.CLI("FLUSHALL"); got != "OK" {
		t.Fatalf("FLUSHALL: %q", got)
	}
	if n, err := a.Len(ctx); err != nil || n != 0 {
		t.Fatalf("Len after FLUSHALL = %d %v, want 0", n, err)
	}
	if _, ok, err := a.Match(ctx, &old); err != nil || ok {
		t.Fatalf("Match(old) after FLUSHALL = %v %v, want no match", ok, err)
	}
	// The log regrows through another server, past a's last entry.
	b := openStore(t, addr, prefix, Options{})
	if _, dup, err := b.AddIfNew(ctx, store.Record{ID: "new", Features: later}); err != nil || dup {
		t.Fatalf("b.AddIfNew(new): %v %v", dup, err)
	}
	if _, dup, err := a.AddIfNew(ctx, store.Record{ID: "x", Features: ex.Extract(randomText(4, 50))}); err != nil || dup {
		t.Fatalf("a.AddIfNew(x): %v %v", dup, err)
	}
	if err := srv.CLI("FLUSHALL"); err != "OK" {
		t.Fatal(err)
	}
	if _, dup, err := b.AddIfNew(ctx, store.Record{ID: "new2", Features: later}); err != nil || dup {
		t.Fatalf("b.AddIfNew(new2) after the second FLUSHALL: %v %v", dup, err)
	}
	m, ok, err := a.Match(ctx, &later)
	if err != nil || !ok || m.ID != "new2" {
		t.Fatalf("a.Match(later) = %+v %v %v, want new2", m, ok, err)
	}
	if n, err := a.Len(ctx); err != nil || n != 1 {
		t.Errorf("a.Len = %d %v, want 1", n, err)
	}
}

// TestFailedCommit loses the write lock just before a commit (as when
// it expires under a paused holder): the log append refuses (fencing), the
// writes of the batch and the declines in favour of them are answered with
// 503's error, and neither this replica nor another server's sees them; the
// same documents are stored on the next try.
func TestFailedCommit(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	addr, prefix := "redis://"+srv.Addr()+"/0", newPrefix()
	var lose atomic.Bool
	var a *Store
	a = openStore(t, addr, prefix, Options{testBeforeCommit: func() {
		if lose.Load() {
			a.c.Del(context.Background(), a.lockKey)
		}
	}})
	b := openStore(t, addr, prefix, Options{})
	ex, err := rule.NewExtractor(rule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := randomText(9, 50)
	recs := []store.Record{
		{ID: "y", Features: ex.Extract(base), Meta: []byte(`{"n":1}`)},
		{ID: "y2", Features: ex.Extract(base + " more")},
	}
	lose.Store(true)
	_, _, errs := a.AddIfNewBatch(ctx, recs)
	for i, err := range errs {
		if !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, errLockLost) {
			t.Errorf("%s with the lock lost: error %v, want ErrUnavailable (lock lost)", recs[i].ID, err)
		}
	}
	for name, s := range map[string]*Store{"a": a, "b": b} {
		if n, err := s.Len(ctx); err != nil || n != 0 {
			t.Errorf("%s.Len after the failed commit = %d %v, want 0", name, n, err)
		}
		if _, ok, err := s.Match(ctx, &recs[1].Features); err != nil || ok {
			t.Errorf("%s.Match(y2) after the failed commit = %v %v, want none", name, ok, err)
		}
		if _, err := s.Get(ctx, "y"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s.Get(y) after the failed commit: %v, want ErrNotFound", name, err)
		}
	}
	if n := srv.CLI("XLEN", a.logKey); n != "0" {
		t.Errorf("log length after the failed commit = %s, want 0", n)
	}
	lose.Store(false)
	ms, dups, errs := a.AddIfNewBatch(ctx, recs)
	if errs[0] != nil || dups[0] || errs[1] != nil || !dups[1] || ms[1].ID != "y" {
		t.Fatalf("retry: %v %v %v, want y stored and y2 declined for it", errs, dups, ms)
	}
	if r, err := b.Get(ctx, "y"); err != nil || string(r.Meta) != `{"n":1}` {
		t.Errorf("b.Get(y) = %+v %v", r, err)
	}
}
