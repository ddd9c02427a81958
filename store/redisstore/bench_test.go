package redisstore

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/store"
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
