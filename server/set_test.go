package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// testSet runs the behaviour every Set must have against the sets open
// returns (empty, deciding under opt).
func testSet(t *testing.T, open func(t *testing.T, opt rule.Options) Set) {
	ctx := context.Background()
	ex, err := rule.NewExtractor(rule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(id, text string) store.Record { return store.Record{ID: id, Features: ex.Extract(text)} }
	a := randomText(1, 60)
	nearA := a + " and one more word"
	b := randomText(2, 60)

	t.Run("MatchAddRemove", func(t *testing.T) {
		s := open(t, rule.Options{})
		if n, err := s.Len(ctx); err != nil || n != 0 {
			t.Fatalf("Len of an empty set = %d, %v", n, err)
		}
		ra := rec("a", a)
		if _, dup, err := s.AddIfNew(ctx, ra); err != nil || dup {
			t.Fatalf("AddIfNew(a) into an empty set: dup %v, %v", dup, err)
		}
		if err := s.Add(ctx, rec("a2", a)); err != nil {
			t.Fatalf("Add(a2, same text): %v", err)
		}
		if err := s.Add(ctx, rec("b", b)); err != nil {
			t.Fatalf("Add(b): %v", err)
		}
		if _, _, err := s.AddIfNew(ctx, rec("a", randomText(3, 60))); !errors.Is(err, store.ErrExists) {
			t.Errorf("AddIfNew(existing id a, new text) error = %v, want ErrExists", err)
		}
		f := ex.Extract(nearA)
		m, ok, err := s.Match(ctx, &f)
		if err != nil || !ok || m.ID != "a" {
			t.Fatalf("Match(near a) = %+v, %v, %v; want a, the first stored", m, ok, err)
		}
		ms, err := s.MatchAll(ctx, &f, 0)
		if err != nil || len(ms) != 2 || ms[0].ID != "a" || ms[1].ID != "a2" || ms[0].Seq >= ms[1].Seq {
			t.Fatalf("MatchAll(near a) = %+v, %v; want a then a2", ms, err)
		}
		if m, dup, err := s.AddIfNew(ctx, rec("c", nearA)); err != nil || !dup || m.ID != "a" {
			t.Fatalf("AddIfNew(c, near a) = %+v, %v, %v; want declined for a", m, dup, err)
		}
		if _, err := s.Get(ctx, "c"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(declined c) error = %v, want ErrNotFound", err)
		}
		if r, err := s.Get(ctx, "b"); err != nil || r.Features.FP != ex.Extract(b).FP {
			t.Errorf("Get(b) = %+v, %v", r, err)
		}
		if ok, err := s.Remove(ctx, "a"); err != nil || !ok {
			t.Fatalf("Remove(a) = %v, %v", ok, err)
		}
		if ok, err := s.Remove(ctx, "a"); err != nil || ok {
			t.Errorf("second Remove(a) = %v, %v; want false", ok, err)
		}
		if m, ok, err := s.Match(ctx, &f); err != nil || !ok || m.ID != "a2" {
			t.Errorf("Match(near a) after removing a = %+v, %v, %v; want a2", m, ok, err)
		}
		if n, err := s.Len(ctx); err != nil || n != 2 {
			t.Errorf("Len = %d, %v; want 2", n, err)
		}
	})

	t.Run("ExactWithoutFingerprint", func(t *testing.T) {
		s := open(t, rule.Options{})
		if _, dup, err := s.AddIfNew(ctx, rec("p", "!!! ???")); err != nil || dup {
			t.Fatalf("AddIfNew(punctuation): %v %v", dup, err)
		}
		f := ex.Extract("!!! ???")
		if m, ok, err := s.Match(ctx, &f); err != nil || !ok || m.ID != "p" || !m.Exact {
			t.Errorf("Match(same punctuation) = %+v, %v, %v; want p, exact", m, ok, err)
		}
	})

	t.Run("AddIfNewRace", func(t *testing.T) {
		s := open(t, rule.Options{})
		const rounds, writers = 20, 4
		for round := range rounds {
			base := randomText(uint64(100+round), 50)
			recs := make([]store.Record, writers)
			for i := range recs {
				recs[i] = rec(fmt.Sprintf("r%d-%d", round, i), base+fmt.Sprintf(" x%d", i))
			}
			var wg sync.WaitGroup
			var added atomic.Int32
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, dup, err := s.AddIfNew(ctx, recs[i]); err != nil {
						t.Error(err)
					} else if !dup {
						added.Add(1)
					}
				}()
			}
			wg.Wait()
			if n := added.Load(); n != 1 {
				t.Fatalf("round %d: %d of %d near-identical documents added, want 1", round, n, writers)
			}
		}
	})
}

// TestKeptSet runs the Set suite against the service over an embedded
// store (a MemStore): its kept set (keptset.Set, through scaledSet) for the
// reads, the Server for the writes, under each method.
func TestKeptSet(t *testing.T) {
	for _, method := range []string{rule.MethodMinHash, rule.MethodSimHash} {
		t.Run(method, func(t *testing.T) {
			testSet(t, func(t *testing.T, opt rule.Options) Set {
				opt.Method = method
				return serverSet{newTestServer(t, nil, Options{Dedup: opt})}
			})
		})
	}
}

// serverSet is the Set of a Server over an embedded store: the writes go
// through the Server's decision (beginScaled, with the record's features),
// the reads to its kept set.
type serverSet struct{ s *Server }

func (x serverSet) Match(ctx context.Context, f *rule.Features) (rule.KeptMatch, bool, error) {
	return x.s.set.Match(ctx, f)
}

func (x serverSet) MatchAll(ctx context.Context, f *rule.Features, limit int) ([]rule.KeptMatch, error) {
	return x.s.set.MatchAll(ctx, f, limit)
}

// add decides on r under mode and stores it when the mode says so.
func (x serverSet) add(ctx context.Context, r store.Record, mode string) (Result, error) {
	d := Doc{ID: r.ID, Meta: r.Meta, Mode: mode}
	res, wait, err := x.s.beginScaled(ctx, d, r.Features, Result{ID: r.ID, FP: r.Features.FP})
	if err != nil {
		return res, err
	}
	return x.s.finish(r.ID, res, wait)
}

func (x serverSet) AddIfNew(ctx context.Context, r store.Record) (rule.KeptMatch, bool, error) {
	res, err := x.add(ctx, r, ModeAddIfNew)
	if err != nil || len(res.Duplicates) == 0 {
		return rule.KeptMatch{}, false, err
	}
	return res.Duplicates[0], true, nil
}

func (x serverSet) Add(ctx context.Context, r store.Record) error {
	_, err := x.add(ctx, r, ModeAdd)
	return err
}

func (x serverSet) Remove(ctx context.Context, id string) (bool, error) {
	err := x.s.Delete(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (x serverSet) Get(ctx context.Context, id string) (store.Record, error) { return x.s.Get(ctx, id) }

func (x serverSet) Len(ctx context.Context) (int, error) { return x.s.Len(ctx) }
