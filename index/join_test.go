package index

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// plantedFingerprints returns n fingerprints: random ones, and near-copies of
// earlier ones with 0 to maxFlips bits flipped, plus a few exact repeats, so
// that pairs at every distance up to and just beyond k occur.
func plantedFingerprints(rng *rand.Rand, n, maxFlips int) []uint64 {
	fps := make([]uint64, n)
	for i := range fps {
		if i == 0 || rng.IntN(3) == 0 {
			fps[i] = rng.Uint64()
			continue
		}
		x := fps[rng.IntN(i)]
		for range rng.IntN(maxFlips + 1) {
			x ^= 1 << rng.IntN(64)
		}
		fps[i] = x
	}
	return fps
}

// brutePairs returns every pair within k bits, sorted.
func brutePairs(fps []uint64, k int) []Pair {
	var ps []Pair
	for a := range fps {
		for b := a + 1; b < len(fps); b++ {
			if d := bits.OnesCount64(fps[a] ^ fps[b]); d <= k {
				ps = append(ps, Pair{a, b, d})
			}
		}
	}
	return ps
}

func sortPairs(ps []Pair) {
	slices.SortFunc(ps, func(x, y Pair) int {
		if x.A != y.A {
			return x.A - y.A
		}
		return x.B - y.B
	})
}

func collectJoin(t testing.TB, fps []uint64, k int, opt JoinOptions) []Pair {
	t.Helper()
	var ps []Pair
	err := Join(context.Background(), fps, k, opt, func(p Pair) error {
		ps = append(ps, p)
		return nil
	})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	sortPairs(ps)
	return ps
}

// joinPlans returns the plans the property tests run at distance k: the
// chosen one, and block plans with few and with many blocks.
func joinPlans(k int) []*Plan {
	var ps []*Plan
	for _, b := range []int{k + 1, k + 2, k + 4} {
		if p, err := BlockPlan(k, b); err == nil && len(p.Tables) <= 500 {
			ps = append(ps, &p)
		}
	}
	if k <= 3 {
		ps = append(ps, &Seeds4x16, &Manku20)
	}
	return append(ps, nil)
}

func TestJoinMatchesBruteForce(t *testing.T) {
	for k := 0; k <= 8; k++ {
		rng := rand.New(rand.NewPCG(uint64(k), 1))
		fps := plantedFingerprints(rng, 600, k+2)
		want := brutePairs(fps, k)
		for _, p := range joinPlans(k) {
			for _, workers := range []int{1, 3} {
				name := fmt.Sprintf("k=%d/plan=%v/workers=%d", k, p, workers)
				if p == nil {
					name = fmt.Sprintf("k=%d/plan=auto/workers=%d", k, workers)
				}
				t.Run(name, func(t *testing.T) {
					got := collectJoin(t, fps, k, JoinOptions{Plan: p, Workers: workers})
					if !slices.Equal(got, want) {
						t.Fatalf("got %d pairs, want %d (brute force)\n got  %v\n want %v", len(got), len(want), head(got), head(want))
					}
				})
			}
		}
	}
}

func head(ps []Pair) []Pair { return ps[:min(len(ps), 10)] }

