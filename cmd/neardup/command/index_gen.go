package command

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/outfile"
	"github.com/neardup/neardup/internal/pagecache"
)

func newIndexGenCommand() *cobra.Command {
	var n int
	var out string
	c := &cobra.Command{
		Use:   "gen --n N [--out FILE]",
		Short: "Write N synthetic fingerprints as 8-byte values (input of index build --frozen --raw)",
		Long: `Write N synthetic 64-bit fingerprints, the benchmarks' (index.SyntheticSource:
90% random, 10% near-copies of a recent one with 1 to 6 bits flipped; the
same N gives the same fingerprints), as little-endian 8-byte values: the
input of 'neardup index build --frozen --raw' and 'neardup index bench'.
1B fingerprints are 8 GB.`,
		Example: `  neardup index gen --n 100000000 --out fps.u64
  neardup index gen --n 1000000000 | neardup index build --frozen --raw --out big.ndf -`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if n <= 0 {
				return usagef("--n %d: want a positive count", n)
			}
			return outfile.WriteFile(out, c.OutOrStdout(), func(w io.Writer) error {
				_, err := index.WriteRaw(w, index.SyntheticSource(n))
				return err
			})
		},
	}
	c.Flags().IntVar(&n, "n", 0, "fingerprints to write (required)")
	c.Flags().StringVarP(&out, "out", "o", outfile.Stdout, "file to write (- for stdout)")
	return c
}

type indexBenchCmd struct {
	index    string
	raw      string
	gen      int
	queries  int
	check    int
	noVerify bool
	cold     bool
	k        int
}

func newIndexBenchCommand() *cobra.Command {
	var f indexBenchCmd
	c := &cobra.Command{
		Use:   "bench --index FILE (--raw FPS | --gen N) [flags]",
		Short: "Time queries of a frozen index and check a sample against a scan",
		Long: `Open a frozen snapshot (mapped in place), query it with fingerprints of the
8-byte file it was built from (--raw, ids are positions; or --gen N: the
fingerprints of 'index gen --n N', made again), each with 0 to k
bits flipped, and report the start-up time, p50 and p99 per query, the
resident memory after the queries (the pages they touched) and, for the
first --check queries, whether the answers equal those of one scan of the
file. It exits non-zero on a difference. The queries are spread over the
whole file (every n/--queries-th fingerprint), read with one pass. --cold
drops the snapshot's pages from the page cache first.`,
		Example: `  neardup index bench --index big.ndf --raw fps.u64 --queries 100000 --check 100
  neardup index gen --n 1000000000 | neardup index build --frozen --raw --out big.ndf -
  neardup index bench --index big.ndf --gen 1000000000 --check 50`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c.OutOrStdout())
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.index, "index", "", "frozen snapshot (required)")
	fs.StringVar(&f.raw, "raw", "", "the 8-byte fingerprints it was built from")
	fs.IntVar(&f.gen, "gen", 0, "instead of --raw: it was built from 'index gen --n N' (the fingerprints are made again, not read)")
	fs.IntVar(&f.queries, "queries", 100_000, "queries to time")
	fs.IntVar(&f.check, "check", 100, "queries to compare with a scan of --raw")
	fs.BoolVar(&f.noVerify, "no-verify", false, "skip the checksums at start-up")
	fs.BoolVar(&f.cold, "cold", false, "drop the snapshot's pages from the page cache first (Linux), so that start-up reads the disk")
	fs.IntVarP(&f.k, "k", "k", 3, "query distance")
	return c
}

func (f *indexBenchCmd) run(stdout io.Writer) error {
	if f.index == "" || (f.raw == "") == (f.gen <= 0) {
		return usagef("--index and one of --raw and --gen are required")
	}
	src, srcName := index.SyntheticSource(f.gen), fmt.Sprintf("index gen --n %d", f.gen)
	if f.raw != "" {
		src, srcName = index.FileSource(f.raw), f.raw
	}
	if f.queries <= 0 || f.check < 0 || f.check > f.queries {
		return usagef("--queries %d, --check %d: want 0 <= check <= queries, queries > 0", f.queries, f.check)
	}
	if f.cold {
		if err := pagecache.Drop(f.index); err != nil {
			return fmt.Errorf("--cold: %w", err)
		}
	}
	t0 := time.Now()
	x, err := index.OpenFrozen(f.index, index.FrozenOpenOptions{NoVerify: f.noVerify})
	if err != nil {
		return err
	}
	defer x.Close()
	open := time.Since(t0)
	if f.k < 0 || f.k > x.Plan().K {
		return usagef("--k %d: the index answers 0..%d", f.k, x.Plan().K)
	}
	n := x.Len()
	if n == 0 {
		return fmt.Errorf("%s: empty index", f.index)
	}
	stride := max(1, n/f.queries)
	var sample []uint64
	err = src.Scan(func(fps, ids []uint64) error {
		for i, id := range ids {
			if id%uint64(stride) == 0 && len(sample) < f.queries {
				sample = append(sample, fps[i])
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(uint64(n), 1))
	queries := make([]uint64, f.queries)
	for i := range queries {
		q := sample[i%len(sample)]
		for range r.IntN(f.k + 1) {
			q ^= 1 << r.IntN(64)
		}
		queries[i] = q
	}
	durs := make([]time.Duration, len(queries))
	var got [][]index.FrozenMatch
	found := 0
	for i, q := range queries {
		t := time.Now()
		m, err := x.Query(q, f.k, 0)
		durs[i] = time.Since(t)
		if err != nil {
			return err
		}
		found += len(m)
		if i < f.check {
			got = append(got, m)
		}
	}
	rss := residentBytes()
	slices.Sort(durs)
	fmt.Fprintf(stdout, "%d fingerprints, %s; %d bytes of tables and ids (%.2f per fingerprint)\n", n, x.Layout(), x.Bytes(), float64(x.Bytes())/float64(n))
	fmt.Fprintf(stdout, "start-up %.2f s; %d queries (k=%d, %.2f matches each): p50 %.1f us, p99 %.1f us; resident %.2f GB\n",
		open.Seconds(), len(queries), f.k, float64(found)/float64(len(queries)),
		float64(durs[len(durs)/2].Nanoseconds())/1e3, float64(durs[len(durs)*99/100].Nanoseconds())/1e3, float64(rss)/1e9)
	if f.check == 0 {
		return nil
	}
	want := make([][]index.FrozenMatch, f.check)
	err = src.Scan(func(fps, ids []uint64) error {
		for j, q := range queries[:f.check] {
			for i, v := range fps {
				if d := bits.OnesCount64(v ^ q); d <= f.k {
					want[j] = append(want[j], index.FrozenMatch{ID: ids[i], Fingerprint: v, Distance: d})
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for j := range want {
		slices.SortFunc(want[j], func(a, b index.FrozenMatch) int {
			if a.Distance != b.Distance {
				return a.Distance - b.Distance
			}
			return cmp.Compare(a.ID, b.ID)
		})
		if !slices.Equal(got[j], want[j]) {
			return fmt.Errorf("query %#x: the index gives %d matches, a scan of %s %d", queries[j], len(got[j]), srcName, len(want[j]))
		}
	}
	fmt.Fprintf(stdout, "%d queries equal to a scan of %s\n", f.check, srcName)
	return nil
}

// residentBytes returns the process's resident set (VmRSS), or 0 where
// /proc is not there.
func residentBytes() int64 {
	fd, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer fd.Close()
	sc := bufio.NewScanner(fd)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
