package index

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Self-join benchmarks. Sizes come from NEARDUP_BENCH_N, a comma-separated
// list (default 100000) such as NEARDUP_BENCH_N=1000000,10000000, so that a
// plain go test -bench stays small; NEARDUP_BENCH_K lists the distances of
// BenchmarkJoin (default 3):
//
//	NEARDUP_BENCH_N=1000000,10000000 go test -run '^$' -bench 'Join|Clusters' -benchtime 3x ./index

func joinBenchSizes(b *testing.B) []int {
	s := os.Getenv("NEARDUP_BENCH_N")
	if s == "" {
		return []int{100_000}
	}
	var ns []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			b.Fatalf("NEARDUP_BENCH_N: bad size %q", f)
		}
		ns = append(ns, n)
	}
	return ns
}

// joinBenchFingerprints returns n fingerprints: 90% uniformly random and 10%
// near-copies of earlier ones with 1 to 5 bits flipped (so about 60% of the
// copies are within k=3), in random order of appearance.
func joinBenchFingerprints(n int) []uint64 {
	rng := rand.New(rand.NewPCG(uint64(n), 2007))
	fps := make([]uint64, n)
	for i := range fps {
		if i < 10 || rng.IntN(10) != 0 {
			fps[i] = rng.Uint64()
			continue
		}
		x := fps[rng.IntN(i)]
		for range 1 + rng.IntN(5) {
			x ^= 1 << rng.IntN(64)
		}
		fps[i] = x
	}
	return fps
}

// joinBenchKs returns the distances of BenchmarkJoin: NEARDUP_BENCH_K, a
// comma-separated list, default 3.
func joinBenchKs(b *testing.B) []int {
	s := os.Getenv("NEARDUP_BENCH_K")
	if s == "" {
		return []int{3}
	}
	var ks []int
	for f := range strings.SplitSeq(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 0 || k > 63 {
			b.Fatalf("NEARDUP_BENCH_K: bad distance %q", f)
		}
		ks = append(ks, k)
	}
	return ks
}

var joinBenchFPS = map[int][]uint64{}

func joinBenchInput(n int) []uint64 {
	if fps, ok := joinBenchFPS[n]; ok {
		return fps
	}
	clear(joinBenchFPS) // keep one size in memory
	joinBenchFPS[n] = joinBenchFingerprints(n)
	return joinBenchFPS[n]
}

