package dedup_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/dedup"
)

// BenchmarkKeptMatch measures one Kept.Match (the online service's decision)
// against n stored documents of 170 random words (about 1 KB), per candidate
// method and k. n defaults to 100,000 (NEARDUP_BENCH_N).
func BenchmarkKeptMatch(b *testing.B) {
	n := 100000
	if s := os.Getenv("NEARDUP_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for _, tc := range []struct {
		method string
		k      int
	}{{dedup.MethodSimHash, 3}, {dedup.MethodSimHash, 6}, {dedup.MethodSimHash, dedup.DefaultK}, {dedup.MethodMinHash, 0}} {
		b.Run(fmt.Sprintf("%s/k=%d/n=%d", tc.method, tc.k, n), func(b *testing.B) {
			opt := dedup.Options{Method: tc.method, K: tc.k, KShort: tc.k}
			rule, err := dedup.NewRule(opt)
			if err != nil {
				b.Fatal(err)
			}
			ex, _ := dedup.NewExtractor(opt)
			rng := rand.New(rand.NewPCG(1, 2))
			text := func() string {
				w := make([]string, 170)
				for i := range w {
					w[i] = "w" + strconv.Itoa(rng.IntN(20000))
				}
				return strings.Join(w, " ")
			}
			ids := make([]string, n)
			fs := make([]dedup.Features, n)
			for i := range n {
				ids[i], fs[i] = strconv.Itoa(i), ex.Extract(text())
			}
			kept, _ := dedup.NewKept(rule, n)
			if err := kept.AddBulk(ids, fs); err != nil {
				b.Fatal(err)
			}
			qs := make([]dedup.Features, 256)
			for i := range qs {
				qs[i] = ex.Extract(text())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := kept.Match(&qs[i%len(qs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
