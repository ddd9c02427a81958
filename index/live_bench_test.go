package index

import (
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// liveAddRate is the steady rate of single Adds in BenchmarkQueryLive.
const liveAddRate = 20_000

// staircaseIndex returns an index of n items in segments of about n/2, n/4,
// ... down to under one memtable (one memtable short of n in all), so that
// the first memtable to fill cascades into a merge of everything: the worst
// a write stream can do to readers. It returns the stored fingerprints.
func staircaseIndex(b *testing.B, n int) (*Index, []uint64) {
	ids, fps := benchData(n)
	x, err := New(Options{K: 3, ExpectedN: n})
	if err != nil {
		b.Fatal(err)
	}
	lo, rem, s := 0, n, n
	for rem > 2*DefaultMemtable {
		s = rem / 2
		if err := x.AddBulk(ids[lo:lo+s], fps[lo:lo+s]); err != nil {
			b.Fatal(err)
		}
		lo, rem = lo+s, rem-s
	}
	// The last step is smaller than the one before, or they would merge.
	end := lo + min(rem-DefaultMemtable, s-1)
	if err := x.AddBulk(ids[lo:end], fps[lo:end]); err != nil {
		b.Fatal(err)
	}
	return x, fps[:end]
}

// BenchmarkQueryLive measures single queries (k=3, near stored
// fingerprints) while one goroutine adds items one at a time at
// liveAddRate and another writes a snapshot (to io.Discard) every second,
// against the same queries with no writes. The index starts as a staircase
// of segments (staircaseIndex), so the write stream soon merges all of them.
// It reports the p50, p99 and largest query latency, the queries slower than
// a millisecond, and the adds and snapshots done.
func BenchmarkQueryLive(b *testing.B) {
	for _, n := range benchSizes() {
		for _, writes := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d/writes=%v", n, writes), func(b *testing.B) {
				runtime.GC()
				x, fps := staircaseIndex(b, n)
				segs := x.Stats().Segments
				stop := make(chan struct{})
				var wg sync.WaitGroup
				var adds, snaps atomic.Int64
				if writes {
					wg.Go(func() { liveWriter(b, x, stop, &adds) })
					wg.Go(func() {
						for {
							if _, err := x.WriteTo(io.Discard); err != nil {
								b.Error(err)
								return
							}
							snaps.Add(1)
							select {
							case <-stop:
								return
							case <-time.After(time.Second):
							}
						}
					})
				}
				r := rand.New(rand.NewPCG(1, 1))
				durs := make([]time.Duration, 0, 1<<20)
				start := time.Now()
				for b.Loop() {
					q := flip(r, fps[r.IntN(len(fps))], r.IntN(4))
					t0 := time.Now()
					_, err := x.Query(q, 3, 0)
					d := time.Since(t0)
					if err != nil {
						b.Fatal(err)
					}
					if len(durs) < cap(durs) {
						durs = append(durs, d)
					}
				}
				el := time.Since(start)
				close(stop)
				wg.Wait()
				x.Close()
				slices.Sort(durs)
				b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds())/1e3, "p50-us")
				b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds())/1e3, "p99-us")
				b.ReportMetric(float64(durs[len(durs)-1].Nanoseconds())/1e3, "max-us")
				// One goroutine queries in a loop, so a stall delays one
				// query however long it is; count the slow ones too.
				slow, _ := slices.BinarySearch(durs, time.Millisecond)
				b.ReportMetric(float64(len(durs)-slow), "over-1ms")
				b.ReportMetric(float64(adds.Load())/el.Seconds(), "adds/s")
				b.ReportMetric(float64(snaps.Load()), "snapshots")
				b.Logf("n=%d writes=%v: %d segments at the start, %d at the end; %d adds, %d snapshots in %v",
					n, writes, segs, x.Stats().Segments, adds.Load(), snaps.Load(), el)
			})
		}
	}
}

// liveWriter adds random fingerprints under new ids at liveAddRate until
// stop is closed, catching up after a stall as a queue of requests would.
func liveWriter(b *testing.B, x *Index, stop <-chan struct{}, adds *atomic.Int64) {
	r := rand.New(rand.NewPCG(7, 7))
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	start := time.Now()
	for i := 0; ; {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for due := int(time.Since(start).Seconds() * liveAddRate); i < due; i++ {
			if err := x.Add("live"+strconv.Itoa(i), r.Uint64()); err != nil {
				b.Error(err)
				return
			}
			adds.Add(1)
		}
	}
}