func TestJoinEmitErrorStops(t *testing.T) {
	fps := make([]uint64, 1000) // all identical: about half a million pairs
	stop := errors.New("stop")
	calls := 0
	err := Join(context.Background(), fps, 3, JoinOptions{}, func(Pair) error {
		calls++
		if calls == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 10 {
		t.Fatalf("got err %v after %d calls, want %v after 10", err, calls, stop)
	}
}

func TestJoinCancel(t *testing.T) {
	fps := make([]uint64, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Join(ctx, fps, 3, JoinOptions{}, func(Pair) error {
		calls++
		if calls == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got err %v, want context.Canceled", err)
	}
	if calls > 10+2*joinBatch {
		t.Fatalf("emit called %d times after cancel at 10", calls)
	}
}

func TestJoinBadOptions(t *testing.T) {
	tests := []struct {
		name string
		k    int
		opt  JoinOptions
		want error
	}{
		{"negative k", -1, JoinOptions{}, ErrDistance},
		{"k=64", 64, JoinOptions{}, ErrDistance},
		{"plan too weak", 4, JoinOptions{Plan: &Seeds4x16}, ErrDistance},
		{"invalid plan", 1, JoinOptions{Plan: &Plan{K: 1, Blocks: []int{32, 32}, Tables: [][]int{{0, 1}}}}, ErrPlan},
		{"negative workers", 1, JoinOptions{Workers: -1}, ErrOptions},
	}
	for _, tt := range tests {
		err := Join(context.Background(), []uint64{1, 2}, tt.k, tt.opt, func(Pair) error { return nil })
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
		if _, err := Clusters(context.Background(), []uint64{1, 2}, tt.k, tt.opt); !errors.Is(err, tt.want) {
			t.Errorf("%s: Clusters got %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestJoinEmpty(t *testing.T) {
	for _, fps := range [][]uint64{nil, {42}} {
		if got := collectJoin(t, fps, 3, JoinOptions{}); len(got) != 0 {
			t.Errorf("Join(%v) = %v, want no pairs", fps, got)
		}
	}
}

func TestPlanJoin(t *testing.T) {
	for _, n := range []int{0, 1000, 1_000_000, 10_000_000, 100_000_000} {
		for k := 0; k <= 8; k++ {
			e := PlanJoin(n, k)
			if err := e.Plan.Validate(); err != nil || e.Plan.K != k {
				t.Fatalf("PlanJoin(%d, %d) = %v: %v", n, k, e.Plan, err)
			}
		}
	}
	if got := len(PlanJoin(10_000_000, 3).Plan.Blocks); got < 5 || got > 6 {
		t.Errorf("PlanJoin(10M, 3) uses %d blocks, want 5 or 6", got)
	}
}

// refJoin is an independent reference for inputs too large for brute force:
// per table, sort by key, compare runs, and drop repeats with a set (the
// method of seomoz/simhash-cpp's find_all).
func refJoin(fps []uint64, k int, p Plan) []Pair {
	seen := make(map[[2]int]bool)
	var ps []Pair
	idx := make([]int, len(fps))
	for t := range p.Tables {
		m := p.KeyMask(t)
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int {
			if x, y := fps[a]&m, fps[b]&m; x != y {
				if x < y {
					return -1
				}
				return 1
			}
			return a - b
		})
		for s := 0; s < len(idx); {
			e := s + 1
			for e < len(idx) && fps[idx[e]]&m == fps[idx[s]]&m {
				e++
			}
			for a := s; a < e; a++ {
				for b := a + 1; b < e; b++ {
					i, j := idx[a], idx[b]
					if d := bits.OnesCount64(fps[i] ^ fps[j]); d <= k && !seen[[2]int{i, j}] {
						seen[[2]int{i, j}] = true
						ps = append(ps, Pair{i, j, d})
					}
				}
			}
			s = e
		}
	}
	sortPairs(ps)
	return ps
}

func TestJoinMatchesReferenceLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	fps := plantedFingerprints(rng, 40_000, 5)
	for _, k := range []int{0, 3, 5} {
		want := refJoin(fps, k, PlanJoin(len(fps), k).Plan)
		for _, opt := range []JoinOptions{{Workers: 2}, {Workers: 2, bucketSize: 64}, {Workers: 3, bucketSize: 16, finalBits: 3}} {
			t.Run(fmt.Sprintf("k=%d/bucket=%d/final=%d", k, opt.bucketSize, opt.finalBits), func(t *testing.T) {
				got := collectJoin(t, fps, k, opt)
				if !slices.Equal(got, want) {
					t.Fatalf("got %d pairs, want %d\n got  %v\n want %v", len(got), len(want), head(got), head(want))
				}
			})
		}
	}
}

// manyCopies returns fingerprints with large runs of identical values and of
// near-identical values, as duplicated corpora have.
func manyCopies(rng *rand.Rand) []uint64 {
	var fps []uint64
	for range 4 {
		base := rng.Uint64()
		for range 150 {
			fps = append(fps, base)
		}
		for range 60 {
			fps = append(fps, base^1<<rng.IntN(64)^1<<rng.IntN(64))
		}
	}
	for range 300 {
		fps = append(fps, rng.Uint64())
	}
	rng.Shuffle(len(fps), func(i, j int) { fps[i], fps[j] = fps[j], fps[i] })
	return fps
}

func TestJoinManyCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	fps := manyCopies(rng)
	for _, k := range []int{0, 2, 4} {
		want := brutePairs(fps, k)
		for _, bucket := range []int{0, 16} {
			for _, workers := range []int{1, 2} {
				t.Run(fmt.Sprintf("k=%d/bucket=%d/workers=%d", k, bucket, workers), func(t *testing.T) {
					got := collectJoin(t, fps, k, JoinOptions{Workers: workers, bucketSize: bucket, finalBits: 4 * workers})
					if !slices.Equal(got, want) {
						t.Fatalf("got %d pairs, want %d", len(got), len(want))
					}
				})
			}
		}
	}
}

func TestJoinCanceledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fps := plantedFingerprints(rand.New(rand.NewPCG(1, 2)), 100_000, 3)
	called := false
	err := Join(ctx, fps, 3, JoinOptions{}, func(Pair) error { called = true; return nil })
	if !errors.Is(err, context.Canceled) || called {
		t.Fatalf("got err %v, emit called %v; want context.Canceled and no call", err, called)
	}
	if _, err := Clusters(ctx, fps, 3, JoinOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Clusters: got err %v, want context.Canceled", err)
	}
}

func TestJoinLargeK(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	fps := plantedFingerprints(rng, 150, 30)
	for _, k := range []int{12, 20, 32, 40, 63} {
		got := collectJoin(t, fps, k, JoinOptions{Workers: 2})
		if want := brutePairs(fps, k); !slices.Equal(got, want) {
			t.Errorf("k=%d: got %d pairs, want %d", k, len(got), len(want))
		}
	}
}

// TestJoinIdenticalCount checks that m copies of one fingerprint make each of
// their m(m-1)/2 pairs exactly once, whatever the plan.
func TestJoinIdenticalCount(t *testing.T) {
	const m = 1000
	fps := make([]uint64, m)
	for i := range fps {
		fps[i] = 0x5555aaaa5555aaaa
	}
	for _, p := range []*Plan{nil, &Seeds4x16, &Manku20} {
		seen := make(map[Pair]bool)
		err := Join(context.Background(), fps, 3, JoinOptions{Plan: p}, func(q Pair) error {
			if q.A >= q.B || q.Distance != 0 || seen[q] {
				return fmt.Errorf("bad or repeated pair %v", q)
			}
			seen[q] = true
			return nil
		})
		if err != nil || len(seen) != m*(m-1)/2 {
			t.Errorf("plan %v: err %v, %d pairs, want %d", p, err, len(seen), m*(m-1)/2)
		}
	}
}
