package keptset_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/neardup/neardup/keptset"
	"github.com/neardup/neardup/rule"
)

// noRecords is Records for a set whose candidates are never read.
type noRecords struct{}

func (noRecords) Record(context.Context, uint64) (string, rule.Features, bool, error) {
	return "", rule.Features{}, false, nil
}
func (noRecords) LoadFrom(context.Context, uint64, func(uint64, string, *rule.Features) error) error {
	return nil
}

// synthetic returns document i's features: random band keys and
// fingerprint, as unrelated documents have.
func synthetic(r *rand.Rand, bands int) rule.Features {
	f := rule.Features{FP: r.Uint64(), Exact: r.Uint64(), Bands: make([]uint64, bands)}
	for b := range f.Bands {
		f.Bands[b] = r.Uint64()
	}
	return f
}

// BenchmarkSet measures a set of N unrelated documents written in bulk and
// mapped back: bytes per document of its parts, and the time of a match
// (key lookups; no candidate to read), of a k = 3 fingerprint query, and of
// reading a random document's id (what names a fingerprint search's hit;
// store.BenchmarkGetID measures the store's read of it).
// Sizes: 100K and 1M, and KEPTSET_BENCH_N (e.g. 10000000) when set.
//
//	go test ./keptset -run '^$' -bench Set -benchtime 200000x
func BenchmarkSet(b *testing.B) {
	sizes := []int{100_000, 1_000_000}
	if n, err := strconv.Atoi(os.Getenv("KEPTSET_BENCH_N")); err == nil {
		sizes = []int{n}
	}
	rl, _ := setup(b)
	for _, n := range sizes {
		dir := b.TempDir()
		opt := keptset.Options{Dir: dir, Settings: "bench"}
		w, err := keptset.NewWriter(rl, opt)
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 1))
		fps := make([]uint64, 0, 1024)
		for i := range n {
			f := synthetic(r, rl.Bands())
			if len(fps) < cap(fps) {
				fps = append(fps, f.FP)
			}
			if err := w.Add(uint64(i), strconv.Itoa(i), &f); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		s, err := keptset.Open(context.Background(), rl, noRecords{}, opt)
		if err != nil {
			b.Fatal(err)
		}
		st := s.Stats()
		b.Run(fmt.Sprintf("n=%d/match", n), func(b *testing.B) {
			benchMatch(b, s, rl)
			b.ReportMetric(float64(st.PartBytes)/float64(n), "B/doc")
		})
		b.Run(fmt.Sprintf("n=%d/fingerprint-k3", n), func(b *testing.B) {
			q := rand.New(rand.NewPCG(3, 3))
			hits := 0
			for i := range b.N {
				fp := fps[i%len(fps)] ^ 1<<q.IntN(64) ^ 1<<q.IntN(64)
				h, err := s.QueryFingerprint(fp, 3, 0)
				if err != nil {
					b.Fatal(err)
				}
				hits += len(h)
			}
			if hits < b.N {
				b.Fatalf("%d hits for %d queries of stored fingerprints", hits, b.N)
			}
		})
		b.Run(fmt.Sprintf("n=%d/id", n), func(b *testing.B) {
			b.ReportAllocs()
			q := rand.New(rand.NewPCG(4, 4))
			for range b.N {
				seq := q.Uint64N(uint64(n))
				id, known, err := s.ID(seq)
				if got, perr := strconv.ParseUint(id, 10, 64); err != nil || !known || perr != nil || got != seq {
					b.Fatalf("ID(%d) = %q, %v, %v", seq, id, known, err)
				}
			}
		})
		s.Close()
	}
}

// BenchmarkGrow measures a set grown by Add alone, as a service grows:
// deltas of the default span written as parts and merged in the
// background. It reports the parts left (without merges: one per
// DeltaSpan seqs), the add rate with the merges beside it, and times a
// match (key lookups in every part; no candidate to read). Sizes: 1M and
// 4M, or KEPTSET_BENCH_N.
//
//	go test ./keptset -run '^$' -bench Grow -benchtime 200000x
func BenchmarkGrow(b *testing.B) {
	sizes := []int{1 << 20, 1 << 22}
	if n, err := strconv.Atoi(os.Getenv("KEPTSET_BENCH_N")); err == nil {
		sizes = []int{n}
	}
	rl, _ := setup(b)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s, err := keptset.Open(context.Background(), rl, noRecords{}, keptset.Options{Dir: b.TempDir(), Settings: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			r := rand.New(rand.NewPCG(1, 1))
			t0 := time.Now()
			for i := range n {
				if err := s.Add(uint64(i), "", synthetic(r, rl.Bands())); err != nil {
					b.Fatal(err)
				}
				s.Written(uint64(i))
			}
			if err := s.WaitParts(); err != nil {
				b.Fatal(err)
			}
			grow := time.Since(t0)
			st := s.Stats()
			benchMatch(b, s, rl)
			b.ReportMetric(float64(st.Parts), "parts")
			b.ReportMetric(float64(st.Merges), "merges")
			b.ReportMetric(float64(grow.Nanoseconds())/float64(n), "add-ns/doc")
		})
	}
}

// benchMatch times Match on synthetic documents, which find no candidate:
// the key lookups alone.
func benchMatch(b *testing.B, s *keptset.Set, rl *rule.Rule) {
	q := rand.New(rand.NewPCG(2, 2))
	queries := make([]rule.Features, 4096)
	for i := range queries {
		queries[i] = synthetic(q, rl.Bands())
	}
	b.ResetTimer()
	for i := range b.N {
		if _, _, err := s.Match(context.Background(), &queries[i%len(queries)]); err != nil {
			b.Fatal(err)
		}
	}
}
