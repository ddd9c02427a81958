package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
)

// text returns n words drawn with seed from a vocabulary large enough that
// texts of different seeds share few shingles.
func text(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 3))
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("w%c%c%c", 'a'+r.IntN(26), 'a'+r.IntN(26), 'a'+r.IntN(26))
	}
	return strings.Join(w, " ")
}

func extractor(t testing.TB) func(id, text string) store.Record {
	return extractorOf(t, rule.Options{})
}

// extractorOf returns the records of texts under the decision options o.
func extractorOf(t testing.TB, o rule.Options) func(id, text string) store.Record {
	ex, err := rule.NewExtractor(o)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	return func(id, text string) store.Record {
		mu.Lock()
		defer mu.Unlock()
		return store.Record{ID: id, Features: ex.Extract(text)}
	}
}

// layout counts the index's keys and hash fields by family (b, r, i), and
// the block keys and their entries (f), on every master.
func layout(t testing.TB, s *Store) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	out := map[string]int64{}
	var mu sync.Mutex
	count := func(ctx context.Context, c redis.Cmdable) error {
		for _, fam := range []string{"b", "r", "i"} {
			it := c.Scan(ctx, 0, s.p+fam+":*", 1000).Iterator()
			for it.Next(ctx) {
				n, err := c.HLen(ctx, it.Val()).Result()
				if err != nil {
					return err
				}
				mu.Lock()
				out[fam+" keys"]++
				out[fam+" fields"] += n
				mu.Unlock()
			}
			if err := it.Err(); err != nil {
				return err
			}
		}
		it := c.Scan(ctx, 0, s.p+"f[0-3]????", 1000).Iterator()
		for it.Next(ctx) {
			n, err := c.StrLen(ctx, it.Val()).Result()
			if err != nil {
				return err
			}
			mu.Lock()
			out["f keys"]++
			out["f entries"] += n / fpEntry
			mu.Unlock()
		}
		return it.Err()
	}
	var err error
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return count(ctx, c) })
	} else {
		err = count(ctx, s.c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// settled waits until the collector has nothing queued and the layout
// stops changing, and returns it.
func settled(t testing.TB, s *Store) map[string]int64 {
	t.Helper()
	prev := layout(t, s)
	for range 100 {
		time.Sleep(20 * time.Millisecond)
		cur := layout(t, s)
		if fmt.Sprint(cur) == fmt.Sprint(prev) && s.gc.pending.Load() == 0 {
			return cur
		}
		prev = cur
	}
	t.Fatalf("the index did not settle: %v", prev)
	return nil
}

// TestChurn adds and deletes the same documents 100 times (with
// near-duplicates declined by add_if_new on every round): every round
// leaves the index with exactly the keys and fields it had before, so
// Redis memory stays flat (nothing like a log grows).
func TestChurn(t *testing.T) {
	backends(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		rec := extractor(t)
		s := open(t, addr, newPrefix(), Options{})
		keep := rec("keep", text(999, 60)) // one document that stays
		if err := s.Add(ctx, keep); err != nil {
			t.Fatal(err)
		}
		const docs = 20
		base := make([]store.Record, docs)
		near := make([]store.Record, docs)
		for i := range base {
			tx := text(uint64(i), 60)
			base[i] = rec(fmt.Sprint("d", i), tx)
			near[i] = rec(fmt.Sprint("n", i), tx+" plus a few more words")
		}
		before := settled(t, s)
		rounds := 100
		if testing.Short() {
			rounds = 10
		}
		for round := range rounds {
			for i := range base {
				if _, dup, err := s.AddIfNew(ctx, base[i]); err != nil || dup {
					t.Fatalf("round %d: AddIfNew(%s) = dup %v, %v", round, base[i].ID, dup, err)
				}
				if m, dup, err := s.AddIfNew(ctx, near[i]); err != nil || !dup || m.ID != base[i].ID {
					t.Fatalf("round %d: AddIfNew(%s) = %+v, %v, %v; want declined for %s", round, near[i].ID, m, dup, err, base[i].ID)
				}
			}
			for i := range base {
				if ok, err := s.Remove(ctx, base[i].ID); err != nil || !ok {
					t.Fatalf("round %d: Remove(%s) = %v, %v", round, base[i].ID, ok, err)
				}
			}
			if round == 0 || round == rounds-1 {
				if after := settled(t, s); fmt.Sprint(after) != fmt.Sprint(before) {
					t.Fatalf("after round %d the index holds %v, before it %v", round, after, before)
				}
			}
		}
		if n, err := s.Len(ctx); err != nil || n != 1 {
			t.Errorf("Len = %d, %v; want 1", n, err)
		}
		if m, ok, err := s.Match(ctx, &keep.Features); err != nil || !ok || m.ID != "keep" {
			t.Errorf("Match(keep) = %+v, %v, %v", m, ok, err)
		}
	})
}

// TestStalePending leaves an addition pending, as a server that died
// between writing it and deciding would: a near-duplicate added later
// waits for it for PendingTTL, then cancels it and is stored, and the
// collector clears what the dead one wrote.
func TestStalePending(t *testing.T) {
	ctx := context.Background()
	rec := extractor(t)
	addr := single(t)
	p := newPrefix()
	dead := open(t, addr, p, Options{})
	tx := text(7, 60)
	r := rec("dead", tx)
	seq, err := dead.nextSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.Seq = seq
	enc, err := dead.encodeRecord(&r, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := dead.claim(ctx, &r, enc); err != nil {
		t.Fatal(err)
	}
	if _, err := dead.addEntries(ctx, seq, dead.keys(&r.Features), r.Features.FP); err != nil {
		t.Fatal(err)
	}
	dead.Close() // and never decides

	const ttl = 300 * time.Millisecond
	s := open(t, addr, p, Options{PendingTTL: ttl})
	f := rec("x", tx).Features
	if _, ok, err := s.Match(ctx, &f); err != nil || ok {
		t.Fatalf("Match against a pending addition = %v, %v; want nothing (only committed documents count)", ok, err)
	}
	if _, err := s.Get(ctx, "dead"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get(pending) error = %v, want ErrNotFound", err)
	}
	t0 := time.Now()
	if _, dup, err := s.AddIfNew(ctx, rec("live", tx+" and more")); err != nil || dup {
		t.Fatalf("AddIfNew(live) = dup %v, %v; want stored once the pending one is taken for dead", dup, err)
	}
	if waited := time.Since(t0); waited < ttl/2 {
		t.Errorf("AddIfNew(live) returned after %v: it did not wait for the pending duplicate before it", waited)
	}
	// The dead addition's id is free again.
	if _, dup, err := s.AddIfNew(ctx, rec("dead", text(8, 60))); err != nil || dup {
		t.Fatalf("AddIfNew(dead, other text) = dup %v, %v; want stored: the id was never committed", dup, err)
	}
	got := settled(t, s)
	if got["r fields"] != 6 { // two records, a prefilter and a state each
		t.Errorf("record fields after the collector ran: %d, want 6 (%v)", got["r fields"], got)
	}
}

// TestConcurrentServers adds groups of near-duplicates through three
// stores (three servers) and eight writers at once, under either method:
// exactly one document of each group is stored, whatever the
// interleaving, and nothing is left pending.
func TestConcurrentServers(t *testing.T) {
	for _, m := range []string{rule.MethodMinHash, rule.MethodSimHash} {
		t.Run(m, func(t *testing.T) { testConcurrentServers(t, rule.Options{Method: m}) })
	}
}

func testConcurrentServers(t *testing.T, o rule.Options) {
	backends(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		rec := extractorOf(t, o)
		p := newPrefix()
		opt := Options{Dedup: o}
		stores := []*Store{open(t, addr, p, opt), open(t, addr, p, opt), open(t, addr, p, opt)}
		groups := 60
		if testing.Short() {
			groups = 15
		}
		const writers = 8
		var wg sync.WaitGroup
		stored := make([][]string, groups)
		var mu sync.Mutex
		errs := make(chan error, groups*writers)
		for g := range groups {
			base := text(uint64(1000+g), 50)
			for w := range writers {
				r := rec(fmt.Sprintf("g%d-%d", g, w), base+strings.Repeat(" extra", w%3)+" "+strconv.Itoa(w))
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, dup, err := stores[(g+w)%len(stores)].AddIfNew(ctx, r)
					if err != nil {
						errs <- err
						return
					}
					if !dup {
						mu.Lock()
						stored[g] = append(stored[g], r.ID)
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for g, ids := range stored {
			if len(ids) != 1 {
				t.Errorf("group %d: stored %v, want exactly one", g, ids)
			}
		}
		if n, err := stores[0].Len(ctx); err != nil || n != groups {
			t.Errorf("Len = %d, %v; want %d", n, err, groups)
		}
		got := settled(t, stores[0])
		if got["r fields"] != int64(3*groups) || got["i fields"] != int64(groups) || got["f entries"] != int64(fpBlocks*groups) {
			t.Errorf("after the collector: %v; want %d records with their prefilters and states, %d ids and %d block entries", got, groups, groups, fpBlocks*groups)
		}
	})
}

// TestRedisRestart kills Redis under a store: requests fail with
// store.ErrUnavailable (503) while it is down, and the same store serves
// again once it is back, without a restart of its own; an index that came
// back empty (no persistence) gets its layout recorded again.
func TestRedisRestart(t *testing.T) {
	ctx := context.Background()
	rec := extractor(t)
	srv := redistest.Start(t)
	addr := "redis://" + srv.Addr() + "/0"
	s := open(t, addr, newPrefix(), Options{Timeout: 200 * time.Millisecond, Retries: -1})
	a := rec("a", text(1, 50))
	if err := s.Add(ctx, a); err != nil {
		t.Fatal(err)
	}
	srv.Kill(t)
	if _, _, err := s.AddIfNew(ctx, rec("b", text(2, 50))); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("AddIfNew with Redis down: %v, want ErrUnavailable", err)
	}
	if _, _, err := s.Match(ctx, &a.Features); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Match with Redis down: %v, want ErrUnavailable", err)
	}
	if err := s.Ping(ctx); err == nil {
		t.Fatal("Ping with Redis down: no error")
	}
	srv.Restart(t)
	var err error
	for range 50 { // the pool reconnects
		if err = s.Ping(ctx); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("Ping after the restart: %v", err)
	}
	if _, dup, err := s.AddIfNew(ctx, rec("b", text(2, 50))); err != nil || dup {
		t.Fatalf("AddIfNew after the restart = dup %v, %v", dup, err)
	}
	if got := srv.CLI("HGET", s.p+"meta", "bandbits"); got != strconv.Itoa(int(s.bbits)) {
		t.Errorf("meta after an empty restart: bandbits %q, want %d recorded again", got, s.bbits)
	}
}

// TestAddIfNewBatch decides a batch with near-duplicates inside it and of
// stored documents, and checks every verdict (stored, or declined for the
// same document) against AddIfNew called on each in turn on another index.
func TestAddIfNewBatch(t *testing.T) {
	backends(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		rec := extractor(t)
		var stored, batch []store.Record
		for i := range 10 {
			stored = append(stored, rec(fmt.Sprint("s", i), text(uint64(500+i), 50)))
		}
		for i := range 40 {
			var tx string
			switch i % 4 {
			case 0: // new
				tx = text(uint64(600+i), 50)
			case 1: // a near-copy of the document before it in the batch
				tx = text(uint64(600+i-1), 50) + " and then some"
			case 2: // a near-copy of a stored document
				tx = text(uint64(500+i%10), 50) + " once more"
			case 3: // an exact copy of the first of its group
				tx = text(uint64(600+i-3), 50)
			}
			batch = append(batch, rec(fmt.Sprint("b", i), tx))
		}
		one, seq := open(t, addr, newPrefix(), Options{}), open(t, addr, newPrefix(), Options{})
		for _, s := range []*Store{one, seq} {
			for _, r := range stored {
				if err := s.Add(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
		ms, dups, errs := one.AddIfNewBatch(ctx, batch)
		declined := 0
		for i, r := range batch {
			m, dup, err := seq.AddIfNew(ctx, r)
			if err != nil || errs[i] != nil {
				t.Fatalf("%s: one at a time %v, in the batch %v", r.ID, err, errs[i])
			}
			if dup != dups[i] || m.ID != ms[i].ID {
				t.Errorf("%s: one at a time dup %v (%s), in the batch dup %v (%s)", r.ID, dup, m.ID, dups[i], ms[i].ID)
			}
			if dup {
				declined++
			}
		}
		if declined < 20 {
			t.Errorf("%d of 40 declined: the batch tests little", declined)
		}
	})
}

// TestCounterWentBack sets the sequence counter back, as a Redis that lost
// writes would: the next addition finds its seq holding another record,
// moves the counter on and is stored under a new one, and the documents
// stored before keep their records.
func TestCounterWentBack(t *testing.T) {
	ctx := context.Background()
	rec := extractor(t)
	addr := single(t)
	p := newPrefix()
	s := open(t, addr, p, Options{})
	for i := range 5 {
		if _, dup, err := s.AddIfNew(ctx, rec(fmt.Sprint("old", i), text(uint64(3000+i), 40))); err != nil || dup {
			t.Fatalf("AddIfNew(old%d): %v %v", i, dup, err)
		}
	}
	redistest.Shared(t).CLI("SET", s.seqKey, "0")
	s2 := open(t, addr, p, Options{}) // a server with no block of its own yet
	if _, dup, err := s2.AddIfNew(ctx, rec("new", text(3100, 40))); err != nil || dup {
		t.Fatalf("AddIfNew(new) after the counter went back: %v %v", dup, err)
	}
	for i := range 5 {
		if r, err := s2.Get(ctx, fmt.Sprint("old", i)); err != nil || r.ID != fmt.Sprint("old", i) {
			t.Errorf("Get(old%d) = %+v, %v: overwritten?", i, r.ID, err)
		}
	}
	if r, err := s2.Get(ctx, "new"); err != nil || r.Seq < 1<<24 {
		t.Errorf("Get(new) = seq %d, %v; want a seq past the jump", r.Seq, err)
	}
}

// TestChurnMemory adds and deletes the same 50 documents (and declines a
// near-duplicate of each) 100 times: the memory of the index's keys (the
// sum of MEMORY USAGE over them, on a Redis of its own) after the last
// round is within 0.1% of what it was after the tenth (the same bytes, in
// practice), so nothing grows with
// history (TestChurn checks the keys and fields themselves). INFO's
// used_memory_dataset, measured the same way, moved by ±20-25 KB between
// runs whatever the rounds (Redis's own structures, not the index's).
func TestChurnMemory(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	if out := srv.CLI("CONFIG", "SET", "hash-max-listpack-value", "4096"); !strings.Contains(out, "OK") {
		t.Fatalf("CONFIG SET: %s", out)
	}
	s := open(t, "redis://"+srv.Addr()+"/0", newPrefix(), Options{})
	rec := extractor(t)
	for i := range 200 { // documents that stay, so that the buckets are not all emptied
		if err := s.Add(ctx, rec(fmt.Sprint("keep", i), text(uint64(7000+i), 120))); err != nil {
			t.Fatal(err)
		}
	}
	const docs = 50
	base := make([]store.Record, docs)
	near := make([]store.Record, docs)
	for i := range base {
		tx := text(uint64(8000+i), 120)
		base[i] = rec(fmt.Sprint("d", i), tx)
		near[i] = rec(fmt.Sprint("n", i), tx+" and two words")
	}
	dataset := func() int64 {
		settled(t, s)
		var sum int64
		it := s.c.Scan(ctx, 0, s.p+"*", 1000).Iterator()
		for it.Next(ctx) {
			n, err := s.c.MemoryUsage(ctx, it.Val(), 0).Result()
			if err != nil {
				t.Fatal(err)
			}
			sum += n
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		return sum
	}
	rounds, warm := 100, 10
	if testing.Short() {
		rounds, warm = 20, 5
	}
	var first, last int64
	for round := range rounds {
		for i := range base {
			if _, dup, err := s.AddIfNew(ctx, base[i]); err != nil || dup {
				t.Fatalf("round %d: AddIfNew(%s) = dup %v, %v", round, base[i].ID, dup, err)
			}
			if _, dup, err := s.AddIfNew(ctx, near[i]); err != nil || !dup {
				t.Fatalf("round %d: AddIfNew(%s) = dup %v, %v; want declined", round, near[i].ID, dup, err)
			}
		}
		for i := range base {
			if err := s.Delete(ctx, base[i].ID); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		switch round {
		case warm - 1:
			first = dataset()
		case rounds - 1:
			last = dataset()
		}
	}
	t.Logf("the index's keys took %d B after round %d, %d B after round %d", first, warm, last, rounds)
	if d := last - first; d > first/1000 || d < -first/1000 {
		t.Errorf("the index's keys went from %d B to %d B over %d rounds of churn (%+d B): want within 0.1%%", first, last, rounds, d)
	}
}

// TestStoresAgree: two stores (two servers) share one index (one Redis,
// then a cluster) and take turns at random with add_if_new, delete, search
// and fingerprint search, under either method. Every answer must be the
// one the rule gives over the documents stored so far, in priority order
// (rule.Rule.Match: the batch's decision), and a fingerprint search the
// one a scan of them gives: what one store acknowledged, the next request
// to the other sees, deletes included. (The replica layout's
// TestReplicasAgree, moved here with it.)
func TestStoresAgree(t *testing.T) {
	for _, m := range []string{rule.MethodSimHash, rule.MethodMinHash} {
		t.Run(m, func(t *testing.T) {
			backends(t, func(t *testing.T, addr string) { testStoresAgree(t, addr, m) })
		})
	}
}

func testStoresAgree(t *testing.T, addr, method string) {
	ctx := context.Background()
	o := rule.Options{Method: method}
	p := newPrefix()
	stores := []*Store{open(t, addr, p, Options{Dedup: o}), open(t, addr, p, Options{Dedup: o})}
	rl, err := rule.NewRule(o)
	if err != nil {
		t.Fatal(err)
	}
	rec := extractorOf(t, o)
	type doc struct {
		id string
		f  rule.Features
	}
	var model []doc // the stored documents, in priority order
	matches := func(f *rule.Features) []string {
		out := []string{}
		for i := range model {
			if rl.Duplicates(&model[i].f, f) {
				out = append(out, model[i].id)
			}
		}
		return out
	}
	// 25 base texts, each posted in variants that are near-duplicates of
	// one another.
	r := rand.New(rand.NewPCG(7, 7))
	variant := func() string { return text(uint64(500+r.IntN(25)), 50) + strings.Repeat(" more", r.IntN(3)) }
	counts := map[string]int{}
	steps := 400
	if testing.Short() {
		steps = 150
	}
	for step := range steps {
		i := r.IntN(len(stores))
		s, who := stores[i], fmt.Sprintf("step %d, store %d", step, i)
		switch op := r.IntN(10); {
		case op < 5:
			counts["add_if_new"]++
			x := rec(fmt.Sprint("d", step), variant())
			m, dup, err := s.AddIfNew(ctx, x)
			want := matches(&x.Features)
			if err != nil || dup != (len(want) > 0) || dup && m.ID != want[0] {
				t.Fatalf("%s: AddIfNew(%s) = %q %v %v, want %v", who, x.ID, m.ID, dup, err, want)
			}
			if !dup {
				model = append(model, doc{x.ID, x.Features})
			}
		case op < 7:
			counts["delete"]++
			id := "never-stored"
			if len(model) > 0 && r.IntN(5) > 0 {
				id = model[r.IntN(len(model))].id
			}
			ok, err := s.Remove(ctx, id)
			n := len(model)
			model = slices.DeleteFunc(model, func(d doc) bool { return d.id == id })
			if err != nil || ok != (len(model) < n) {
				t.Fatalf("%s: Remove(%s) = %v %v, want %v", who, id, ok, err, len(model) < n)
			}
		case op < 9:
			counts["search"]++
			x := rec("", variant())
			got, err := s.MatchAll(ctx, &x.Features, 0)
			ids := []string{}
			for _, m := range got {
				ids = append(ids, m.ID)
			}
			if want := matches(&x.Features); err != nil || !slices.Equal(ids, want) {
				t.Fatalf("%s: MatchAll = %v %v, want %v", who, ids, err, want)
			}
		default:
			counts["fingerprint"]++
			fp := rec("", variant()).Features.FP
			for _, k := range []int{3, rl.QueryK()} {
				got, err := s.QueryFingerprint(ctx, fp, k, 0)
				var want []string
				for d := range k + 1 {
					for _, m := range model {
						if bits.OnesCount64(m.f.FP^fp) == d {
							want = append(want, m.id)
						}
					}
				}
				ids := []string{}
				for _, m := range got {
					ids = append(ids, m.ID)
				}
				if err != nil || !slices.Equal(ids, want) {
					t.Fatalf("%s: QueryFingerprint(k %d) = %v %v, want %v", who, k, ids, err, want)
				}
			}
		}
	}
	for i, s := range stores {
		if n, err := s.Len(ctx); err != nil || n != len(model) {
			t.Errorf("store %d: Len = %d %v, want %d", i, n, err, len(model))
		}
	}
	t.Logf("%v; %d stored at the end", counts, len(model))
}

// TestPutBatchSentAgain sends one batch twice, as a client whose reply
// timed out sends it again (go-redis retries a pipeline; the 10M import of
// issue 34 failed on one): the second call stores nothing twice and
// reports nothing as already stored, the count stays that of the
// documents, and an id held by another document is still refused. A
// record whose id an earlier, lost attempt wrote is taken as its own.
func TestPutBatchSentAgain(t *testing.T) {
	ctx := context.Background()
	rec := extractor(t)
	backends(t, func(t *testing.T, addr string) {
		s := open(t, addr, newPrefix(), Options{})
		rs := make([]store.Record, 20)
		for i := range rs {
			rs[i] = rec(fmt.Sprint("d", i), text(uint64(5000+i), 60))
			rs[i].Seq = uint64(100 + i)
		}
		// A lost first attempt of d0 wrote its id (the first round
		// trip), nothing else.
		if err := s.c.HSet(ctx, s.idKey("d0"), "d0", "100").Err(); err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			_, errs, err := s.PutBatch(ctx, slices.Clone(rs))
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if n, err := s.Len(ctx); err != nil || n != len(rs) {
				t.Fatalf("round %d: Len = %d, %v; want %d", round, n, err, len(rs))
			}
			for i := range rs {
				if r, err := s.Get(ctx, rs[i].ID); err != nil || r.Seq != rs[i].Seq {
					t.Fatalf("round %d: Get(%s) = seq %d, %v; want %d", round, rs[i].ID, r.Seq, err, rs[i].Seq)
				}
			}
		}
		other := rs[3]
		other.Seq = 500
		_, errs, err := s.PutBatch(ctx, []store.Record{other})
		if err != nil || !errors.Is(errs[0], store.ErrExists) {
			t.Fatalf("PutBatch of d3 under another seq: %v, %v; want ErrExists", errs, err)
		}
		if r, err := s.Get(ctx, "d3"); err != nil || r.Seq != 103 {
			t.Fatalf("Get(d3) after the refused put = seq %d, %v", r.Seq, err)
		}
		if n, err := s.Len(ctx); err != nil || n != len(rs) {
			t.Fatalf("Len = %d, %v; want %d", n, err, len(rs))
		}
		// The commit's count, sent twice with one token (a retried
		// pipeline), counts once.
		keys := []string{s.countKey, s.countKey + ":test"}
		for range 2 {
			if err := countOnce.Run(ctx, s.c, keys, 5, countTokenTTL).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := s.Len(ctx); err != nil || n != len(rs)+5 {
			t.Fatalf("Len after one count sent twice = %d, %v; want %d", n, err, len(rs)+5)
		}
	})
}
