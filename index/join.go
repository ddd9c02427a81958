package index

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
)

// A Pair is two positions in a self-join's input whose fingerprints are within
// k bits: A < B, and Distance is their Hamming distance.
type Pair struct {
	A, B     int
	Distance int
}

// JoinOptions tune Join and Clusters. The zero value chooses everything.
type JoinOptions struct {
	// Plan is the table layout; it must be exact at k or above (Plan.K >= k).
	// Nil: PlanJoin's choice for len(fps) and k.
	Plan *Plan
	// Workers is the number of goroutines that sort and scan. 0: GOMAXPROCS.
	Workers int

	// bucketSize is a test hook: the target number of entries per first-level
	// bucket. 0: 4096.
	bucketSize int
	// finalBits is a test hook: the most bits the last radix level of a
	// bucket sorts. 0: joinMaxFinalBits.
	finalBits int
}

// maxJoin is the largest input: positions are stored in 32 bits.
const maxJoin = math.MaxInt32

// joinBatch is the number of pairs workers hand to the emitting goroutine at once.
const joinBatch = 4096

func joinErrTooMany(n int) error {
	return fmt.Errorf("%w: self-join of %d fingerprints, at most %d", ErrFull, n, maxJoin)
}

// EnsureDefaults fills in the zero fields for a join of n fingerprints at
// distance k.
func (o *JoinOptions) EnsureDefaults(n, k int) {
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Plan == nil {
		p := PlanJoin(n, k).Plan
		o.Plan = &p
	}
}

// Validate checks the options for a join at distance k. Errors wrap
// ErrDistance for a k outside 0..63 or above the plan's K, ErrPlan for an
// invalid plan and ErrOptions for negative workers.
func (o *JoinOptions) Validate(k int) error {
	if k < 0 || k > 63 {
		// A plan's tables need at least one key bit, so the largest exact
		// distance is 63 (64 one-bit blocks); at 64 every pair matches.
		return fmt.Errorf("%w: self-join at k=%d, want 0 to 63", ErrDistance, k)
	}
	if o.Workers < 0 {
		return fmt.Errorf("%w: negative workers %d", ErrOptions, o.Workers)
	}
	if o.Plan != nil {
		if err := o.Plan.Validate(); err != nil {
			return err
		}
		if o.Plan.K < k {
			return fmt.Errorf("%w: plan is exact up to k=%d, join asks for k=%d", ErrDistance, o.Plan.K, k)
		}
	}
	return nil
}

// JoinEstimate is PlanJoin's account of a plan's cost for a self-join.
type JoinEstimate struct {
	Plan Plan
	// Entries is the number of table entries sorted: tables x N.
	Entries float64
	// Comparisons is the expected number of candidate pairs compared, for
	// uniformly random fingerprints: the sum over tables of N^2/2^(key bits+1).
	Comparisons float64
	// Cost combines both in nanoseconds of one core on the project machine
	// (about 30 ns per entry and 5 per comparison, measured at 1M and 10M);
	// it ranks plans and roughly predicts CPU time.
	Cost float64
	// Bytes is the memory the join needs beyond the input: 12 bytes per
	// fingerprint for one table's entries, reused across tables.
	Bytes float64
}

// PlanJoin chooses the block plan for a self-join of n fingerprints at
// distance k: among BlockPlan(k, b) for b > k, the one of least estimated cost.
// Sorting costs grow with the number of tables, C(b, k), and comparisons
// shrink with the key bits, about 64(b-k)/b, so the cost has one minimum.
func PlanJoin(n, k int) JoinEstimate {
	k = min(max(k, 0), 63) // Validate rejects other k
	var best JoinEstimate
	for b := k + 1; b <= 64; b++ {
		if tables := joinBinomial(b, k); best.Plan.Tables != nil && 30*tables*float64(max(n, 1)) > best.Cost {
			break // sorting alone costs more than the best plan so far
		}
		p, err := BlockPlan(k, b)
		if err != nil {
			break
		}
		e := EstimateJoin(p, n)
		if best.Plan.Tables == nil || e.Cost < best.Cost {
			best = e
		}
	}
	return best
}

