package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/neardup/neardup/index"
)

func TestFpRestJoin(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		fp := r.Uint64()
		for b := range fpBlocks {
			if got := fpJoin(fpBlock(fp, b), fpRest(fp, b), b); got != fp {
				t.Fatalf("block %d of %016x: joined %016x", b, fp, got)
			}
		}
	}
	var n int
	for r := range 5 {
		n = len(probes(nil, 0xbeef, r))
		want := 0
		for i := 0; i <= r; i++ {
			want += binomial(16, i)
		}
		if n != want {
			t.Errorf("probes within %d bits: %d values, want %d", r, n, want)
		}
	}
}

func binomial(n, k int) int {
	out := 1
	for i := range k {
		out = out * (n - i) / (i + 1)
	}
	return out
}

// TestQueryFingerprint stores documents whose fingerprints cluster around
// a few centres (0 to 10 bits away), deletes some, and checks that a
// query at each k from 0 to 16 returns exactly what a scan of the live
// documents gives, nearest first, then in priority order, and that limit
// keeps the head of that list.
func TestQueryFingerprint(t *testing.T) {
	backends(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		rec := extractor(t)
		s := open(t, addr, newPrefix(), Options{})
		r := rand.New(rand.NewPCG(7, 8))
		centres := []uint64{r.Uint64(), r.Uint64(), r.Uint64()}
		flip := func(fp uint64, n int) uint64 {
			for _, b := range r.Perm(64)[:n] {
				fp ^= 1 << b
			}
			return fp
		}
		type doc struct {
			id  string
			seq uint64
			fp  uint64
		}
		var live []doc
		for i := range 240 {
			x := rec(fmt.Sprint("d", i), text(uint64(5000+i), 30))
			x.Features.FP = flip(centres[i%len(centres)], r.IntN(11))
			if err := s.Add(ctx, x); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, x.ID)
			if err != nil {
				t.Fatal(err)
			}
			live = append(live, doc{x.ID, got.Seq, x.Features.FP})
		}
		for i := 0; i < len(live); i += 5 {
			if err := s.Delete(ctx, live[i].id); err != nil {
				t.Fatal(err)
			}
		}
		live = slices.DeleteFunc(live, func(d doc) bool {
			var n int
			fmt.Sscanf(d.id, "d%d", &n)
			return n%5 == 0
		})
		for _, q := range []uint64{centres[0], flip(centres[1], 2), flip(centres[2], 6), r.Uint64()} {
			for k := 0; k <= 16; k++ {
				var want []index.Match
				type hit struct {
					m   index.Match
					seq uint64
				}
				var hs []hit
				for _, d := range live {
					if dist := bits.OnesCount64(d.fp ^ q); dist <= k {
						hs = append(hs, hit{index.Match{ID: d.id, Fingerprint: d.fp, Distance: dist}, d.seq})
					}
				}
				slices.SortFunc(hs, func(a, b hit) int { return cmp.Or(cmp.Compare(a.m.Distance, b.m.Distance), cmp.Compare(a.seq, b.seq)) })
				for _, h := range hs {
					want = append(want, h.m)
				}
				got, err := s.QueryFingerprint(ctx, q, k, 0)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("query %016x k %d: %d hits %v, want %d %v", q, k, len(got), got, len(want), want)
				}
				if len(want) > 3 {
					got, err := s.QueryFingerprint(ctx, q, k, 3)
					if err != nil || !slices.Equal(got, want[:3]) {
						t.Fatalf("query %016x k %d limit 3: %v, %v; want %v", q, k, got, err, want[:3])
					}
				}
			}
		}
		if _, err := s.QueryFingerprint(ctx, 0, 33, 0); err == nil {
			t.Error("k 33: no error")
		}
	})
}

// TestOrphanBlockEntry: block entries whose record is gone (a delete cut
// short between the record and its entries) are no hit, and the search
// hands them to the collector, which removes all four.
func TestOrphanBlockEntry(t *testing.T) {
	ctx := context.Background()
	s := open(t, single(t), newPrefix(), Options{})
	const fp, seq = 0x0123456789abcdef, 12345
	if err := s.scripts(ctx, s.fpCalls(seq, fp, false), nil); err != nil {
		t.Fatal(err)
	}
	if got := settled(t, s)["f entries"]; got != fpBlocks {
		t.Fatalf("%d block entries written, want %d", got, fpBlocks)
	}
	ms, err := s.QueryFingerprint(ctx, fp, 3, 0)
	if err != nil || len(ms) != 0 {
		t.Fatalf("QueryFingerprint = %v, %v; want no hit", ms, err)
	}
	// The collector works in the background: wait for it (settled alone
	// can return while it holds the job, off its queue, on a loaded
	// machine).
	var got int64
	for range 250 {
		if got = settled(t, s)["f entries"]; got == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != 0 {
		t.Errorf("%d block entries after the search, want none", got)
	}
}