func BenchmarkJoin(b *testing.B) {
	for _, n := range joinBenchSizes(b) {
		for _, k := range joinBenchKs(b) {
			fps := joinBenchInput(n)
			e := PlanJoin(n, k)
			b.Run(fmt.Sprintf("n=%d/k=%d/blocks=%d", n, k, len(e.Plan.Blocks)), func(b *testing.B) {
				b.ReportAllocs()
				var pairs int
				cpu := joinCPUTime()
				for b.Loop() {
					pairs = 0
					err := Join(context.Background(), fps, k, JoinOptions{}, func(Pair) error { pairs++; return nil })
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(pairs), "pairs")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/fp")
				b.ReportMetric((joinCPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}

func BenchmarkClusters(b *testing.B) {
	for _, n := range joinBenchSizes(b) {
		fps := joinBenchInput(n)
		b.Run(fmt.Sprintf("n=%d/k=3", n), func(b *testing.B) {
			b.ReportAllocs()
			var dups int
			cpu := joinCPUTime()
			for b.Loop() {
				rep, err := Clusters(context.Background(), fps, 3, JoinOptions{})
				if err != nil {
					b.Fatal(err)
				}
				dups = 0
				for i, r := range rep {
					if r != i {
						dups++
					}
				}
			}
			b.ReportMetric(float64(dups), "dups")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/fp")
			b.ReportMetric((joinCPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkJoinPlans runs Join with the 4 x 16 layout of the seeds, five
// blocks, the paper's 20 tables and the planner's choice, on one core and on all, to show
// what the plan and the workers each contribute.
func BenchmarkJoinPlans(b *testing.B) {
	for _, n := range joinBenchSizes(b) {
		fps := joinBenchInput(n)
		auto := PlanJoin(n, 3).Plan
		blocks5 := mustPlan(BlockPlan(3, 5))
		for _, p := range []struct {
			name string
			plan *Plan
		}{{"seeds4x16", &Seeds4x16}, {"blocks5", &blocks5}, {"manku20", &Manku20}, {"auto", &auto}} {
			for _, w := range []int{1, 0} {
				b.Run(fmt.Sprintf("n=%d/plan=%s/workers=%d", n, p.name, w), func(b *testing.B) {
					cpu := joinCPUTime()
					for b.Loop() {
						err := Join(context.Background(), fps, 3, JoinOptions{Plan: p.plan, Workers: w}, func(Pair) error { return nil })
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric((joinCPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
				})
			}
		}
	}
}

// BenchmarkJoinSimhashCpp is the baseline: a direct port of
// seomoz/simhash-cpp's find_all (one goroutine; per table, permute, sort with
// a comparison sort, compare the runs of equal key pairwise, and collect the
// pairs of fingerprint values in a hash set to drop repeats). simhash-cpp
// runs it with 4 blocks at 1M and 6 at 10M.
func BenchmarkJoinSimhashCpp(b *testing.B) {
	for _, n := range joinBenchSizes(b) {
		fps := joinBenchInput(n)
		blocks := 4
		if n >= 5_000_000 {
			blocks = 6
		}
		p := mustPlan(BlockPlan(3, blocks))
		b.Run(fmt.Sprintf("n=%d/k=3/blocks=%d", n, blocks), func(b *testing.B) {
			var pairs int
			cpu := joinCPUTime()
			for b.Loop() {
				pairs = len(simhashCppFindAll(fps, 3, p))
			}
			b.ReportMetric((joinCPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(pairs), "pairs")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/fp")
		})
	}
}

func simhashCppFindAll(fps []uint64, k int, p Plan) map[[2]uint64]struct{} {
	matches := make(map[[2]uint64]struct{})
	ys := make([]uint64, len(fps))
	for t := range p.Tables {
		perm := p.Permutation(t)
		for i, x := range fps {
			ys[i] = perm.Apply(x)
		}
		slices.Sort(ys)
		for s := 0; s < len(ys); {
			e := s + 1
			for e < len(ys) && perm.Key(ys[e]) == perm.Key(ys[s]) {
				e++
			}
			for a := s; a < e; a++ {
				for c := a + 1; c < e; c++ {
					if bits.OnesCount64(ys[a]^ys[c]) <= k {
						x, y := perm.Invert(ys[a]), perm.Invert(ys[c])
						matches[[2]uint64{min(x, y), max(x, y)}] = struct{}{}
					}
				}
			}
			s = e
		}
	}
	return matches
}

// BenchmarkFrozenSelfJoin measures the self-join Join's tables could be
// replaced by: the fingerprints frozen into the default flip-2x32 tables
// (BuildFrozen, in memory, positions as ids) and each one queried for its
// partners within 3 bits, a pair (i, j) counted at i when j > i, as Join
// emits it once. It reports the build and the queries apart (cpu-s/op is
// the queries', one goroutine), the tables' bytes per fingerprint against
// Join's 20 (8 of input, 12 of one table's entries), and fails unless the
// pairs are Join's in number and, up to 1M, one by one. Issue 36's record
// of why pairs and clusters stay on Join (BENCHMARKS.md, "Frozen tables").
func BenchmarkFrozenSelfJoin(b *testing.B) {
	for _, n := range joinBenchSizes(b) {
		fps := joinBenchInput(n)
		b.Run(fmt.Sprintf("n=%d/k=3", n), func(b *testing.B) {
			want := map[[2]int]bool{}
			wantN := 0
			err := Join(context.Background(), fps, 3, JoinOptions{}, func(p Pair) error {
				wantN++
				if n <= 1_000_000 {
					want[[2]int{p.A, p.B}] = true
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			cpu, t0 := joinCPUTime(), time.Now()
			f, err := BuildFrozen(context.Background(), SliceSource(fps, nil), FrozenOptions{K: 3, SortMemory: 256 << 20, TempDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			buildS, buildCPU := time.Since(t0).Seconds(), (joinCPUTime() - cpu).Seconds()
			var pairs int
			cpu = joinCPUTime()
			for b.Loop() {
				pairs = 0
				for i, x := range fps {
					ms, err := f.Query(x, 3, 0)
					if err != nil {
						b.Fatal(err)
					}
					for _, m := range ms {
						if int(m.ID) > i {
							pairs++
							if n <= 1_000_000 && !want[[2]int{i, int(m.ID)}] {
								b.Fatalf("pair (%d, %d) not in Join's", i, m.ID)
							}
						}
					}
				}
			}
			b.ReportMetric((joinCPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(pairs), "pairs")
			b.ReportMetric(buildS, "build-s") // after b.Loop, whose first call clears the metrics
			b.ReportMetric(buildCPU, "build-cpu-s")
			b.ReportMetric(float64(f.Bytes())/float64(n), "B/fp")
			if pairs != wantN {
				b.Fatalf("%d pairs, Join found %d", pairs, wantN)
			}
		})
	}
}
