package redisstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/rule"
	"github.com/neardup/neardup/store"
	"github.com/redis/go-redis/v9"
)

// BenchmarkStore measures the library's add_if_new and match against an
// index of REDISSTORE_BENCH_N documents (default 20,000) on the shared test
// Redis, from GOMAXPROCS×16 goroutines (b.SetParallelism), as the service's
// concurrent requests call it:
//
//	REDISSTORE_BENCH_N=200000 go test -run '^$' -bench Store -benchtime 20000x ./store/redisstore
func BenchmarkStore(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("REDISSTORE_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	rec := extractor(b)
	s := open(b, single(b), newPrefix(), Options{Capacity: n})
	batch := make([]store.Record, 0, 1000)
	for i := range n {
		r := rec(fmt.Sprint("pre-", i), text(uint64(i), 150))
		r.Seq = uint64(i)
		if batch = append(batch, r); len(batch) == cap(batch) || i == n-1 {
			if err := s.PutBulk(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	queries := make([]store.Record, 4096)
	for i := range queries {
		queries[i] = rec("", text(uint64(i*7%n), 150)+" edited")
	}
	var next atomic.Int64
	b.Run("match", func(b *testing.B) {
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				q := &queries[next.Add(1)%int64(len(queries))]
				if _, ok, err := s.Match(ctx, &q.Features); err != nil || !ok {
					b.Errorf("Match: %v %v", ok, err)
					return
				}
			}
		})
	})
	b.Run("add_if_new", func(b *testing.B) {
		recs := make([]store.Record, b.N)
		for i := range recs {
			recs[i] = rec(fmt.Sprint("new-", b.N, "-", i), text(uint64(2*n+b.N+i), 150))
		}
		b.ResetTimer()
		b.SetParallelism(16)
		var id atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r := recs[id.Add(1)-1]
				if _, dup, err := s.AddIfNew(ctx, r); err != nil || dup {
					b.Errorf("AddIfNew: %v %v", dup, err)
					return
				}
			}
		})
	})
}

// BenchmarkCandidates measures what reading n candidates costs a decision
// (their records read and the rule asked about each), with their records
// read at once ("direct") or their prefilters first ("prefilter"), for
// candidates the prefilter rules out ("unrelated": pages sharing a
// template, J ~0.4) and for one near-duplicate, which it never rules out,
// among such pages ("one-near-copy"), one request at a time ("serial": its
// latency) and from GOMAXPROCS×16 goroutines ("parallel": the cost under
// load). Besides the time, it reports the CPU this process and Redis spent
// per decision (us-cpu/op, us-redis/op), which other load on the machine
// disturbs less. The two modes of one case run one after the other. It
// chose directMax:
//
//	go test -run '^$' -bench Candidates -benchtime 3000x -count 3 ./store/redisstore
func BenchmarkCandidates(b *testing.B) {
	ctx := context.Background()
	rec := extractor(b)
	const groups, size = 64, 16
	var recs []store.Record
	page := templatePages(11)
	var unrelated, oneNear [groups][]cand
	var newPages, nearCopies [groups]rule.Features
	for g := range groups {
		base := page()
		for i := range size {
			// A near-copy of base (one more word), and an unrelated page.
			near := rec(fmt.Sprint("n", g, "-", i), base+" "+strconv.Itoa(i))
			other := rec(fmt.Sprint("u", g, "-", i), page())
			near.Seq, other.Seq = uint64(len(recs)), uint64(len(recs)+1)
			if i == 0 {
				oneNear[g] = append(oneNear[g], cand{seq: near.Seq})
			} else {
				oneNear[g] = append(oneNear[g], cand{seq: other.Seq})
			}
			unrelated[g] = append(unrelated[g], cand{seq: other.Seq})
			recs = append(recs, near, other)
		}
		nearCopies[g] = rec("", base+" again").Features
		newPages[g] = rec("", page()).Features
	}
	modes := []struct {
		name string
		s    *Store
	}{
		{"direct", open(b, single(b), newPrefix(), Options{directMax: 1 << 30})},
		{"prefilter", open(b, single(b), newPrefix(), Options{directMax: -1})},
	}
	for _, m := range modes {
		if err := m.s.PutBulk(ctx, recs); err != nil {
			b.Fatal(err)
		}
	}
	ownCPU := func() float64 {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	for _, kind := range []string{"unrelated", "one-near-copy"} {
		for _, n := range []int{1, 2, 3, 4, 8, 16} {
			query := func(i int64) (*rule.Features, []cand) {
				g := int(i % groups)
				if kind == "unrelated" {
					return &newPages[g], unrelated[g][:n]
				}
				return &nearCopies[g], oneNear[g][:n]
			}
			for _, par := range []string{"serial", "parallel"} {
				for _, m := range modes {
					s := m.s
					decide := func(f *rule.Features, cs []cand) int {
						cs, rs, err := s.readCandidates(ctx, f, cs)
						if err != nil {
							b.Fatal(err)
						}
						dup := 0
						for i := range cs {
							if _, ok := s.verdict(&rs[i], f); ok {
								dup++
							}
						}
						return dup
					}
					b.Run(fmt.Sprintf("%s/n=%d/%s/%s", kind, n, par, m.name), func(b *testing.B) {
						b.ReportAllocs()
						_, e0, _ := s.MatchCounts()
						r0, c0 := redisCPU(b, s), ownCPU()
						if par == "serial" {
							for i := range b.N {
								f, cs := query(int64(i))
								if got := decide(f, cs); kind == "one-near-copy" && got != 1 {
									b.Fatalf("%d near-copies found, want 1", got)
								}
							}
						} else {
							var next atomic.Int64
							b.SetParallelism(16)
							b.RunParallel(func(pb *testing.PB) {
								for pb.Next() {
									decide(query(next.Add(1)))
								}
							})
						}
						c1, r1 := ownCPU(), redisCPU(b, s)
						_, e1, _ := s.MatchCounts()
						b.ReportMetric(float64(e1-e0)/float64(b.N), "records/op")
						b.ReportMetric((c1-c0)*1e6/float64(b.N), "us-cpu/op")
						b.ReportMetric((r1-r0)*1e6/float64(b.N), "us-redis/op")
					})
				}
			}
		}
	}
}

// redisCPU returns the CPU seconds (user and system) that s's Redis has used.
func redisCPU(b *testing.B, s *Store) float64 {
	info, err := s.c.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for _, l := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			x, _ := strconv.ParseFloat(v, 64)
			sum += x
		}
	}
	return sum
}

