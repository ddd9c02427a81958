package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/testcorpora"
	"github.com/neardup/neardup/rule"
)

// BenchmarkStoreWrite measures the embedded stores alone under the Server's
// write pattern: 64 writers queue puts of ~1 KB English documents (features
// of en_prose windows) under one lock, in sequence order, and wait for the
// group commit outside it. Each store is empty, then holds n documents
// (NEARDUP_BENCH_N, default 100,000). It reports writes per second and
// writes per commit (per WAL fsync for pebble).
//
//	go test ./store -run '^$' -bench StoreWrite -benchtime 20000x
func BenchmarkStoreWrite(b *testing.B) {
	n := 100000
	if s := os.Getenv("NEARDUP_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	fs := proseFeatures(b, 4096)
	dir := b.TempDir() // not the sub-benchmark's: its cleanup runs after each of its runs
	for _, engine := range []struct {
		name string
		open func(dir string) (Store, error)
	}{
		{EngineBolt, func(dir string) (Store, error) { return OpenBolt(dir, BoltOptions{}) }},
		{EnginePebble, func(dir string) (Store, error) { return OpenPebble(dir, PebbleOptions{}) }},
	} {
		for _, stored := range []int{0, n} {
			var (
				s       Store
				commits atomic.Int64
				lock    sync.Mutex
				seq     uint64 // guarded by lock
			)
			record := func() *Record {
				r := &Record{Seq: seq, ID: fmt.Sprint("doc-", seq), Features: fs[seq%uint64(len(fs))]}
				seq++
				return r
			}
			b.Run(fmt.Sprintf("%s/stored=%d", engine.name, stored), func(b *testing.B) {
				if s == nil { // once, though the benchmark function runs more than once
					var err error
					if s, err = engine.open(filepath.Join(dir, fmt.Sprint(engine.name, stored))); err != nil {
						b.Fatal(err)
					}
					t0 := time.Now()
					var waits []func() error
					for i := range stored {
						waits = append(waits, s.(queuer).Queue(context.Background(), Op{Put: record()}))
						if len(waits) == 10000 || i == stored-1 {
							for _, w := range waits {
								if err := w(); err != nil {
									b.Fatal(err)
								}
							}
							waits = waits[:0]
						}
					}
					if stored > 0 {
						b.Logf("%s: %d stored in %v, one writer", engine.name, stored, time.Since(t0).Round(time.Millisecond))
					}
					s.(interface{ ObserveCommits(func(int, error)) }).ObserveCommits(func(int, error) { commits.Add(1) })
				}
				q := s.(queuer)
				var wg sync.WaitGroup
				var next atomic.Int64
				c0 := commits.Load()
				b.ReportAllocs()
				b.ResetTimer()
				for range 64 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= int64(b.N) {
							lock.Lock()
							wait := q.Queue(context.Background(), Op{Put: record()})
							lock.Unlock()
							if err := wait(); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
				b.ReportMetric(float64(b.N)/float64(max(commits.Load()-c0, 1)), "writes/commit")
			})
			if s != nil {
				if err := s.Close(); err != nil {
					b.Error(err)
				}
			}
		}
	}
}

// proseFeatures returns the features of n windows of about 1 KB of en_prose.
func proseFeatures(tb testing.TB, n int) []rule.Features {
	r, err := corpus.Open([]string{testcorpora.Path(tb, "en_prose")}, corpus.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	ex, err := rule.NewExtractor(rule.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	var fs []rule.Features
	var w []string
	for len(fs) < n {
		doc, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		for _, word := range strings.Fields(doc.Text) {
			if w = append(w, word); len(w) == 170 { // ~1 KB
				fs = append(fs, ex.Extract(strings.Join(w, " ")))
				w = w[:0]
			}
		}
	}
	if len(fs) == 0 {
		tb.Fatal("no text in en_prose")
	}
	return fs[:min(n, len(fs))]
}

// queuer is what the Server asks of an engine: a write queued under its lock
// and waited for outside it.
type queuer interface {
	Queue(ctx context.Context, op Op) func() error
}

// BenchmarkGetID measures what names a fingerprint search's hits: GetID of
// random stored seqs, in a pebble store of n ~1 KB English documents
// (NEARDUP_BENCH_N, default 1,000,000) written in bulk as `neardup import`
// writes them, closed and reopened so that they are read from its tables.
// GetSeq (the whole record) is there for comparison.
//
//	go test ./store -run '^$' -bench GetID -benchtime 1000000x
func BenchmarkGetID(b *testing.B) {
	n := 1000000
	if s := os.Getenv("NEARDUP_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	fs := proseFeatures(b, 4096)
	dir := b.TempDir()
	s, err := OpenPebble(dir, PebbleOptions{})
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	recs := make([]Record, 0, 1024)
	for i := range n {
		recs = append(recs, Record{Seq: uint64(i), ID: fmt.Sprint("doc-", i), Features: fs[i%len(fs)]})
		if len(recs) == cap(recs) || i == n-1 {
			if err := s.PutBulk(context.Background(), recs); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if s, err = OpenPebble(dir, PebbleOptions{}); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.Logf("%d stored in %v, %d MB", n, time.Since(t0).Round(time.Millisecond), s.Size()>>20)
	for _, get := range []struct {
		name string
		get  func(seq uint64) (string, error)
	}{
		{"GetID", func(seq uint64) (string, error) { return s.GetID(context.Background(), seq) }},
		{"GetSeq", func(seq uint64) (string, error) {
			r, err := s.GetSeq(context.Background(), seq)
			return r.ID, err
		}},
	} {
		b.Run(get.name, func(b *testing.B) {
			b.ReportAllocs()
			r := rand.New(rand.NewPCG(1, 1))
			for range b.N {
				seq := r.Uint64N(uint64(n))
				id, err := get.get(seq)
				if got, perr := strconv.ParseUint(strings.TrimPrefix(id, "doc-"), 10, 64); err != nil || perr != nil || got != seq {
					b.Fatalf("seq %d: %q %v", seq, id, err)
				}
			}
		})
	}
}

// BenchmarkGetSeqTables reads records at random seqs of an existing pebble
// data directory (NEARDUP_BENCH_DIR, a service's --data; skipped without
// it), as a search's candidates are read, with pebble's own limit of 1,000
// open files and with PebbleOptions' default: a store with more tables than
// the limit reopens some of them on reads. 200,000 seqs, drawn once and
// read once before the clock starts, so that their blocks are in the page
// cache and what differs is the tables kept open:
//
//	NEARDUP_BENCH_DIR=/data/imp30m go test ./store -run '^$' -bench GetSeqTables -benchtime 3x
func BenchmarkGetSeqTables(b *testing.B) {
	dir := os.Getenv("NEARDUP_BENCH_DIR")
	if dir == "" {
		b.Skip("NEARDUP_BENCH_DIR names no data directory")
	}
	for _, c := range []struct {
		name string
		max  int
	}{{"open=1000", 1000}, {"open=default", 0}} {
		b.Run(c.name, func(b *testing.B) {
			st, err := OpenPebble(dir, PebbleOptions{MaxOpenFiles: c.max})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := context.Background()
			// The highest seq: the first absent power of two, then halves.
			has := func(seq uint64) bool { _, err := st.GetSeq(ctx, seq); return err == nil }
			hi := uint64(1)
			for has(hi) {
				hi *= 2
			}
			lo := hi / 2 // present, or 0
			for hi-lo > 1 {
				if mid := (lo + hi) / 2; has(mid) {
					lo = mid
				} else {
					hi = mid
				}
			}
			n := lo
			if n == 0 {
				b.Fatalf("%s: no records", dir)
			}
			r := rand.New(rand.NewPCG(1, 2))
			seqs := make([]uint64, 200000)
			for i := range seqs {
				seqs[i] = 1 + r.Uint64N(uint64(n))
			}
			read := func() {
				for _, s := range seqs {
					if _, err := st.GetSeq(ctx, s); err != nil && !errors.Is(err, ErrNotFound) {
						b.Fatal(err)
					}
				}
			}
			read()
			b.ResetTimer()
			for b.Loop() {
				read()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(seqs))/1e3, "us/read")
		})
	}
}