func joinBinomial(n, k int) float64 {
	c := 1.0
	for i := range k {
		c = c * float64(n-i) / float64(i+1)
	}
	return c
}

// EstimateJoin estimates the work of a self-join of n fingerprints with plan p.
func EstimateJoin(p Plan, n int) JoinEstimate {
	e := JoinEstimate{Plan: p}
	N := float64(n)
	for t := range p.Tables {
		e.Entries += N
		e.Comparisons += N * N / math.Ldexp(2, p.KeyBits(t))
	}
	e.Cost = 30*e.Entries + 5*e.Comparisons
	e.Bytes = 12 * N
	return e
}

// String describes the estimate in one line.
func (e JoinEstimate) String() string {
	return fmt.Sprintf("%v; %.3g sorted entries, %.3g expected comparisons, about %.3g s of CPU, %.0f MiB", e.Plan, e.Entries, e.Comparisons, e.Cost/1e9, e.Bytes/(1<<20))
}

// Join calls emit once for every pair of positions in fps whose fingerprints
// are within k bits (Hamming distance at most k), exactly: no pair beyond k,
// none within k missing, none twice. emit is called from Join's goroutine, one
// pair at a time, in no particular order; if it returns an error Join stops
// and returns that error. Join also stops, returning ctx.Err(), when ctx is
// done (it checks every 65536 entries and every 1024 pairs emitted).
//
// For each table of the plan, Join radix-partitions (fingerprint, position)
// entries by the table's key and compares entries with equal keys; a pair is
// emitted by the first table whose key it agrees on. See join_engine.go for
// the design and PlanJoin for the choice of tables. Work is spread over
// opt.Workers goroutines within each table.
//
// Memory: 12 bytes per fingerprint for one table's entries, plus per worker
// scratch the size of the largest first-level bucket (about 12n/256 bytes for
// well-spread fingerprints, up to 12n when most are identical), plus a few
// batches of pairs in flight. Pairs are never collected. At most
// math.MaxInt32 fingerprints.
//
// The output can be large: m identical fingerprints alone make m(m-1)/2
// pairs (100,000 copies make five billion), which Join emits one by one in
// time proportional to their number (the comparisons behind them cost only
// O(m log m)). Use Clusters when the components are what matter: it joins
// identical fingerprints in linear time.
func Join(ctx context.Context, fps []uint64, k int, opt JoinOptions, emit func(Pair) error) error {
	return join(ctx, fps, k, opt, true, emit)
}

// join runs the self-join. With full false, pairs are only guaranteed to
// connect the same components as the full output: a set of identical
// fingerprints comes as a star from its first copy rather than all its pairs,
// and two sets of identical fingerprints within k bits as one pair.
func join(ctx context.Context, fps []uint64, k int, opt JoinOptions, full bool, emit func(Pair) error) error {
	if len(fps) > maxJoin {
		return joinErrTooMany(len(fps))
	}
	if err := opt.Validate(k); err != nil {
		return err
	}
	if len(fps) < 2 {
		return ctx.Err()
	}
	opt.EnsureDefaults(len(fps), k)
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	j := &joiner{
		ctx:     inner,
		fps:     fps,
		k:       k,
		plan:    opt.Plan,
		workers: opt.Workers,
		full:    full,
		bucket:  cmp.Or(opt.bucketSize, 4096),
		final:   cmp.Or(opt.finalBits, joinMaxFinalBits),
		out:     make(chan []Pair, 2*opt.Workers),
		free:    make(chan []Pair, 4*opt.Workers),
	}
	go j.run()
	var err error
	for batch := range j.out {
		if err == nil {
			for i, p := range batch {
				if i%1024 == 0 {
					if err = ctx.Err(); err != nil {
						break
					}
				}
				if err = emit(p); err != nil {
					break
				}
			}
			if err != nil {
				cancel() // the workers stop; keep draining until they close out
			}
		}
		select {
		case j.free <- batch:
		default:
		}
	}
	if err != nil {
		return err
	}
	if j.failed.Load() {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}
