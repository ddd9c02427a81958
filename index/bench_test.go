package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Benchmark sizes come from NEARDUP_BENCH_N (comma-separated, default
// 100000) so that plain `go test -bench .` stays quick; the figures in
// BENCHMARKS.md use NEARDUP_BENCH_N=10000000 and 100000000.
func benchSizes() []int {
	s := os.Getenv("NEARDUP_BENCH_N")
	if s == "" {
		return []int{100_000}
	}
	var ns []int
	for f := range bytes.SplitSeq([]byte(s), []byte(",")) {
		n, err := strconv.Atoi(string(bytes.TrimSpace(f)))
		if err != nil || n <= 0 {
			panic("NEARDUP_BENCH_N: " + s)
		}
		ns = append(ns, n)
	}
	return ns
}

// benchData returns n fingerprints, 90% random and 10% near-copies (1 to 6
// bits flipped) of earlier ones, and ids "d0", "d1", ... (7-9 bytes at 10M).
func benchData(n int) ([]string, []uint64) {
	r := rand.New(rand.NewPCG(uint64(n), 42))
	fps := make([]uint64, n)
	ids := make([]string, n)
	for i := range fps {
		if i > 0 && r.IntN(10) == 0 {
			fps[i] = flip(r, fps[r.IntN(i)], 1+r.IntN(6))
		} else {
			fps[i] = r.Uint64()
		}
	}
	// The ids share one backing string so that 100 million of them cost 25
	// bytes each in the benchmark, not 32.
	var sb []byte
	ends := make([]int, n)
	for i := range ids {
		sb = append(sb, 'd')
		sb = strconv.AppendInt(sb, int64(i), 10)
		ends[i] = len(sb)
	}
	all := string(sb)
	start := 0
	for i, e := range ends {
		ids[i] = all[start:e]
		start = e
	}
	return ids, fps
}

type benchKey struct {
	n      int
	layout string
}

var (
	benchIndexes = map[benchKey]*Index{}
	benchFPs     []uint64 // the fingerprints of the cached index
	benchHeap    = map[benchKey]float64{}
)

// benchIndex builds (once per process) an index of n items.
func benchIndex(b *testing.B, n int, k int, layout string) (*Index, []uint64) {
	key := benchKey{n, fmt.Sprint(k, layout)}
	if x := benchIndexes[key]; x != nil {
		return x, benchFPs
	}
	clear(benchIndexes) // one big index at a time
	benchFPs = nil
	runtime.GC()
	ids, fps := benchData(n)
	benchFPs = fps
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	start := time.Now()
	x, err := Build(ids, fps, Options{K: k, Layout: layout})
	if err != nil {
		b.Fatal(err)
	}
	el := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(ids) // the caller's ids are not the index's memory
	heap := float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n)
	st := x.Stats()
	b.Logf("n=%d k=%d %s: build %v, heap %.1f B/fp, stats %.1f B/fp\n%v", n, k, layout, el, heap, st.BytesPerFingerprint, st.Choice)
	benchIndexes[key] = x
	benchHeap[key] = heap
	return x, fps
}

// BenchmarkBuild measures AddBulk into an empty index (the planner's plan
// for n and k=3), and the heap it keeps per fingerprint.
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ids, fps := benchData(n)
			clear(benchIndexes)
			var heap float64
			cpu0 := cpuTime()
			for b.Loop() {
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				x, err := Build(ids, fps, Options{K: 3})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&m1)
				heap = float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n)
				runtime.KeepAlive(x)
				b.StartTimer()
			}
			// CPU seconds (user+sys) per build: with the machine shared, wall
			// time overstates; an idle 2-core machine needs at least cpu/2.
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "fps/s")
			b.ReportMetric(heap, "heapB/fp")
		})
	}
}

// cpuTime returns the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkQuery measures single queries near stored fingerprints (0 to k
// bits flipped) and reports p50 and p99 latencies.
func BenchmarkQuery(b *testing.B) {
	for _, n := range benchSizes() {
		for _, tc := range []struct {
			k      int
			layout string
		}{{3, ""}, {3, "manku-20"}, {6, ""}} {
			name := fmt.Sprintf("n=%d/k=%d", n, tc.k)
			if tc.layout != "" {
				name += "/" + tc.layout
			}
			b.Run(name, func(b *testing.B) {
				if tc.layout == "manku-20" && n > 20_000_000 {
					b.Skip("manku-20 needs 20 tables: too much memory here")
				}
				x, fps := benchIndex(b, n, tc.k, tc.layout)
				r := rand.New(rand.NewPCG(1, 1))
				durs := make([]time.Duration, 0, 1<<20)
				found := 0
				for b.Loop() {
					q := flip(r, fps[r.IntN(len(fps))], r.IntN(tc.k+1))
					t0 := time.Now()
					m, err := x.Query(q, tc.k, 0)
					d := time.Since(t0)
					if err != nil {
						b.Fatal(err)
					}
					found += len(m)
					if len(durs) < cap(durs) {
						durs = append(durs, d)
					}
				}
				slices.Sort(durs)
				b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds())/1e3, "p50-us")
				b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds())/1e3, "p99-us")
				b.ReportMetric(float64(found)/float64(b.N), "matches/q")
				b.ReportMetric(benchHeap[benchKey{n, fmt.Sprint(tc.k, tc.layout)}], "heapB/fp")
			})
		}
	}
}

// BenchmarkSnapshot measures the snapshot size on disk and the time to save
// it and to load it back (rebuilding the tables). The index is dropped before
// loading so that only one copy is in memory at 100 million.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.ndx")
			var save, load time.Duration
			var size int64
			for b.Loop() {
				b.StopTimer()
				x, _ := benchIndex(b, n, 3, "")
				b.StartTimer()
				t0 := time.Now()
				if err := x.SaveFile(path); err != nil {
					b.Fatal(err)
				}
				save += time.Since(t0)
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				size = fi.Size()
				b.StopTimer()
				x = nil
				clear(benchIndexes)
				runtime.GC()
				b.StartTimer()
				t0 = time.Now()
				y, err := LoadFile(path, Options{})
				if err != nil {
					b.Fatal(err)
				}
				load += time.Since(t0)
				if y.Len() != n {
					b.Fatalf("loaded %d of %d", y.Len(), n)
				}
			}
			b.ReportMetric(save.Seconds()/float64(b.N), "save-s")
			b.ReportMetric(load.Seconds()/float64(b.N), "load-s")
			b.ReportMetric(float64(size)/float64(n), "diskB/fp")
		})
	}
}

// BenchmarkAdd measures single Adds (memtable, sorted runs, merges) into an
// empty index, and Removes of the same ids.
func BenchmarkAdd(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ids, fps := benchData(n)
			var add, remove time.Duration
			for b.Loop() {
				x, err := New(Options{ExpectedN: n})
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				for i := range ids {
					if err := x.Add(ids[i], fps[i]); err != nil {
						b.Fatal(err)
					}
				}
				add += time.Since(t0)
				t0 = time.Now()
				for i := range ids {
					if err := x.Remove(ids[i]); err != nil {
						b.Fatal(err)
					}
				}
				remove += time.Since(t0)
			}
			b.ReportMetric(float64(n*b.N)/add.Seconds(), "adds/s")
			b.ReportMetric(float64(n*b.N)/remove.Seconds(), "removes/s")
		})
	}
}
