package redisstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// templatePages returns a source of pages that share a 150-word passage (a
// site's template) and have 100 words of their own each: J about 0.4
// between any two, so that many are LSH candidates of one another and
// none is a near-duplicate of another.
func templatePages(seed uint64) func() string {
	r := rand.New(rand.NewPCG(seed, 4))
	words := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "w%d", r.IntN(1_000_000))
		}
		return b.String()
	}
	template := words(150)
	return func() string { return template + " " + words(100) }
}

// oracle returns the ids of the documents of stored (in priority order)
// that the rule calls duplicates of f among those sharing a candidate key
// with it: what MatchAll must answer.
func oracle(rl *rule.Rule, stored []store.Record, f *rule.Features) []string {
	keys := rl.CandidateKeys(nil, f)
	var ids []string
	for i := range stored {
		g := &stored[i].Features
		shared := slices.ContainsFunc(rl.CandidateKeys(nil, g), func(k uint64) bool { return slices.Contains(keys, k) })
		if shared && rl.Duplicates(g, f) {
			ids = append(ids, stored[i].ID)
		}
	}
	return ids
}

func matchIDs(ms []rule.KeptMatch) []string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids
}

// TestPrefilterBeforeRecords: 300 pages that share a template are added
// with add_if_new (all stored), then 100 new such pages are matched. Their
// candidates are many, and the prefilter, read first from the record
// buckets, rules most out before their records are read: without it every
// candidate's record would be read. The verdicts are the rule's (an oracle
// over every stored document): no new page matches, near-copies of stored
// pages still do, in add_if_new too; and every record's prefilter field is
// the one decoding its record gives.
func TestPrefilterBeforeRecords(t *testing.T) {
	backends(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		rec := extractor(t)
		rl, err := rule.NewRule(rule.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := open(t, addr, newPrefix(), Options{})
		page := templatePages(3)
		var stored []store.Record
		var texts []string
		for i := range 300 {
			tx := page()
			r := rec(fmt.Sprint("p", i), tx)
			if m, dup, err := s.AddIfNew(ctx, r); err != nil || dup {
				t.Fatalf("AddIfNew(%s) = %+v, %v, %v; want stored", r.ID, m, dup, err)
			}
			stored, texts = append(stored, r), append(texts, tx)
		}
		d0, e0, p0 := s.MatchCounts()
		if p0 == 0 {
			t.Errorf("add_if_new of 300 pages prefiltered no candidate (%d matches, %d records read)", d0, e0)
		}

		_, e1, p1 := s.MatchCounts()
		cands := 0
		for range 100 {
			f := rec("", page()).Features
			ms, err := s.MatchAll(ctx, &f, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := matchIDs(ms), oracle(rl, stored, &f); !slices.Equal(got, want) {
				t.Fatalf("a new page matched %v, the rule says %v", got, want)
			}
			cands += len(s.candidatesOf(s.keys(&f), mustFields(t, s, &f), maxSeq+1))
		}
		_, e2, p2 := s.MatchCounts()
		pre, read := p2-p1, e2-e1
		t.Logf("100 new pages: %d candidates, %d ruled out by the prefilter, %d records read", cands, pre, read)
		if pre < 20 || 5*read > pre {
			t.Errorf("%d candidates ruled out by the prefilter and %d records read, want most ruled out", pre, read)
		}
		if int(pre+read) > cands {
			t.Errorf("%d ruled out and %d read of %d candidates", pre, read, cands)
		}

		// Near-copies: a few words changed. They match their page, as the
		// rule says, and add_if_new declines them in its favour.
		r := rand.New(rand.NewPCG(5, 6))
		for i := range 20 {
			j := r.IntN(len(stored))
			orig := stored[j]
			w := strings.Fields(texts[j])
			w[r.IntN(len(w))] = "changed"
			near := rec(fmt.Sprint("near", i), strings.Join(w, " "))
			ms, err := s.MatchAll(ctx, &near.Features, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := oracle(rl, stored, &near.Features)
			if got := matchIDs(ms); !slices.Equal(got, want) || !slices.Contains(got, orig.ID) {
				t.Fatalf("near-copy of %s matched %v, the rule says %v", orig.ID, got, want)
			}
			if m, dup, err := s.AddIfNew(ctx, near); err != nil || !dup || m.ID != want[0] {
				t.Fatalf("AddIfNew(near-copy of %s) = %+v, %v, %v; want declined for %s", orig.ID, m, dup, err, want[0])
			}
		}

		// Every record has its prefilter, the one its record decodes to.
		for _, orig := range stored[:20] {
			got, err := s.Get(ctx, orig.ID)
			if err != nil {
				t.Fatal(err)
			}
			rk, rf, _ := s.recordKey(got.Seq)
			v, err := s.c.HGet(ctx, rk, preField(rf)).Result()
			if err != nil {
				t.Fatalf("prefilter field of %s: %v", orig.ID, err)
			}
			if p := decodePrefilter(v); !p.Known() || p != got.Features.Pre {
				t.Errorf("prefilter field of %s does not hold its record's prefilter", orig.ID)
			}
		}
	})
}

// mustFields reads f's candidate keys' fields.
func mustFields(t testing.TB, s *Store, f *rule.Features) []string {
	t.Helper()
	vals, err := s.readFields(context.Background(), s.keys(f))
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

// dropPrefilters deletes every prefilter field of the index, as an index
// written before they were kept has none.
func dropPrefilters(t testing.TB, s *Store) {
	t.Helper()
	drop := func(ctx context.Context, c redis.Cmdable) error {
		it := c.Scan(ctx, 0, s.p+"r:*", 1000).Iterator()
		for it.Next(ctx) {
			fields, err := c.HKeys(ctx, it.Val()).Result()
			if err != nil {
				return err
			}
			for _, f := range fields {
				if strings.HasPrefix(f, "p") {
					if err := c.HDel(ctx, it.Val(), f).Err(); err != nil {
						return err
					}
				}
			}
		}
		return it.Err()
	}
	ctx := context.Background()
	var err error
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return drop(ctx, c) })
	} else {
		err = drop(ctx, s.c)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestRecordsWithoutPrefilter: an index whose records have no prefilter
// field (written before the layout kept one) still works: its candidates
// are all read (their prefilter is unknown and rules nothing out), the
// verdicts are the rule's, and deleting leaves no field behind.
func TestRecordsWithoutPrefilter(t *testing.T) {
	backends(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		rec := extractor(t)
		rl, err := rule.NewRule(rule.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := open(t, addr, newPrefix(), Options{})
		page := templatePages(8)
		var stored []store.Record
		for i := range 100 {
			r := rec(fmt.Sprint("p", i), page())
			r.Seq = uint64(i)
			stored = append(stored, r)
		}
		if err := s.PutBulk(ctx, stored); err != nil {
			t.Fatal(err)
		}
		if got := layout(t, s); got["r fields"] != 3*100 {
			t.Fatalf("layout %v: want a record, its prefilter and its state for each of 100 documents", got)
		}
		dropPrefilters(t, s)
		if got := layout(t, s); got["r fields"] != 2*100 {
			t.Fatalf("layout %v after dropping the prefilters: want 200 record fields", got)
		}
		_, e0, p0 := s.MatchCounts()
		for range 30 {
			f := rec("", page()).Features
			ms, err := s.MatchAll(ctx, &f, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := matchIDs(ms), oracle(rl, stored, &f); !slices.Equal(got, want) {
				t.Fatalf("a new page matched %v, the rule says %v", got, want)
			}
		}
		_, e1, p1 := s.MatchCounts()
		if p1 != p0 || e1 == e0 {
			t.Errorf("without prefilter fields: %d candidates ruled out, %d records read; want none ruled out, some read", p1-p0, e1-e0)
		}
		// A new document gets its prefilter; the old ones are found and
		// deleted as before.
		if _, dup, err := s.AddIfNew(ctx, rec("new", page())); err != nil || dup {
			t.Fatalf("AddIfNew(new) = %v, %v", dup, err)
		}
		if got := layout(t, s); got["r fields"] != 2*100+3 {
			t.Fatalf("layout %v: want the new document's record, prefilter and state beside 200", got)
		}
		for _, r := range append(stored, store.Record{ID: "new"}) {
			if ok, err := s.Remove(ctx, r.ID); err != nil || !ok {
				t.Fatalf("Remove(%s) = %v, %v", r.ID, ok, err)
			}
		}
		if got := settled(t, s); got["r fields"] != 0 || got["b fields"] != 0 || got["i fields"] != 0 {
			t.Errorf("after removing everything: %v, want no fields", got)
		}
	})
}
