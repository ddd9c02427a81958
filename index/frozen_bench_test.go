package index

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/pagecache"
)

// genSource is a SyntheticSource of n fingerprints; sample, when not nil,
// receives every stride-th fingerprint of the first Scan.
type genSource struct {
	n      int
	stride int
	sample *[]uint64
}

func (g genSource) Scan(fn func(fps, ids []uint64) error) error {
	sampling := g.sample != nil && len(*g.sample) == 0
	return SyntheticSource(g.n).Scan(func(fps, ids []uint64) error {
		if sampling {
			for i, x := range fps {
				if ids[i]%uint64(g.stride) == 0 {
					*g.sample = append(*g.sample, x)
				}
			}
		}
		return fn(fps, ids)
	})
}

// BenchmarkFrozen builds a Frozen of n generated fingerprints (k = 3,
// flip-2x32, or NEARDUP_BENCH_LAYOUT such as seeds-4x16) in bounded memory, saves it, maps it back and queries the
// mapping: build time, bytes per fingerprint (tables and ids; heap growth;
// file), open time, p50/p99 per query (stored fingerprints with 0 to 3 bits
// flipped). A sample of the queries is checked against a scan of the
// source. NEARDUP_BENCH_N sets n; NEARDUP_BENCH_DIR the directory of the
// snapshot (default a temporary one); NEARDUP_BENCH_SORTMEM the sort
// memory in MiB (default 1024); NEARDUP_BENCH_NOSAVE=1 queries the built
// Frozen in the heap instead of a mapped snapshot (for sizes the disk
// cannot hold). open-cold-s and open-cold-noverify-s open the snapshot
// after dropping its pages from the page cache; open-s opens it again
// warm for the queries. rss-GB is the process's resident set after the queries
// (the heap plus the mapped pages the queries touched).
// NEARDUP_BENCH_BLOCKS="10,10,10,34" replaces seeds-4x16 with one table per
// block of those widths (exact at k = 3 with 4 blocks or more): at 10M,
// 10-bit keys give each key ~9,800 entries over 2^14 buckets, the shape of
// a 16-bit key at 1B (15,259 entries, 2^14 buckets), so that a 10M run
// shows what a query at 1B walks or visits in three of its four tables.
func BenchmarkFrozen(b *testing.B) {
	sortMem := int64(1 << 30)
	if s := os.Getenv("NEARDUP_BENCH_SORTMEM"); s != "" {
		m, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		sortMem = m << 20
	}
	layout := os.Getenv("NEARDUP_BENCH_LAYOUT")
	var plan *Plan
	if s := os.Getenv("NEARDUP_BENCH_BLOCKS"); s != "" {
		p := Plan{K: 3}
		for f := range strings.SplitSeq(s, ",") {
			w, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatal(err)
			}
			p.Tables = append(p.Tables, []int{len(p.Blocks)})
			p.Blocks = append(p.Blocks, w)
		}
		plan = &p
	}
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			const k = 3
			dir := os.Getenv("NEARDUP_BENCH_DIR")
			if dir == "" {
				dir = b.TempDir()
			}
			path := filepath.Join(dir, fmt.Sprintf("frozen-%d.ndf", n))
			var sample []uint64
			src := genSource{n: n, stride: max(1, n/(1<<20)), sample: &sample}
			var (
				build, cpu, save, open time.Duration
				heap, tableB, fileB    float64
				durs, walk             []time.Duration
				rss                    float64
				cold, coldNoVerify     time.Duration
				firstP99               time.Duration
				found                  int
			)
			for b.Loop() {
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				t0, c0 := time.Now(), cpuTime()
				f, err := BuildFrozen(context.Background(), src, FrozenOptions{K: k, Layout: layout, Plan: plan, SortMemory: sortMem})
				if err != nil {
					b.Fatal(err)
				}
				build, cpu = time.Since(t0), cpuTime()-c0
				runtime.GC()
				runtime.ReadMemStats(&m1)
				heap = float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n)
				tableB = float64(f.Bytes()) / float64(n)
				g := f
				if os.Getenv("NEARDUP_BENCH_NOSAVE") == "" {
					t0 = time.Now()
					if err := f.SaveFile(path); err != nil {
						b.Fatal(err)
					}
					save = time.Since(t0)
					f = nil
					runtime.GC()
					fi, err := os.Stat(path)
					if err != nil {
						b.Fatal(err)
					}
					fileB = float64(fi.Size()) / float64(n)
					// Start-up from a cold page cache, with the checksums
					// read and without.
					for _, opt := range []FrozenOpenOptions{{}, {NoVerify: true}} {
						// Elsewhere than Linux the start-up is a warm one.
						if err := pagecache.Drop(path); err != nil && !errors.Is(err, errors.ErrUnsupported) {
							b.Fatal(err)
						}
						t0 = time.Now()
						g, err := OpenFrozen(path, opt)
						if err != nil {
							b.Fatal(err)
						}
						if opt.NoVerify {
							coldNoVerify = time.Since(t0)
						} else {
							cold = time.Since(t0)
						}
						g.Close()
					}
					t0 = time.Now()
					if g, err = OpenFrozen(path, FrozenOpenOptions{}); err != nil {
						b.Fatal(err)
					}
					open = time.Since(t0)
				}
				r := rand.New(rand.NewPCG(1, 1))
				durs = make([]time.Duration, 0, 200_000)
				queries := make([]uint64, cap(durs))
				for i := range queries {
					queries[i] = flip(r, sample[r.IntN(len(sample))], r.IntN(k+1))
				}
				// One pass untimed first: the first touch of each page of a
				// fresh mapping is a page fault, which the first pass
				// alone would pay (first-p99-us).
				first := make([]time.Duration, 0, len(queries))
				for _, q := range queries {
					t0 := time.Now()
					if _, err := g.Query(q, k, 0); err != nil {
						b.Fatal(err)
					}
					first = append(first, time.Since(t0))
				}
				slices.Sort(first)
				firstP99 = first[len(first)*99/100]
				var ms [][]FrozenMatch
				for i, q := range queries {
					t0 := time.Now()
					m, err := g.Query(q, k, 0)
					durs = append(durs, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					found += len(m)
					if i < 100 {
						ms = append(ms, m)
					}
				}
				checkScan(b, src, queries[:len(ms)], ms, k)
				// The same queries walking every entry of each key's run.
				def := enumerateBits
				enumerateBits = 64
				walk = make([]time.Duration, 0, len(queries))
				for _, q := range queries {
					t0 := time.Now()
					_, err := g.Query(q, k, 0)
					walk = append(walk, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
				}
				enumerateBits = def
				rss = residentGB()
				if err := g.Close(); err != nil {
					b.Fatal(err)
				}
				if os.Getenv("NEARDUP_BENCH_KEEP") == "" {
					os.Remove(path)
				}
			}
			slices.Sort(durs)
			b.ReportMetric(build.Seconds(), "build-s")
			b.ReportMetric(cpu.Seconds(), "build-cpu-s")
			b.ReportMetric(tableB, "B/fp")
			b.ReportMetric(heap, "heapB/fp")
			b.ReportMetric(fileB, "fileB/fp")
			b.ReportMetric(save.Seconds(), "save-s")
			b.ReportMetric(open.Seconds(), "open-s")
			b.ReportMetric(cold.Seconds(), "open-cold-s")
			b.ReportMetric(coldNoVerify.Seconds(), "open-cold-noverify-s")
			b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds())/1e3, "p50-us")
			b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds())/1e3, "p99-us")
			b.ReportMetric(float64(found)/float64(len(durs)), "matches/q")
			b.ReportMetric(rss, "rss-GB")
			b.ReportMetric(float64(firstP99.Nanoseconds())/1e3, "first-p99-us")
			slices.Sort(walk)
			b.ReportMetric(float64(walk[len(walk)/2].Nanoseconds())/1e3, "walk-p50-us")
			b.ReportMetric(float64(walk[len(walk)*99/100].Nanoseconds())/1e3, "walk-p99-us")
		})
	}
}

// checkScan compares the answers ms to the first queries with one scan of
// the source.
func checkScan(b *testing.B, src Source, queries []uint64, ms [][]FrozenMatch, k int) {
	want := make([][]FrozenMatch, len(queries))
	err := src.Scan(func(fps, ids []uint64) error {
		for i, x := range fps {
			for j, q := range queries {
				if d := bits.OnesCount64(x ^ q); d <= k {
					want[j] = append(want[j], FrozenMatch{ID: ids[i], Fingerprint: x, Distance: d})
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for j := range want {
		slices.SortFunc(want[j], func(a, c FrozenMatch) int {
			if a.Distance != c.Distance {
				return a.Distance - c.Distance
			}
			if a.ID < c.ID {
				return -1
			}
			return 1
		})
		if !slices.Equal(ms[j], want[j]) {
			b.Fatalf("query %#x: got %v, scan %v", queries[j], ms[j], want[j])
		}
	}
}

// residentGB returns VmRSS from /proc/self/status, in GB (0 elsewhere).
func residentGB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb * 1024 / 1e9
		}
	}
	return 0
}