// BenchmarkBandLookups measures where a match's first round trip spends
// Redis's CPU on a real index: the store's reads of the 24 band fields of
// texts it has not seen, against EXISTS of the same 24 keys (the key lookups
// alone, as 24 commands and as one), and against MGET of as many strings of
// 175 bytes (25 entries of 7 bytes: band entries packed as the block keys
// are), written for the run under keys of their own and deleted after it.
// Queries go 8 to a pipeline, as grouped requests do. It needs an index of
// the default settings (REDISSTORE_BENCH_URL, e.g. one that `neardup import
// --store` wrote) and a JSONL file of texts (REDISSTORE_BENCH_TEXTS), and
// reports Redis's CPU a query:
//
//	REDISSTORE_BENCH_URL=redis://127.0.0.1:7461/0 REDISSTORE_BENCH_TEXTS=next.jsonl \
//	  go test ./store/redisstore -run '^$' -bench BandLookups -benchtime 20000x
func BenchmarkBandLookups(b *testing.B) {
	url, path := os.Getenv("REDISSTORE_BENCH_URL"), os.Getenv("REDISSTORE_BENCH_TEXTS")
	if url == "" || path == "" {
		b.Skip("set REDISSTORE_BENCH_URL (an index) and REDISSTORE_BENCH_TEXTS (a JSONL file of texts)")
	}
	ctx := context.Background()
	// The index must be of the default decision settings (rule.Options{}),
	// under the default prefix: its recorded settings are passed back.
	o, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	c := redis.NewClient(o)
	settings, err := c.HGet(ctx, DefaultPrefix+"meta", "settings").Result()
	c.Close()
	if err != nil {
		b.Fatalf("%s: no index: %v", url, err)
	}
	s, err := Open(ctx, url, Options{Settings: settings})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	docs, err := corpus.Open([]string{path}, corpus.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ex, err := rule.NewExtractor(rule.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var queries [][]uint64
	for len(queries) < 20000 {
		d, err := docs.Next()
		if err != nil {
			break
		}
		f := ex.Extract(d.Text)
		queries = append(queries, s.rule.CandidateKeys(nil, &f))
	}
	docs.Close()
	packed := func(k uint64) string {
		bucket, _ := s.bandKey(k)
		return s.p + "bench-packed:" + strings.TrimPrefix(bucket, s.p+"b:")
	}
	// eachPacked sends cmd for the packed key of every query's keys, 100
	// queries to a pipeline.
	eachPacked := func(cmd func(pipe redis.Pipeliner, key string)) error {
		for i := 0; i < len(queries); i += 100 {
			pipe := s.c.Pipeline()
			for _, keys := range queries[i:min(i+100, len(queries))] {
				for _, k := range keys {
					cmd(pipe, packed(k))
				}
			}
			if _, err := pipe.Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	value := strings.Repeat("\x00\x01\x02\x03\x04\x05\x06", 25)
	if err := eachPacked(func(pipe redis.Pipeliner, key string) { pipe.Set(ctx, key, value, 0) }); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := eachPacked(func(pipe redis.Pipeliner, key string) { pipe.Del(ctx, key) }); err != nil {
			b.Error(err)
		}
	}()
	buckets := func(keys []uint64) []string {
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i], _ = s.bandKey(k)
		}
		return out
	}
	const group = 8
	for _, c := range []struct {
		name string
		cmds func(pipe redis.Pipeliner, keys []uint64)
	}{
		{"fields", func(pipe redis.Pipeliner, keys []uint64) { s.readCmds(ctx, pipe, keys) }},
		{"exists-each", func(pipe redis.Pipeliner, keys []uint64) {
			for _, k := range buckets(keys) {
				pipe.Exists(ctx, k)
			}
		}},
		{"exists-one", func(pipe redis.Pipeliner, keys []uint64) { pipe.Exists(ctx, buckets(keys)...) }},
		{"packed-mget", func(pipe redis.Pipeliner, keys []uint64) {
			ks := make([]string, len(keys))
			for i, k := range keys {
				ks[i] = packed(k)
			}
			pipe.MGet(ctx, ks...)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			c0 := redisCPU(b, s)
			n := 0
			for b.Loop() {
				pipe := s.c.Pipeline()
				for range group {
					c.cmds(pipe, queries[n%len(queries)])
					n++
				}
				if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
					b.Fatal(err)
				}
			}
			b.ReportMetric((redisCPU(b, s)-c0)*1e6/float64(n), "redis-us/query")
		})
	}
}
