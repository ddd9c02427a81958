package dedup

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/rule"
)

// greedyCandidates is the candidate stage of ClusterGreedy: collect the
// candidate pairs, match every twin group's lead against the kept set of
// earlier runs (incremental mode), then run the keep-first rule over the
// pairs in priority order.
func (r *runner) greedyCandidates(ctx context.Context, lsh *minhash.LSH) error {
	d := r.d
	n := d.len()
	pairs := r.exactPairs
	r.exactPairs = nil
	count := 0
	if r.bands == nil {
		err := r.candidatePairs(ctx, lsh, func(a, b int) error {
			pairs = append(pairs, rule.PackPair(a, b))
			if count++; count&4095 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				r.progress(Progress{Stage: "candidates", Docs: int64(count)})
			}
			return nil
		})
		if err != nil {
			return err
		}
		r.cand.Candidates.Store(int64(count))
	}

	// Priority: order[p] is the document at position p, rank its inverse;
	// nil for input order. lead(g) is the first member of twin group g (by
	// its first document read) in priority order: g itself in input order.
	order := r.priority()
	var rank, leadOf []int32
	lead := func(g int32) int32 {
		if leadOf == nil {
			return g
		}
		return leadOf[g]
	}
	if order != nil {
		rank = make([]int32, n)
		for p, i := range order {
			rank[i] = int32(p)
		}
		leadOf = make([]int32, n)
		for i := range leadOf {
			leadOf[i] = -1
		}
		for _, i := range order {
			if g := d.first.get(int(i)); leadOf[g] < 0 {
				leadOf[g] = i
			}
		}
		r.leadOf = leadOf
		for j, p := range pairs {
			a, b := lead(int32(uint32(p))), lead(int32(p>>32))
			pairs[j] = rule.PackPair(int(rank[a]), int(rank[b]))
		}
	}
	pos := func(i int32) int32 {
		if rank == nil {
			return i
		}
		return rank[i]
	}
	doc := func(p int) int {
		if order == nil {
			return p
		}
		return int(order[p])
	}
	rule.SortPairs(pairs)

	// Leads that duplicate a document kept by an earlier run.
	var removed []bool
	if r.kept != nil {
		r.stored = make([]rule.KeptMatch, n)
		r.storedOK = make([]bool, n)
		if err := r.matchKept(ctx, lead); err != nil {
			return err
		}
		removed = make([]bool, n)
		for i := range n {
			if r.storedOK[i] {
				removed[pos(int32(i))] = true
			}
		}
	}

	st := &r.cand
	feat := func(p int) rule.Features { return r.feat(doc(p)) }
	var pre func(p int) *rule.Prefilter
	// The members' prefilters (and, when the first pass's sets were
	// dropped, their sets), once the candidates name them (members.go).
	loadMembers := func(b *buckets) error {
		if r.opt.Verify != rule.VerifyJaccard {
			return nil
		}
		r.setMembers(pairs, b, doc)
		if err := r.loadMembers(ctx); err != nil {
			return err
		}
		pre = func(p int) *rule.Prefilter { return r.pre(doc(p)) }
		return nil
	}
	var keeper []int32
	if r.bands != nil {
		b, err := r.bands.group(r.opt.Workers, func(i int32) int32 { return pos(lead(i)) })
		if err != nil {
			return err
		}
		// The buckets are in memory now: the spilled keys' disk (~0.3 KB a
		// document) comes back before the outputs and OnKept, which may
		// write a store as large (neardup import).
		if err := r.bands.close(); err != nil {
			return fmt.Errorf("dedup: band keys: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// The pairs of buckets of two join the exact copies' pairs.
		if len(b.pairs) > 0 {
			pairs = append(pairs, b.pairs...)
			sortUint64(pairs, r.opt.Workers)
			pairs = slices.Compact(pairs)
			b.pairs = nil
		}
		r.sum.BandBuckets, r.sum.BandMemberships, r.sum.BandPairs = int64(len(b.start)-1), int64(len(b.of)), int64(len(pairs))
		if err := loadMembers(b); err != nil {
			return err
		}
		if keeper, err = keepFirstBuckets(ctx, r.rule, n, feat, pre, b, pairs, removed, st); err != nil {
			return err
		}
		count = int(st.Candidates.Load())
	} else {
		if err := loadMembers(nil); err != nil {
			return err
		}
		keeper = r.rule.KeepFirstCounted(n, feat, pre, pairs, removed, st)
		st.Skipped.Store(int64(count) - st.Verified.Load() - st.Rejected.Load() - st.Prefiltered.Load())
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	// Back to documents; twins share their lead's verdict.
	r.keeper = make([]int32, n)
	for i := range n {
		l := lead(d.first.get(int(i)))
		k := keeper[pos(l)]
		switch {
		case k < 0:
			r.keeper[i] = -1
			if i != int(l) {
				r.stored[i], r.storedOK[i] = r.stored[l], true
			}
		case int(k) == int(pos(l)):
			r.keeper[i] = l
		default:
			r.keeper[i] = int32(doc(int(k)))
		}
	}
	r.progress(Progress{Stage: "candidates", Docs: int64(count), Done: true})
	return nil
}

// priority returns the documents in keep-policy order, nil for input order.
func (r *runner) priority() []int32 {
	if r.opt.Keep == KeepFirst {
		return nil
	}
	order := make([]int32, r.d.len())
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		switch {
		case r.better(int(a), int(b)):
			return -1
		case r.better(int(b), int(a)):
			return 1
		}
		return cmp.Compare(a, b)
	})
	return order
}

// matchKept matches the lead of every twin group against the kept set, in
// parallel: the kept documents all come before the batch in priority, so
// their verdicts do not depend on the batch's.
func (r *runner) matchKept(ctx context.Context, lead func(g int32) int32) error {
	d := r.d
	n := d.len()
	var leads []int32
	for i := range n {
		if int(d.first.get(i)) == i {
			leads = append(leads, lead(int32(i)))
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, r.opt.Workers)
	for w := range r.opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := w; j < len(leads); j += r.opt.Workers {
				if j&1023 == 0 && ctx.Err() != nil {
					errs[w] = ctx.Err()
					return
				}
				i := leads[j]
				f := r.feat(int(i))
				m, ok, err := r.kept.Match(&f)
				if err != nil {
					errs[w] = err
					return
				}
				r.stored[i], r.storedOK[i] = m, ok
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
